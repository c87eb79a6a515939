"""The JAX PPO's networks: observation encoders (``flat``, ``set``, ``kinds``) around a
memax memory model, and the latch initialisation of a ``GRU`` memory.

Every network maps one sequence (observations [T, F], episode start flags [T], legal
masks [T, A]) to recurrent states, masked logits and values; ``step`` is one step of it.
:func:`make_policy` builds the one a :class:`~memtab_env.jax.ppo.config.PPOConfig` names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import memtab_env.jax as mj
from memtab_env.errors import InvalidOptionError
from memtab_env.jax.ppo.config import PPOConfig

#: the memax models (``get_residual_memory_model`` names) the tests check in every encoder:
#: the whole-sequence replay of an update equals step-by-step play, resets included
MEMORY_MODELS = ("MLP", "Stack", "LSTM", "GRU", "MGU", "Elman", "LinearRNN", "LRU", "S6", "FFM",
                 "FART", "FWP", "DeltaNet", "DeltaProduct", "GDN", "Attention")

#: fields of the networks that are constants, not weights (held out of the gradient)
CONSTANTS = ("scale", "off_diagonal")


def count_parameters(policy: Any) -> int:
    """The trainable parameters of a policy: every floating-point array but the
    constants (:data:`CONSTANTS`: observation scaling, masks)."""
    constants = sum(getattr(policy, name).size for name in CONSTANTS if hasattr(policy, name))
    return sum(x.size for x in jax.tree.leaves(eqx.filter(policy, eqx.is_inexact_array))) - constants


def _memax_model(config: PPOConfig, input_size: int, key: jax.Array) -> Any:
    """The memax residual memory model ``config`` names, reading ``input_size`` values."""
    from memax.equinox.train_utils import get_residual_memory_model

    kwargs = {config.memory_model: dict(config.memory_kwargs)} if config.memory_kwargs else {}
    size = config.recurrent_size
    try:
        return get_residual_memory_model(
            model_name=config.memory_model, input=input_size, hidden=size, output=size,
            num_layers=config.num_layers, layer_kwargs=kwargs, key=key)
    except KeyError:
        raise InvalidOptionError(f"memax has no memory model {config.memory_model!r}") from None


def _carry_per_position(memory: Any, positions: int) -> Any:
    """The initial recurrent state of one memory per position (shared weights)."""
    return jax.vmap(lambda _: memory.initialize_carry())(jnp.arange(positions))


def _set_heads(policy: Any, z: jax.Array, glob: jax.Array, masks: jax.Array
               ) -> tuple[jax.Array, jax.Array]:
    """Masked logits (one per token, ``policy.logit``) and values (``policy.critic`` on the
    pooled tokens and the global fields) of token embeddings ``z`` [T, P, D]."""
    logits = jnp.where(masks, jax.vmap(jax.vmap(policy.logit))(z)[..., 0], -1e9)
    values = jax.vmap(policy.critic)(jnp.concatenate([z.mean(axis=1), glob], axis=-1))[:, 0]
    return logits, values


def _step_per_position(policy: Any, h: Any, obs: jax.Array, start: jax.Array, mask: jax.Array
                       ) -> tuple[Any, jax.Array, jax.Array]:
    """One step of a network with one memory per position: the latest states, logits, value."""
    hs, logits, values = policy(h, obs[None], start[None], mask[None])
    return jax.vmap(policy.memory.latest_recurrent_state)(hs), logits[0], values[0]


class ActorCritic(eqx.Module):
    """Observation scaling, a memax memory model, and linear actor and critic heads."""

    scale: jax.Array
    memory: Any
    actor: eqx.nn.Linear
    critic: eqx.nn.Linear

    def __init__(self, obs_high: np.ndarray, num_actions: int, config: PPOConfig, *,
                 key: jax.Array) -> None:
        mem_key, actor_key, critic_key = jax.random.split(key, 3)
        size = config.recurrent_size
        self.scale = jnp.asarray(1.0 / np.maximum(np.abs(obs_high), 1), jnp.float32)
        self.memory = _memax_model(config, obs_high.size, mem_key)
        self.actor = eqx.nn.Linear(size, num_actions, key=actor_key)
        self.critic = eqx.nn.Linear(size, 1, key=critic_key)

    def initial_state(self) -> Any:
        return self.memory.initialize_carry()

    def __call__(self, h: Any, obs: jax.Array, starts: jax.Array, masks: jax.Array
                 ) -> tuple[Any, jax.Array, jax.Array]:
        """One sequence: ``obs`` [T, F], ``starts`` bool[T], ``masks`` bool[T, A] ->
        (recurrent states, masked logits [T, A], values [T])."""
        hs, z = self.memory(h, (obs.astype(jnp.float32) * jax.lax.stop_gradient(self.scale), starts))
        z = jax.nn.leaky_relu(z)
        logits = jax.vmap(self.actor)(z)
        logits = jnp.where(masks, logits, -1e9)
        values = jax.vmap(self.critic)(z)[:, 0]
        return hs, logits, values

    def step(self, h: Any, obs: jax.Array, start: jax.Array, mask: jax.Array
             ) -> tuple[Any, jax.Array, jax.Array]:
        """One step: the latest recurrent state, logits [A] and value."""
        hs, logits, values = self(h, obs[None], start[None], mask[None])
        return self.memory.latest_recurrent_state(hs), logits[0], values[0]


class SetActorCritic(eqx.Module):
    """Position-equivariant: every position is a token (its ``status`` and ``card`` fields
    of the observation, the other fields broadcast to all), each token has a memory of
    its own (one memax model, shared weights, vmapped over positions), then Deep Sets
    layers (``h_p += relu(W_self h_p + W_pool mean_q h_q)``) give one logit per position and
    a value from the pooled tokens. Games plug in through their encoder's fields."""

    scale: jax.Array
    token_index: jax.Array
    global_index: jax.Array
    embed: eqx.nn.Linear
    memory: Any
    self_layers: list
    pool_layers: list
    logit: eqx.nn.Linear
    critic: eqx.nn.MLP

    def __init__(self, encoder: Any, num_actions: int, config: PPOConfig, *, key: jax.Array) -> None:
        high = np.maximum(np.abs(encoder.low), np.abs(encoder.high)).astype(np.float32)
        self.scale = jnp.asarray(1.0 / np.maximum(high, 1), jnp.float32)
        positions = encoder.fields[0].shape[0]
        if num_actions != positions:
            raise InvalidOptionError("encoder 'set' needs one action per position")
        tokens = []
        for name in ("status", "card"):
            a, b = encoder.offsets[name]
            tokens.append(np.arange(a, b).reshape(positions, -1))
        token_index = np.concatenate(tokens, axis=1)
        self.token_index = jnp.asarray(token_index)
        self.global_index = jnp.asarray(np.setdiff1d(np.arange(encoder.size), token_index.ravel()))
        size = config.recurrent_size
        keys = jax.random.split(key, 5 + 2 * config.set_layers)
        self.embed = eqx.nn.Linear(token_index.shape[1] + self.global_index.size, size, key=keys[0])
        self.memory = _memax_model(config, size, keys[1])
        self.self_layers = [eqx.nn.Linear(size, size, key=k) for k in keys[5:5 + config.set_layers]]
        self.pool_layers = [eqx.nn.Linear(size, size, use_bias=False, key=k)
                            for k in keys[5 + config.set_layers:]]
        self.logit = eqx.nn.Linear(size, 1, key=keys[2])
        self.critic = eqx.nn.MLP(size + self.global_index.size, 1, size, 1, key=keys[3])

    def initial_state(self) -> Any:
        return _carry_per_position(self.memory, self.token_index.shape[0])

    def __call__(self, h: Any, obs: jax.Array, starts: jax.Array, masks: jax.Array
                 ) -> tuple[Any, jax.Array, jax.Array]:
        x = obs.astype(jnp.float32) * jax.lax.stop_gradient(self.scale)  # [T, F]
        glob = x[:, self.global_index]  # [T, G]
        tok = x[:, self.token_index]  # [T, P, S + K]
        tok = jnp.concatenate([tok, jnp.broadcast_to(glob[:, None], tok.shape[:2] + glob.shape[1:])],
                              axis=-1)
        z = jax.nn.relu(jax.vmap(jax.vmap(self.embed))(tok))  # [T, P, D]
        # one memory per position: sequences over time, vmapped over positions
        hs, m = jax.vmap(self.memory, in_axes=(0, (1, None)), out_axes=(0, 1))(h, (z, starts))
        z = z + m
        for w_self, w_pool in zip(self.self_layers, self.pool_layers, strict=True):
            pooled = jax.vmap(w_pool)(z.sum(axis=1) / z.shape[1])  # [T, D]
            z = z + jax.nn.relu(jax.vmap(jax.vmap(w_self))(z) + pooled[:, None])
        return (hs, *_set_heads(self, z, glob, masks))

    def step(self, h: Any, obs: jax.Array, start: jax.Array, mask: jax.Array
             ) -> tuple[Any, jax.Array, jax.Array]:
        return _step_per_position(self, h, obs, start, mask)


