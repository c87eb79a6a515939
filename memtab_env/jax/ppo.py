"""PPO with memory, end to end in JAX (PureJaxRL style): environment, policy and update in
one jitted function per update, on the single-agent JAX view.

Memory models come from memax (``memory_model``: ``MLP`` for none, ``Stack`` for a window
of the last k inputs, ``LSTM``, ``GRU``, ``MGU``, ``LRU``, ``S6``, ``FFM``, ``FART``,
``Attention``, ...; any name of ``memax.equinox.train_utils.get_residual_memory_model``).
Recurrent policies are trained over the rollout's whole sequences, with the recurrent
state reset where an episode starts (memax's start flags) and the rollout's first state
carried from the previous rollout, as PureJaxRL's ``ppo_rnn.py`` does.

Usage::

    from memtab_env.jax.ppo import PPOConfig, train
    model, history = train(PPOConfig(memory_model="GRU", total_timesteps=200_000))

One update: ``num_steps`` steps of ``num_envs`` games (auto-reset, the learner's steps;
opponents play inside the view), generalised advantage estimates, then
``update_epochs`` epochs of ``num_minibatches`` minibatches (split over games, whole
sequences). Actions are sampled from the policy's logits with illegal flips masked out.

Checkpoints are data, not code: one zip holding the config as JSON and the weights as
equinox's leaf serialisation (:func:`save`, :func:`load`), no pickle;
``memtab_env.agents.make(path)`` plays one (:class:`JaxPPOAgent`).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import memtab_env.jax as mj
from memtab_env.errors import InvalidOptionError

CHECKPOINT_FORMAT = "memtab-jax-ppo/1"
ENCODERS = ("set", "kinds", "flat")


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Everything a run depends on (plain data: saved as JSON beside the weights)."""

    env_id: str = "MemTab-v0"
    """the JAX env id (``MemTab-v0`` or ``Pelmanism-v0``)"""
    env_options: dict[str, Any] = dataclasses.field(
        default_factory=lambda: {"num_players": 2, "memory": "none"})
    """options of ``memtab_env.jax.make_single_agent`` (game options, memory, reward)"""
    opponents: str = "random"
    """the built-in JAX opponents: ``random``, ``greedy``, or ``pool`` (self-play: frozen
    snapshots of the learner, one drawn per seat and episode)"""
    pool_size: int = 10
    """``pool``: the most recent snapshots kept"""
    snapshot_every: int = 10
    """``pool``: updates between two snapshots (the first is the initial network)"""
    learner_seat: int | str = "random"
    """the learner's seat, or ``random`` (drawn each episode)"""
    encoder: str = "set"
    """``set``: position tokens, a memory per position (shared weights) and set layers
    (equivariant logits); ``kinds``: ``set`` plus what the card kinds say (a kind each
    position's memory believes, messages between positions of one kind, whose tableau
    holds the kind), as the torch set policy of ``agents/set_policy.py``; ``flat``: one
    memory over the whole observation"""
    set_layers: int = 2
    """set layers (``encoder: set``)"""
    latch_init: bool = False
    """``encoder: kinds`` with a ``GRU`` memory: start each position's memory as a latch
    (:func:`latch_gru`): it writes when its position shows a card and keeps what it
    wrote otherwise; every weight stays trainable"""
    memory_model: str = "GRU"
    """memax model name (``MLP`` = no memory)"""
    memory_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    """extra layer options for memax (e.g. ``{"window_size": 4}`` for ``Stack``)"""
    recurrent_size: int = 32
    """width of the memory model (per position with ``encoder: set``)"""
    num_layers: int = 1
    """memory layers"""
    num_envs: int = 64
    """games stepped together"""
    num_steps: int = 32
    """rollout length per update"""
    total_timesteps: int = 1_000_000
    """learner steps in all"""
    learning_rate: float = 2.0e-3
    anneal_lr: bool = True
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    normalize_reward: bool = True
    """divide rewards by a running standard deviation of the discounted return (as
    gymnasium's ``NormalizeReward``), so one set of coefficients fits every reward scheme"""
    update_epochs: int = 4
    num_minibatches: int = 4
    seed: int = 0
    num_devices: int = 1
    """devices the games are sharded over (``jax.sharding``: each device steps
    ``num_envs / num_devices`` games, the weights are replicated and the gradients
    averaged by XLA); 0: every device"""

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // (self.num_envs * self.num_steps))

    def check(self) -> PPOConfig:
        """Raise :class:`InvalidOptionError` naming a bad field."""
        for name in ("num_envs", "num_steps", "total_timesteps", "recurrent_size", "num_layers",
                     "update_epochs", "num_minibatches", "pool_size", "snapshot_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"{name} must be a positive integer, got {value!r}")
        if self.encoder not in ENCODERS:
            raise InvalidOptionError(f"encoder must be one of {list(ENCODERS)}, got {self.encoder!r}")
        if isinstance(self.num_devices, bool) or not isinstance(self.num_devices, int) \
                or self.num_devices < 0:
            raise InvalidOptionError(f"num_devices must be 0 (every device) or a positive integer, "
                                     f"got {self.num_devices!r}")
        if not isinstance(self.latch_init, bool):
            raise InvalidOptionError(f"latch_init must be true or false, got {self.latch_init!r}")
        if self.latch_init and (self.encoder != "kinds" or self.memory_model != "GRU"):
            raise InvalidOptionError(
                f"latch_init needs encoder 'kinds' and memory_model 'GRU', got encoder "
                f"{self.encoder!r} and memory_model {self.memory_model!r}")
        if self.num_envs % self.num_minibatches:
            raise InvalidOptionError(
                f"num_envs ({self.num_envs}) must be a multiple of num_minibatches "
                f"({self.num_minibatches}): minibatches split the games")
        for name in ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef", "vf_coef",
                     "max_grad_norm"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise InvalidOptionError(f"{name} must be a finite number >= 0, got {value!r}")
        return self

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> PPOConfig:
        if not isinstance(data, dict):
            raise InvalidOptionError(f"a PPO config is a JSON object, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InvalidOptionError(f"unknown PPO config field(s) {unknown}; fields: {sorted(names)}")
        return cls(**data).check()


# -- the policy -------------------------------------------------------------------------
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
    face down and the observation shows no card. From these kinds come the relations pair
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
        x = obs.astype(jnp.float32) * jax.lax.stop_gradient(self.scale)  # [T, F]
        status, card = x[:, self.status_index], x[:, self.card_index]  # [T, P, S], [T, P, K]
        glob = x[:, self.global_index]  # [T, G]
        per_token = jnp.broadcast_to(glob[:, None], card.shape[:2] + glob.shape[1:])
        z = jax.nn.relu(jax.vmap(jax.vmap(self.embed))(
            jnp.concatenate([status, card, per_token], axis=-1)))  # [T, P, D]
        own = jnp.concatenate([status, card], -1)  # a memory reads only its own position
        hs, m = jax.vmap(self.memory, in_axes=(0, (1, None)), out_axes=(0, 1))(h, (own, starts))
        z = z + m
        believed = jax.nn.softmax(jax.vmap(jax.vmap(self.readout))(m), axis=-1)[..., :-1]
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
        return (hs, *_set_heads(self, z, glob, masks))

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


# -- training ---------------------------------------------------------------------------
@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Runner:
    """What one update carries to the next (one seed; :class:`Trainer` stacks seeds on a
    leading axis)."""

    params: Any
    opt_state: Any
    env_state: mj.SingleAgentState
    h: Any
    starts: jax.Array
    returns: jax.Array
    discounted: jax.Array
    reward_stats: jax.Array
    pool_params: Any
    pool_count: jax.Array
    key: jax.Array
    update: jax.Array


def _update_stats(stats: jax.Array, x: jax.Array) -> jax.Array:
    """Running (count, mean, variance) with a batch ``x`` added (parallel Welford)."""
    count, mean, var = stats[0], stats[1], stats[2]
    n, m, v = x.size, x.mean(), x.var()
    total = count + n
    delta = m - mean
    new_mean = mean + delta * n / total
    new_var = (var * count + v * n + delta ** 2 * count * n / total) / total
    return jnp.stack([total, new_mean, new_var])


def _log_probs(logits: jax.Array) -> jax.Array:
    return jax.nn.log_softmax(logits, axis=-1)


def make_train(config: PPOConfig) -> tuple[Callable, Callable, ActorCritic]:
    """``(init(key) -> Runner, update(Runner) -> (Runner, metrics), policy)``, both
    jittable and vmappable over seeds (``key`` draws the weights, the games and every
    sample of the run, so a seed trains the same alone or beside others)."""
    config.check()
    plain = mj.make_single_agent(config.env_id, learner_seat=config.learner_seat,
                                 **config.env_options)
    policy = make_policy(config, plain)
    view = make_view(config, policy)
    _, static = eqx.partition(policy, eqx.is_inexact_array)
    n_envs, n_steps = config.num_envs, config.num_steps
    self_play = config.opponents == "pool"

    def env_fns(pool_params: Any, pool_count: jax.Array) -> tuple[Callable, Callable]:
        if not self_play:
            return view.step, view.reset
        pool = (pool_params, jnp.minimum(pool_count, config.pool_size))
        return (lambda s, a: view.step(s, a, pool=pool)), (lambda k: view.reset(k, pool=pool))

    def schedule(count: jax.Array) -> jax.Array:
        steps_per_update = config.update_epochs * config.num_minibatches
        frac = 1.0 - (count // steps_per_update) / config.num_updates
        return config.learning_rate * (frac if config.anneal_lr else 1.0)

    tx = optax.chain(optax.clip_by_global_norm(config.max_grad_norm),
                     optax.adam(schedule, eps=1e-5))
    def init(key: jax.Array) -> Runner:
        net_key, env_key, key = jax.random.split(key, 3)
        params, _ = eqx.partition(make_policy(config, plain, key=net_key), eqx.is_inexact_array)
        pool_params = (jax.tree.map(lambda x: jnp.stack([x] * config.pool_size), params)
                       if self_play else None)
        pool_count = jnp.int32(1 if self_play else 0)
        reset = env_fns(pool_params, pool_count)[1]
        env_state = jax.vmap(reset)(jax.random.split(env_key, n_envs))
        h = jax.vmap(lambda _: policy.initial_state())(jnp.arange(n_envs))
        return Runner(params, tx.init(params), env_state, h, jnp.ones(n_envs, bool),
                      jnp.zeros(n_envs, jnp.float32), jnp.zeros(n_envs, jnp.float32),
                      jnp.array([1e-4, 0.0, 1.0], jnp.float32), pool_params, pool_count, key,
                      jnp.int32(0))

    def rollout_step(env_step: Callable, carry: tuple, _: Any) -> tuple:
        params, env_state, h, starts, returns, discounted, stats, key = carry
        model = eqx.combine(params, static)
        key, act_key, env_key = jax.random.split(key, 3)
        obs, mask = env_state.observation, env_state.legal_action_mask
        h_next, logits, value = jax.vmap(model.step)(h, obs, starts, mask)
        action = jax.random.categorical(act_key, logits)
        logp = jnp.take_along_axis(_log_probs(logits), action[:, None], axis=1)[:, 0]
        env_state = env_step(env_state, action.astype(jnp.int32), env_key)
        done = env_state.terminated | env_state.truncated
        reward = env_state.reward
        returns = returns + reward
        if config.normalize_reward:
            discounted = discounted * config.gamma + reward
            stats = _update_stats(stats, discounted)
            discounted = jnp.where(done, 0.0, discounted)
            reward = reward / jnp.sqrt(stats[2] + 1e-8)
        out = dict(obs=obs, mask=mask, start=starts, action=action, logp=logp, value=value,
                   reward=reward, done=done, episode_return=returns,
                   won=env_state.reward > 0)
        returns = jnp.where(done, 0.0, returns)
        return (params, env_state, h_next, done, returns, discounted, stats, key), out

    def loss_fn(params: Any, h0: Any, batch: dict, advantages: jax.Array, targets: jax.Array
                ) -> tuple[jax.Array, dict]:
        model = eqx.combine(params, static)
        # sequences are [T, ...] per game: vmap over the games of the minibatch
        _, logits, values = jax.vmap(model)(h0, batch["obs"], batch["start"], batch["mask"])
        logp_all = _log_probs(logits)
        logp = jnp.take_along_axis(logp_all, batch["action"][..., None], axis=-1)[..., 0]
        ratio = jnp.exp(logp - batch["logp"])
        adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        pg = jnp.maximum(-adv * ratio, -adv * jnp.clip(ratio, 1 - config.clip_coef,
                                                       1 + config.clip_coef)).mean()
        v_clipped = batch["value"] + jnp.clip(values - batch["value"], -config.clip_coef,
                                              config.clip_coef)
        v_loss = 0.5 * jnp.maximum((values - targets) ** 2, (v_clipped - targets) ** 2).mean()
        probs = jnp.exp(logp_all)
        entropy = -jnp.sum(jnp.where(batch["mask"], probs * logp_all, 0.0), axis=-1).mean()
        loss = pg + config.vf_coef * v_loss - config.ent_coef * entropy
        return loss, {"policy_loss": pg, "value_loss": v_loss, "entropy": entropy,
                      "approx_kl": ((ratio - 1) - jnp.log(ratio)).mean()}

    def update(runner: Runner) -> tuple[Runner, dict]:
        h0 = runner.h
        env_step = mj.auto_reset_batch(*env_fns(runner.pool_params, runner.pool_count))
        (params, env_state, h, starts, returns, discounted, stats, key), traj = jax.lax.scan(
            functools.partial(rollout_step, env_step),
            (runner.params, runner.env_state, runner.h, runner.starts, runner.returns,
             runner.discounted, runner.reward_stats, runner.key), None, length=n_steps)
        # bootstrap value of the state after the rollout
        model = eqx.combine(params, static)
        _, _, last_value = jax.vmap(model.step)(h, env_state.observation, starts,
                                                env_state.legal_action_mask)

        def gae(carry: tuple, t: dict) -> tuple:
            adv, next_value = carry
            nonterminal = 1.0 - t["done"]
            delta = t["reward"] + config.gamma * next_value * nonterminal - t["value"]
            adv = delta + config.gamma * config.gae_lambda * nonterminal * adv
            return (adv, t["value"]), adv

        _, advantages = jax.lax.scan(
            gae, (jnp.zeros(n_envs), last_value),
            {k: traj[k] for k in ("done", "reward", "value")}, reverse=True)
        targets = advantages + traj["value"]
        # [T, B] -> [B, T]: whole sequences per game
        seq = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), traj)
        advantages, targets = advantages.T, targets.T

        def epoch(carry: tuple, _: Any) -> tuple:
            params, opt_state, key = carry
            key, perm_key = jax.random.split(key)
            order = jax.random.permutation(perm_key, n_envs).reshape(config.num_minibatches, -1)

            def minibatch(carry: tuple, idx: jax.Array) -> tuple:
                params, opt_state = carry
                take = lambda x: x[idx]  # noqa: E731
                grads, info = jax.grad(loss_fn, has_aux=True)(
                    params, jax.tree.map(take, h0), jax.tree.map(take, seq), advantages[idx],
                    targets[idx])
                updates, opt_state = tx.update(grads, opt_state, params)
                info["grad_norm"] = optax.tree.norm(grads)
                return (optax.apply_updates(params, updates), opt_state), info

            (params, opt_state), info = jax.lax.scan(minibatch, (params, opt_state), order)
            return (params, opt_state, key), info

        key, epoch_key = jax.random.split(key)
        (params, opt_state, _), info = jax.lax.scan(
            epoch, (params, runner.opt_state, epoch_key), None, length=config.update_epochs)
        done = traj["done"]
        episodes = done.sum()
        per_episode = lambda x: jnp.where(done, x, 0).sum() / jnp.maximum(episodes, 1)  # noqa: E731
        metrics = {k: v.mean() for k, v in info.items()}
        metrics.update(episodes=episodes, episode_return=per_episode(traj["episode_return"]),
                       win_rate=per_episode(traj["won"]))
        pool_params, pool_count = runner.pool_params, runner.pool_count
        if self_play:  # a frozen snapshot every snapshot_every updates, in a ring
            take = (runner.update + 1) % config.snapshot_every == 0
            slot = pool_count % config.pool_size
            pool_params = jax.tree.map(lambda p, x: jnp.where(take, p.at[slot].set(x), p),
                                       pool_params, params)
            pool_count = pool_count + take.astype(jnp.int32)
        new = Runner(params, opt_state, env_state, h, starts, returns, discounted, stats,
                     pool_params, pool_count, key, runner.update + 1)
        return new, metrics

    return init, update, policy


def _devices(config: PPOConfig) -> list:
    devices = jax.devices()
    wanted = config.num_devices or len(devices)
    if wanted > len(devices):
        raise InvalidOptionError(f"num_devices {wanted}: only {len(devices)} {devices[0].platform} "
                                 "device(s) here")
    if config.num_envs % wanted:
        raise InvalidOptionError(f"num_envs ({config.num_envs}) must be a multiple of the "
                                 f"{wanted} devices the games are split over")
    return devices[:wanted]


_COMPILED: dict[str, tuple] = {}


def _compiled(config: PPOConfig) -> tuple:
    """``(policy, jit(vmap(init)), jit(vmap(update)))`` of ``config``, built once per
    config in a process, so trainers of one config share compiled code."""
    key = json.dumps(config.to_json(), sort_keys=True, default=str)
    if key not in _COMPILED:
        if len(_COMPILED) >= 8:
            _COMPILED.pop(next(iter(_COMPILED)))
        init, update, policy = make_train(config)
        _COMPILED[key] = (policy, jax.jit(jax.vmap(init)), jax.jit(jax.vmap(update)))
    return _COMPILED[key]


def _seed_keys(seeds: Sequence[int]) -> jax.Array:
    return jax.vmap(jax.random.key)(jnp.asarray(seeds, jnp.uint32))


class Trainer:
    """A run of one or several seeds trained side by side (:func:`make_train` vmapped
    over seeds: one jitted call updates them all). :meth:`update` advances every seed by
    one update and returns one row of plain floats per seed; :meth:`policies` gives the
    current networks; ``runner=`` resumes (see :func:`load_runner`)."""

    def __init__(self, config: PPOConfig, seeds: Sequence[int] | None = None,
                 runner: Runner | None = None) -> None:
        self.config = config
        self.seeds = list(seeds) if seeds is not None else [config.seed]
        self.policy, self._init, self._update = _compiled(config)
        self.devices = _devices(config)
        self.runner = self.place(runner if runner is not None else self.initial_runner())
        self.seconds = 0.0

    def initial_runner(self) -> Runner:
        """A fresh runner (also the structure :func:`load_runner` fills in)."""
        return self._init(_seed_keys(self.seeds))

    def place(self, runner: Runner) -> Runner:
        """``runner`` on the trainer's devices: the games (and their recurrent states)
        split over the devices, everything else replicated. The jitted update then runs
        sharded (XLA's SPMD partitioner inserts the gradient all-reduce)."""
        if len(self.devices) == 1:
            return runner
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        mesh = Mesh(np.asarray(self.devices), ("games",))
        games = NamedSharding(mesh, PartitionSpec(None, "games"))
        replicated = NamedSharding(mesh, PartitionSpec())
        per_game = {"env_state", "h", "starts", "returns", "discounted"}
        return Runner(**{f.name: jax.device_put(getattr(runner, f.name),
                                                games if f.name in per_game else replicated)
                         for f in dataclasses.fields(Runner)})

    def start_from(self, policies: Sequence[ActorCritic]) -> None:
        """Start every seed from trained weights (one policy per seed, the network of this
        config), before the first update. Everything else is a fresh run's: the optimiser
        (Adam's initial state holds no weights, only zero moments and a zero count), the
        learning-rate schedule, the games and the keys; a self-play pool starts filled
        with the given weights, as a fresh pool is with the initial network's."""
        if self.updates_done:
            raise InvalidOptionError("start_from: this run has already been updated")
        if len(policies) != len(self.seeds):
            raise InvalidOptionError(f"start_from: {len(self.seeds)} seed(s) need "
                                     f"{len(self.seeds)} policies, got {len(policies)}")
        like = jax.tree.map(lambda x: x[0], self.runner.params)
        spec = [(x.shape, x.dtype) for x in jax.tree.leaves(like)]
        params = []
        for i, policy in enumerate(policies):
            p, _ = eqx.partition(policy, eqx.is_inexact_array)
            if jax.tree.structure(p) != jax.tree.structure(like) \
                    or [(x.shape, x.dtype) for x in jax.tree.leaves(p)] != spec:
                raise InvalidOptionError(f"start_from: policy {i} is not the network of this "
                                         "config (other encoder, memory model or sizes)")
            params.append(p)
        stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *params)
        pool = self.runner.pool_params
        if pool is not None:
            pool = jax.tree.map(lambda x, q: jnp.broadcast_to(x[:, None], q.shape), stacked, pool)
        self.runner = self.place(dataclasses.replace(self.runner, params=stacked,
                                                     pool_params=pool))

    @property
    def updates_done(self) -> int:
        return int(self.runner.update[0])

    @property
    def timesteps(self) -> int:
        return self.updates_done * self.config.num_envs * self.config.num_steps

    @property
    def done(self) -> bool:
        return self.updates_done >= self.config.num_updates

    def update(self) -> list[dict]:
        start = time.perf_counter()
        self.runner, metrics = self._update(self.runner)
        metrics = jax.device_get(metrics)
        self.seconds += time.perf_counter() - start
        return [{**{k: float(v[i]) for k, v in metrics.items()}, "timesteps": self.timesteps,
                 "seconds": self.seconds} for i in range(len(self.seeds))]

    def policies(self) -> list[ActorCritic]:
        _, static = eqx.partition(self.policy, eqx.is_inexact_array)
        return [eqx.combine(jax.tree.map(lambda x, i=i: x[i], self.runner.params), static)
                for i in range(len(self.seeds))]


