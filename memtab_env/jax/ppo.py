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

Checkpoints are data, not code: the weights as equinox's leaf serialisation and the
config as JSON (:func:`save`, :func:`load`), no pickle.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
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


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Everything a run depends on (plain data: saved as JSON beside the weights)."""

    env_id: str = "MemTab-v0"
    """the JAX env id (``MemTab-v0`` or ``Pelmanism-v0``)"""
    env_options: dict[str, Any] = dataclasses.field(
        default_factory=lambda: {"num_players": 2, "memory": "none"})
    """options of ``memtab_env.jax.make_single_agent`` (game options, memory, reward)"""
    opponents: str = "random"
    """the built-in JAX opponents: ``random`` or ``greedy``"""
    learner_seat: int | str = "random"
    """the learner's seat, or ``random`` (drawn each episode)"""
    encoder: str = "set"
    """``set``: position tokens, a memory per position (shared weights) and set layers
    (equivariant logits); ``flat``: one memory over the whole observation"""
    set_layers: int = 2
    """set layers (``encoder: set``)"""
    memory_model: str = "GRU"
    """memax model name (``MLP`` = no memory)"""
    memory_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    """extra layer options for memax (e.g. ``{"window_size": 4}`` for ``Stack``)"""
    recurrent_size: int = 128
    """width of the memory model"""
    num_layers: int = 1
    """memory layers"""
    num_envs: int = 256
    """games stepped together"""
    num_steps: int = 64
    """rollout length per update"""
    total_timesteps: int = 1_000_000
    """learner steps in all"""
    learning_rate: float = 3.0e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    update_epochs: int = 4
    num_minibatches: int = 4
    seed: int = 0

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // (self.num_envs * self.num_steps))

    def check(self) -> PPOConfig:
        """Raise :class:`InvalidOptionError` naming a bad field."""
        for name in ("num_envs", "num_steps", "total_timesteps", "recurrent_size", "num_layers",
                     "update_epochs", "num_minibatches"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidOptionError(f"{name} must be a positive integer, got {value!r}")
        if self.encoder not in ("set", "flat"):
            raise InvalidOptionError(f"encoder must be 'set' or 'flat', got {self.encoder!r}")
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
class ActorCritic(eqx.Module):
    """Observation scaling, a memax memory model, and linear actor and critic heads."""

    scale: jax.Array
    memory: Any
    actor: eqx.nn.Linear
    critic: eqx.nn.Linear

    def __init__(self, obs_high: np.ndarray, num_actions: int, config: PPOConfig, *,
                 key: jax.Array) -> None:
        from memax.equinox.train_utils import get_residual_memory_model

        mem_key, actor_key, critic_key = jax.random.split(key, 3)
        size = config.recurrent_size
        self.scale = jnp.asarray(1.0 / np.maximum(np.abs(obs_high), 1), jnp.float32)
        kwargs = {config.memory_model: dict(config.memory_kwargs)} if config.memory_kwargs else {}
        try:
            self.memory = get_residual_memory_model(
                model_name=config.memory_model, input=obs_high.size, hidden=size, output=size,
                num_layers=config.num_layers, layer_kwargs=kwargs, key=mem_key)
        except KeyError:
            raise InvalidOptionError(f"memax has no memory model {config.memory_model!r}") from None
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
        from memax.equinox.train_utils import get_residual_memory_model

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
        kwargs = {config.memory_model: dict(config.memory_kwargs)} if config.memory_kwargs else {}
        try:
            self.memory = get_residual_memory_model(
                model_name=config.memory_model, input=size, hidden=size, output=size,
                num_layers=config.num_layers, layer_kwargs=kwargs, key=keys[1])
        except KeyError:
            raise InvalidOptionError(f"memax has no memory model {config.memory_model!r}") from None
        self.self_layers = [eqx.nn.Linear(size, size, key=k) for k in keys[5:5 + config.set_layers]]
        self.pool_layers = [eqx.nn.Linear(size, size, use_bias=False, key=k)
                            for k in keys[5 + config.set_layers:]]
        self.logit = eqx.nn.Linear(size, 1, key=keys[2])
        self.critic = eqx.nn.MLP(size + self.global_index.size, 1, size, 1, key=keys[3])

    def initial_state(self) -> Any:
        positions = self.token_index.shape[0]
        return jax.vmap(lambda _: self.memory.initialize_carry())(jnp.arange(positions))

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
        logits = jax.vmap(jax.vmap(self.logit))(z)[..., 0]
        logits = jnp.where(masks, logits, -1e9)
        values = jax.vmap(self.critic)(jnp.concatenate([z.mean(axis=1), glob], axis=-1))[:, 0]
        return hs, logits, values

    def step(self, h: Any, obs: jax.Array, start: jax.Array, mask: jax.Array
             ) -> tuple[Any, jax.Array, jax.Array]:
        hs, logits, values = self(h, obs[None], start[None], mask[None])
        return jax.vmap(self.memory.latest_recurrent_state)(hs), logits[0], values[0]


def make_view(config: PPOConfig) -> mj.SingleAgentEnv:
    return mj.make_single_agent(config.env_id, opponents=config.opponents,
                                learner_seat=config.learner_seat, **config.env_options)


def make_policy(config: PPOConfig, view: mj.SingleAgentEnv | None = None) -> ActorCritic:
    view = view or make_view(config)
    game = view.env.game
    from memtab_env.registry import game_spec, load

    encoder = load(game_spec(game.name).encoder)(game.engine)
    if config.encoder == "set":
        return SetActorCritic(encoder, view.num_actions, config, key=jax.random.key(config.seed))
    return ActorCritic(np.maximum(np.abs(encoder.low), np.abs(encoder.high)).astype(np.float32),
                       view.num_actions, config, key=jax.random.key(config.seed))


# -- training ---------------------------------------------------------------------------
@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Runner:
    """What one update carries to the next."""

    params: Any
    opt_state: Any
    env_state: mj.SingleAgentState
    h: Any
    starts: jax.Array
    returns: jax.Array
    key: jax.Array
    update: jax.Array


def _masked_log_probs(logits: jax.Array) -> jax.Array:
    return jax.nn.log_softmax(logits, axis=-1)


def make_train(config: PPOConfig) -> tuple[Callable, Callable, ActorCritic]:
    """``(init(key) -> Runner, update(Runner) -> (Runner, metrics), policy)``, both jittable."""
    config.check()
    view = make_view(config)
    policy = make_policy(config, view)
    params, static = eqx.partition(policy, eqx.is_inexact_array)
    n_envs, n_steps = config.num_envs, config.num_steps

    def schedule(count: jax.Array) -> jax.Array:
        steps_per_update = config.update_epochs * config.num_minibatches
        frac = 1.0 - (count // steps_per_update) / config.num_updates
        return config.learning_rate * (frac if config.anneal_lr else 1.0)

    tx = optax.chain(optax.clip_by_global_norm(config.max_grad_norm),
                     optax.adam(schedule, eps=1e-5))
    env_step = mj.auto_reset_batch(view.step, view.reset)

    def init(key: jax.Array) -> Runner:
        env_key, key = jax.random.split(key)
        env_state = jax.vmap(view.reset)(jax.random.split(env_key, n_envs))
        h = jax.vmap(lambda _: policy.initial_state())(jnp.arange(n_envs))
        return Runner(params, tx.init(params), env_state, h, jnp.ones(n_envs, bool),
                      jnp.zeros(n_envs, jnp.float32), key, jnp.int32(0))

    def rollout_step(carry: tuple, _: Any) -> tuple:
        params, env_state, h, starts, returns, key = carry
        model = eqx.combine(params, static)
        key, act_key, env_key = jax.random.split(key, 3)
        obs, mask = env_state.observation, env_state.legal_action_mask
        h_next, logits, value = jax.vmap(model.step)(h, obs, starts, mask)
        action = jax.random.categorical(act_key, logits)
        logp = jnp.take_along_axis(_masked_log_probs(logits), action[:, None], axis=1)[:, 0]
        env_state = env_step(env_state, action.astype(jnp.int32), env_key)
        done = env_state.terminated | env_state.truncated
        returns = returns + env_state.reward
        out = dict(obs=obs, mask=mask, start=starts, action=action, logp=logp, value=value,
                   reward=env_state.reward, done=done, episode_return=returns)
        returns = jnp.where(done, 0.0, returns)
        return (params, env_state, h_next, done, returns, key), out

    def loss_fn(params: Any, h0: Any, batch: dict, advantages: jax.Array, targets: jax.Array
                ) -> tuple[jax.Array, dict]:
        model = eqx.combine(params, static)
        # sequences are [T, ...] per game: vmap over the games of the minibatch
        _, logits, values = jax.vmap(model)(h0, batch["obs"], batch["start"], batch["mask"])
        logp_all = _masked_log_probs(logits)
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
        (params, env_state, h, starts, returns, key), traj = jax.lax.scan(
            rollout_step, (runner.params, runner.env_state, runner.h, runner.starts, runner.returns,
                           runner.key), None, length=n_steps)
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
                return (optax.apply_updates(params, updates), opt_state), info

            (params, opt_state), info = jax.lax.scan(minibatch, (params, opt_state), order)
            return (params, opt_state, key), info

        key, epoch_key = jax.random.split(key)
        (params, opt_state, _), info = jax.lax.scan(
            epoch, (params, runner.opt_state, epoch_key), None, length=config.update_epochs)
        done = traj["done"]
        episodes = done.sum()
        metrics = {k: v.mean() for k, v in info.items()}
        metrics.update(
            episodes=episodes,
            episode_return=jnp.where(done, traj["episode_return"], 0.0).sum() / jnp.maximum(episodes, 1),
            win_rate=jnp.where(done, traj["reward"] > 0, False).sum() / jnp.maximum(episodes, 1),
        )
        new = Runner(params, opt_state, env_state, h, starts, returns, key, runner.update + 1)
        return new, metrics

    return init, update, policy


def train(config: PPOConfig, log: Callable[[int, dict], None] | None = None,
          runner: Runner | None = None) -> tuple[ActorCritic, list[dict]]:
    """Run ``config``; ``log(timesteps, metrics)`` after every update. Returns the trained
    policy and the metrics history (plain floats). ``runner`` resumes a run."""
    init, update, policy = make_train(config)
    update = jax.jit(update)
    runner = runner if runner is not None else jax.jit(init)(jax.random.key(config.seed))
    history = []
    per_update = config.num_envs * config.num_steps
    start = time.perf_counter()
    for u in range(int(runner.update), config.num_updates):
        runner, metrics = update(runner)
        row = {k: float(v) for k, v in metrics.items()}
        row["timesteps"] = (u + 1) * per_update
        row["seconds"] = time.perf_counter() - start
        history.append(row)
        if log is not None:
            log(row["timesteps"], row)
    _, static = eqx.partition(policy, eqx.is_inexact_array)
    return eqx.combine(runner.params, static), history


# -- checkpoints: weights and plain config, no pickle -----------------------------------
def save(directory: str | Path, policy: ActorCritic, config: PPOConfig,
         extra: dict[str, Any] | None = None) -> Path:
    """Write ``policy.eqx`` (leaves only) and ``policy.json`` (config) into ``directory``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    weights = out / "policy.eqx"
    tmp = out / ".policy.eqx.tmp"
    eqx.tree_serialise_leaves(tmp, policy)
    tmp.replace(weights)
    meta = {"format": CHECKPOINT_FORMAT, "config": config.to_json(), **(extra or {})}
    tmp_json = out / ".policy.json.tmp"
    tmp_json.write_text(json.dumps(meta, indent=2, sort_keys=True))
    tmp_json.replace(out / "policy.json")
    return out


def load(directory: str | Path) -> tuple[ActorCritic, PPOConfig]:
    """Rebuild a policy from :func:`save`'s files: the network from the JSON config, then
    its weights (numbers only; nothing in the files is executed)."""
    path = Path(directory)
    meta_path = path / "policy.json" if path.is_dir() else path.with_suffix(".json")
    weights = meta_path.with_suffix(".eqx")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidOptionError(f"{meta_path}: not a readable JAX PPO checkpoint ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        raise InvalidOptionError(f"{meta_path}: format must be {CHECKPOINT_FORMAT!r}")
    config = PPOConfig.from_json(meta.get("config"))
    like = make_policy(config)
    try:
        policy = eqx.tree_deserialise_leaves(weights, like)
    except Exception as exc:  # equinox raises several types for a bad file
        raise InvalidOptionError(f"{weights}: weights do not fit the config ({exc})") from None
    return policy, config


class JaxPPOAgent:
    """A trained JAX PPO policy as an agent (``reset``/``act`` on AEC observation dicts),
    CPU inference, one game at a time. It sees an observation each time it acts, as in
    training; ``deterministic`` plays the most likely legal flip."""

    def __init__(self, path: str | Path, deterministic: bool = True, seed: int | None = None) -> None:
        self.policy, self.config = load(path)
        self.deterministic = deterministic
        self.name = f"jax-ppo:{Path(path).name}"
        self._step = eqx.filter_jit(type(self.policy).step)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._h = self.policy.initial_state()
        self._start = True
        self._key = jax.random.key(0 if seed is None else seed)

    def act(self, observation: Any) -> int:
        obs = np.asarray(observation["observation"])
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        self._h, logits, _ = self._step(self.policy, self._h, jnp.asarray(obs),
                                        jnp.bool_(self._start), jnp.asarray(mask))
        self._start = False
        if self.deterministic:
            return int(jnp.argmax(logits))
        self._key, sub = jax.random.split(self._key)
        return int(jax.random.categorical(sub, logits))