def latch_gru(memory: Any, card: Sequence[int], gain: float = 12.0, *, key: jax.Array) -> Any:
    """memax's residual ``GRU`` model ``memory`` (input ``x``) reset to start as a latch
    over the inputs ``card``: its input map copies ``x`` into the first recurrent units,
    the first layer's update gate opens only when a ``card`` input is on (weight ``gain``,
    bias ``-gain / 2``, no recurrent term: it keeps ``1 - sigmoid(-gain / 2)`` of its state
    per step otherwise) and its candidate is a random pattern of the card shown (unit
    normal weights, no recurrent term), so each kind writes its own. The same idea as the
    torch slot memory's latch (``agents.recurrent_policy.SlotLstm``)."""
    from memax.equinox.set_actions.gru import GRUMagma

    cell = memory.layers[0].algebra.algebra
    if not isinstance(cell, GRUMagma):
        raise InvalidOptionError(f"latch_gru needs a GRU memory, got {type(cell).__name__}")
    size, width = memory.map_in.out_features, memory.map_in.in_features
    if width > size:
        raise InvalidOptionError(f"a latch copies its {width} inputs into the recurrent units: "
                                 f"recurrent_size must be >= {width}, got {size}")
    on = jnp.zeros(size, jnp.float32).at[jnp.asarray(list(card))].set(1.0)  # the card inputs
    w_z = jnp.broadcast_to(gain * on, (size, size))
    w_h = jax.random.normal(key, (size, size), jnp.float32) * on  # jnp: the key may be traced
    zeros = jnp.zeros((size, size), jnp.float32)
    return eqx.tree_at(
        lambda m: (m.map_in.weight, m.map_in.bias, m.layers[0].algebra.algebra.W_z.weight,
                   m.layers[0].algebra.algebra.W_z.bias, m.layers[0].algebra.algebra.U_z.weight,
                   m.layers[0].algebra.algebra.W_h.weight, m.layers[0].algebra.algebra.W_h.bias,
                   m.layers[0].algebra.algebra.U_h.weight),
        memory,
        (jnp.eye(size, width, dtype=jnp.float32), jnp.zeros(size, jnp.float32), w_z,
         jnp.full(size, -gain / 2, jnp.float32), zeros, w_h,
         jnp.zeros(size, jnp.float32), zeros))