def train(config: PPOConfig, log: Callable[[int, dict], None] | None = None,
          runner: Runner | None = None) -> tuple[ActorCritic, list[dict]]:
    """Run ``config`` (one seed, ``config.seed``); ``log(timesteps, metrics)`` after every
    update. Returns the trained policy and the metrics history (plain floats)."""
    trainer = Trainer(config, runner=runner)
    history = []
    while not trainer.done:
        row = trainer.update()[0]
        history.append(row)
        if log is not None:
            log(row["timesteps"], row)
    return trainer.policies()[0], history


def _is_key(x: Any) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def save_runner(path: str | Path, runner: Runner) -> None:
    """The whole training state (weights, optimiser, games, keys) as equinox leaves, for
    resuming; numbers only."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    eqx.tree_serialise_leaves(tmp, jax.tree.map(
        lambda x: jax.random.key_data(x) if _is_key(x) else x, runner))
    tmp.replace(path)


def load_runner(path: str | Path, like: Runner) -> Runner:
    """Read :func:`save_runner`'s file into the structure of ``like`` (a fresh runner of
    the same config and seeds)."""
    raw = jax.tree.map(lambda x: jax.random.key_data(x) if _is_key(x) else x, like)
    try:
        raw = eqx.tree_deserialise_leaves(path, raw)
    except Exception as exc:  # equinox raises several types for a bad file
        raise InvalidOptionError(f"{path}: not a training state of this config ({exc})") from None
    return jax.tree.map(lambda x, y: jax.random.wrap_key_data(y) if _is_key(x) else y, like, raw)


# -- checkpoints: weights and plain config, no pickle -----------------------------------
#: the members of a checkpoint zip
CONFIG_MEMBER, WEIGHTS_MEMBER = "policy.json", "policy.eqx"


def save(path: str | Path, policy: ActorCritic, config: PPOConfig,
         extra: dict[str, Any] | None = None) -> Path:
    """Write the policy as one zip file: ``policy.json`` (the format, the config and
    ``extra``, plain JSON) and ``policy.eqx`` (the weights, equinox's leaf serialisation:
    numbers only). The file is replaced atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = io.BytesIO()
    eqx.tree_serialise_leaves(weights, policy)
    meta = {"format": CHECKPOINT_FORMAT, "config": config.to_json(), **(extra or {})}
    tmp = path.with_name(f".{path.name}.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(CONFIG_MEMBER, json.dumps(meta, indent=2, sort_keys=True))
        z.writestr(WEIGHTS_MEMBER, weights.getvalue())
    tmp.replace(path)
    return path


def read_meta(path: str | Path) -> dict[str, Any]:
    """The checkpoint's ``policy.json``, checked for the format."""
    from memtab_env.agents.model_data import members

    (text,) = members(path, CONFIG_MEMBER)
    return _parse_meta(text, path)


def _parse_meta(text: bytes, path: str | Path) -> dict[str, Any]:
    try:
        meta = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidOptionError(f"{path}: {CONFIG_MEMBER} is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        raise InvalidOptionError(f"{path}: {CONFIG_MEMBER}: format must be {CHECKPOINT_FORMAT!r}")
    return meta


def load(path: str | Path) -> tuple[ActorCritic, PPOConfig]:
    """Rebuild a policy from :func:`save`'s zip: the network from the JSON config, then
    its weights (numbers only; nothing in the file is executed or unpickled)."""
    from memtab_env.agents.model_data import members

    text, weights = members(path, CONFIG_MEMBER, WEIGHTS_MEMBER)
    config = PPOConfig.from_json(_parse_meta(text, path).get("config"))
    like = make_policy(config)
    try:
        policy = eqx.tree_deserialise_leaves(io.BytesIO(weights), like)
    except Exception as exc:  # equinox raises several types for a bad file
        raise InvalidOptionError(f"{path}: {WEIGHTS_MEMBER} does not fit the config ({exc})") from None
    return policy, config


class JaxPPOAgent:
    """A trained JAX PPO policy (a :func:`save` zip) as an agent (``reset``/``act`` on AEC
    observation dicts), CPU inference, one game at a time. It sees an observation each
    time it acts, as in training; ``deterministic`` plays the most likely legal flip."""

    def __init__(self, path: str | Path, deterministic: bool = True, seed: int | None = None,
                 algo: str = "jax_ppo") -> None:
        if algo != "jax_ppo":
            raise InvalidOptionError(f"{path} is a JAX PPO checkpoint: algo must be 'jax_ppo', got {algo!r}")
        with jax.default_device(jax.devices("cpu")[0]):
            self.policy, self.config = load(path)
        view = make_view(self.config)
        self._shapes = ((view.obs_size,), (view.num_actions,))
        self.deterministic = deterministic
        self.name = f"jax-ppo:{Path(path).stem}"
        self._step = eqx.filter_jit(type(self.policy).step)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._h = self.policy.initial_state()
        self._start = True
        self._key = jax.random.key(0 if seed is None else seed)

    def act(self, observation: Any) -> int:
        obs = np.asarray(observation["observation"])
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if (obs.shape, mask.shape) != self._shapes:
            raise InvalidOptionError(
                f"{self.name} was trained on {self.config.env_id} with {self.config.env_options}: it "
                f"takes an observation of shape {self._shapes[0]} and a mask of shape "
                f"{self._shapes[1]}, got {obs.shape} and {mask.shape} (another game, number of "
                "players or deck)")
        if not mask.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        self._h, logits, _ = self._step(self.policy, self._h, jnp.asarray(obs),
                                        jnp.bool_(self._start), jnp.asarray(mask))
        self._start = False
        if self.deterministic:
            return int(jnp.argmax(logits))
        self._key, sub = jax.random.split(self._key)
        return int(jax.random.categorical(sub, logits))