class KindSetActorCritic(eqx.Module):
    """``encoder: kinds``: the set network with the card kinds made explicit, the JAX
    counterpart of the torch ``agents.set_policy.MemTabSetNet`` with its slot memory.

    Each position's token (status one-hot, card one-hot, the global fields broadcast) is
    embedded; each position has a memax memory of its own (shared weights), which reads
    only that position's status and card (the global fields change at every flip and would
    drive every memory at every step), optionally started as a latch (``latch_init``,
    :func:`latch_gru`). A readout of the memory gives the kind the position is believed to
    hold (one more class: "not known"), used in place of the card where the position is
    face down and the observation shows no card (the readout the recall loss trains,
    :attr:`PPOConfig.recall_coef`). From these kinds come the relations pair
    finding needs and a plain set layer can only approximate: messages between the
    positions of one kind (``same = kind @ kind.T``, diagonal zeroed) and, where the game
    has tableaux, which seat's tableau holds the position's kind. Then ``set_layers``
    residual layers ``h += relu(W_self x + W_kind same @ x + W_pool mean_q x_q)`` with
    ``x`` the layer-normalised ``h``; one logit per position, the value from the pooled
    tokens and the global fields."""

    scale: jax.Array
    status_index: jax.Array
    card_index: jax.Array
    global_index: jax.Array
    tableaux_index: jax.Array | None
    off_diagonal: jax.Array
    embed: eqx.nn.Linear
    memory: Any
    readout: eqx.nn.Linear
    kind_embed: eqx.nn.Linear
    norms: list
    self_layers: list
    kind_layers: list
    pool_layers: list
    logit: eqx.nn.Linear
    critic: eqx.nn.MLP

    def __init__(self, encoder: Any, num_actions: int, config: PPOConfig, *, key: jax.Array) -> None:
        layout = encoder.token_layout()
        positions, kinds = layout["positions"], layout["kinds"]
        if num_actions != positions:
            raise InvalidOptionError("encoder 'kinds' needs one action per position")
        high = np.maximum(np.abs(encoder.low), np.abs(encoder.high)).astype(np.float32)
        self.scale = jnp.asarray(1.0 / np.maximum(high, 1), jnp.float32)
        status = np.arange(*layout["status"]).reshape(positions, -1)
        card = np.arange(*layout["card"]).reshape(positions, kinds)
        self.status_index, self.card_index = jnp.asarray(status), jnp.asarray(card)
        self.global_index = jnp.asarray(np.setdiff1d(np.arange(encoder.size),
                                                     np.concatenate([status.ravel(), card.ravel()])))
        seats = 0
        self.tableaux_index = None
        if layout.get("tableaux") is not None:
            seats = layout["num_players"]
            self.tableaux_index = jnp.asarray(np.arange(*layout["tableaux"]).reshape(seats, kinds))
        self.off_diagonal = jnp.asarray(1.0 - np.eye(positions, dtype=np.float32))
        size, layers = config.recurrent_size, config.set_layers
        keys = list(jax.random.split(key, 7 + 3 * layers))
        self.embed = eqx.nn.Linear(status.shape[1] + kinds + self.global_index.size, size, key=keys[0])
        self.memory = _memax_model(config, status.shape[1] + kinds, keys[1])
        if config.latch_init:
            self.memory = latch_gru(self.memory, range(status.shape[1], status.shape[1] + kinds),
                                    key=keys[-1])
        self.readout = eqx.nn.Linear(size, kinds + 1, key=keys[2])
        self.kind_embed = eqx.nn.Linear(kinds + seats, size, key=keys[3])
        self.norms = [eqx.nn.LayerNorm(size) for _ in range(layers)]
        self.self_layers = [eqx.nn.Linear(size, size, key=k) for k in keys[6:6 + layers]]
        self.kind_layers = [eqx.nn.Linear(size, size, use_bias=False, key=k)
                            for k in keys[6 + layers:6 + 2 * layers]]
        self.pool_layers = [eqx.nn.Linear(size, size, use_bias=False, key=k)
                            for k in keys[6 + 2 * layers:6 + 3 * layers]]
        self.logit = eqx.nn.Linear(size, 1, key=keys[4])
        self.critic = eqx.nn.MLP(size + self.global_index.size, 1, size, 1, key=keys[5])

    def initial_state(self) -> Any:
        return _carry_per_position(self.memory, self.card_index.shape[0])

    def __call__(self, h: Any, obs: jax.Array, starts: jax.Array, masks: jax.Array
                 ) -> tuple[Any, jax.Array, jax.Array]:
        return self.forward(h, obs, starts, masks)[:3]

    def shown_kinds(self, obs: jax.Array, start: jax.Array, shown: jax.Array) -> jax.Array:
        """int8[P]: the kind one game's observations last showed at each position in this
        episode, -1 where none did: ``shown`` (the same before this step) forgotten at an
        episode's ``start``, then updated with the cards ``obs`` shows. The recall loss's
        targets (:attr:`PPOConfig.recall_coef`)."""
        card = obs[self.card_index]  # [P, K], one-hot where a card is shown
        shown = jnp.where(start, jnp.int8(-1), shown)
        return jnp.where(card.any(axis=-1), jnp.argmax(card, axis=-1), shown).astype(jnp.int8)

    def forward(self, h: Any, obs: jax.Array, starts: jax.Array, masks: jax.Array
                ) -> tuple[Any, jax.Array, jax.Array, jax.Array, jax.Array]:
        """:meth:`__call__`'s recurrent states, logits and values, plus what the recall
        loss reads: the readout's logits [T, P, K + 1] (the last class "not known") and
        where the network asks for them, bool[T, P] (face down, no card shown)."""
        x = obs.astype(jnp.float32) * jax.lax.stop_gradient(self.scale)  # [T, F]
        status, card = x[:, self.status_index], x[:, self.card_index]  # [T, P, S], [T, P, K]
        glob = x[:, self.global_index]  # [T, G]
        per_token = jnp.broadcast_to(glob[:, None], card.shape[:2] + glob.shape[1:])
        z = jax.nn.relu(jax.vmap(jax.vmap(self.embed))(
            jnp.concatenate([status, card, per_token], axis=-1)))  # [T, P, D]
        own = jnp.concatenate([status, card], -1)  # a memory reads only its own position
        hs, m = jax.vmap(self.memory, in_axes=(0, (1, None)), out_axes=(0, 1))(h, (own, starts))
        z = z + m
        recall = jax.vmap(jax.vmap(self.readout))(m)  # [T, P, K + 1]
        believed = jax.nn.softmax(recall, axis=-1)[..., :-1]
        unseen = status[..., :1] * (1.0 - card.sum(axis=-1, keepdims=True))
        kind = card + unseen * believed  # [T, P, K]
        features = [kind]
        if self.tableaux_index is not None:  # whose tableau holds this position's kind
            features.append(jnp.einsum("tpk,tnk->tpn", kind, x[:, self.tableaux_index]))
        z = z + jax.nn.relu(jax.vmap(jax.vmap(self.kind_embed))(jnp.concatenate(features, -1)))
        # messages from the other positions of one kind: every position's, its own taken
        # off after the sum, so that positions alike get bit-identical messages (exact ties,
        # the same flip in a batch and alone); the mask is a constant, not a weight
        pair = jnp.einsum("tpk,tqk->tpq", kind, kind)  # [T, P, P]
        same = pair * (jax.lax.stop_gradient(self.off_diagonal) + jnp.eye(pair.shape[-1]))
        own_kind = jnp.einsum("tpk,tpk->tp", kind, kind)[..., None]  # [T, P, 1]
        for norm, w_self, w_kind, w_pool in zip(self.norms, self.self_layers, self.kind_layers,
                                                self.pool_layers, strict=True):
            y = jax.vmap(jax.vmap(norm))(z)
            mix = (jax.vmap(jax.vmap(w_self))(y)
                   + jax.vmap(jax.vmap(w_kind))(jnp.einsum("tpq,tqd->tpd", same, y) - own_kind * y)
                   + jax.vmap(w_pool)(y.mean(axis=1))[:, None])
            z = z + jax.nn.relu(mix)
        return (hs, *_set_heads(self, z, glob, masks), recall, unseen[..., 0] > 0)

    def step(self, h: Any, obs: jax.Array, start: jax.Array, mask: jax.Array
             ) -> tuple[Any, jax.Array, jax.Array]:
        return _step_per_position(self, h, obs, start, mask)


def make_view(config: PPOConfig, pool_policy: Any = None) -> mj.SingleAgentEnv:
    """The single-agent view of ``config`` (``pool`` opponents need the network)."""
    if config.opponents == "pool" and pool_policy is None:
        pool_policy = make_policy(config, mj.make_single_agent(
            config.env_id, learner_seat=config.learner_seat, **config.env_options))
    return mj.make_single_agent(config.env_id, opponents=config.opponents,
                                learner_seat=config.learner_seat, pool_policy=pool_policy,
                                **config.env_options)


def make_policy(config: PPOConfig, view: mj.SingleAgentEnv | None = None,
                key: jax.Array | None = None) -> ActorCritic:
    """The network ``config`` names, its weights drawn from ``key`` (default: the
    config's seed)."""
    view = view or make_view(config)
    key = jax.random.key(config.seed) if key is None else key
    game = view.env.game
    from memtab_env.registry import game_spec, load

    encoder = load(game_spec(game.name).encoder)(game.engine)
    if config.encoder == "set":
        return SetActorCritic(encoder, view.num_actions, config, key=key)
    if config.encoder == "kinds":
        return KindSetActorCritic(encoder, view.num_actions, config, key=key)
    return ActorCritic(np.maximum(np.abs(encoder.low), np.abs(encoder.high)).astype(np.float32),
                       view.num_actions, config, key=key)

