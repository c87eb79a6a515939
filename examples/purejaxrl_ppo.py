"""PPO on MemTab or Pelmanism through gymnax, the PureJaxRL way: rollout, GAE and every
update in one jitted function, the envs vmapped, gymnax's ``LogWrapper`` and
``FlattenObservationWrapper`` around :func:`memtab_env.jax.gymnax.make`, and masked
logits (illegal flips get probability 0; the mask is the observation's tail).

Run (the ``gymnax`` extra brings gymnax and flax)::

    pip install -e ".[gymnax]"
    python examples/purejaxrl_ppo.py --env-id Pelmanism-v0 --option deck=pairs:4 \\
        --option num_players=1 --option reward=turns --total-timesteps 200000

It follows PureJaxRL's ``ppo.py`` (a feed-forward actor-critic, so use ``memory:
perfect``, the default, unless you want to see a policy without memory fail), written
for gymnax >= 1.0, whose ``step`` returns ``terminated`` and ``truncated`` separately.
Prints one line per ``--log-every`` updates: environment steps, the mean return of the
episodes that ended, and how many illegal actions were sampled (always 0 with masks).
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import yaml
from flax.linen.initializers import constant, orthogonal
from flax.training.train_state import TrainState
from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper

from memtab_env.jax import gymnax as mg


@dataclasses.dataclass(frozen=True)
class Config:
    env_id: str = "MemTab-v0"
    env_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    total_timesteps: int = 500_000
    num_envs: int = 64
    num_steps: int = 64
    update_epochs: int = 4
    num_minibatches: int = 8
    hidden: int = 128
    lr: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    seed: int = 0

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // (self.num_steps * self.num_envs))


class ActorCritic(nn.Module):
    num_actions: int
    hidden: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = obs.astype(jnp.float32)
        dense = lambda n, scale: nn.Dense(n, kernel_init=orthogonal(scale), bias_init=constant(0.0))  # noqa: E731
        a = nn.tanh(dense(self.hidden, np.sqrt(2))(x))
        a = nn.tanh(dense(self.hidden, np.sqrt(2))(a))
        logits = dense(self.num_actions, 0.01)(a)
        c = nn.tanh(dense(self.hidden, np.sqrt(2))(x))
        c = nn.tanh(dense(self.hidden, np.sqrt(2))(c))
        return logits, jnp.squeeze(dense(1, 1.0)(c), -1)


def masked_log_probs(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Log-probabilities with illegal actions at probability 0 (``mask`` is never empty:
    a finished episode's mask is all True)."""
    return jax.nn.log_softmax(jnp.where(mask, logits, jnp.finfo(logits.dtype).min), axis=-1)


class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    mask: jax.Array
    returned_episode: jax.Array
    returned_episode_returns: jax.Array
    illegal: jax.Array


def make_train(config: Config):
    """``train(key) -> (train_state, metrics)``, jittable; metrics per update: ``episodes``
    (that ended), ``mean_return`` (theirs), ``illegal_actions`` (sampled)."""
    env, env_params = mg.make(config.env_id, **config.env_options)
    num_actions = env.num_actions
    env = LogWrapper(FlattenObservationWrapper(env))
    obs_size = env.observation_space(env_params).shape[0]
    batch = config.num_envs * config.num_steps
    if batch % config.num_minibatches:
        raise ValueError(f"num_envs x num_steps ({batch}) must split into {config.num_minibatches} "
                         "minibatches")
    network = ActorCritic(num_actions, config.hidden)
    reset = jax.vmap(env.reset, in_axes=(0, None))
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def train(key: jax.Array):
        key, init_key, reset_key = jax.random.split(key, 3)
        tx = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(config.lr, eps=1e-5))
        state = TrainState.create(apply_fn=network.apply, tx=tx,
                                  params=network.init(init_key, jnp.zeros(obs_size, jnp.int8)))
        obs, env_state = reset(jax.random.split(reset_key, config.num_envs), env_params)

        def env_step(carry, _):
            state, env_state, obs, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            mask = mg.split_observation(obs, num_actions)[1]
            logits, value = network.apply(state.params, obs)
            log_probs = masked_log_probs(logits, mask)
            action = jax.random.categorical(act_key, log_probs)
            chosen = jnp.take_along_axis(log_probs, action[:, None], axis=1)[:, 0]
            illegal = ~jnp.take_along_axis(mask, action[:, None], axis=1)[:, 0]
            obs_next, env_state, reward, terminated, truncated, info = step(
                jax.random.split(step_key, config.num_envs), env_state, action, env_params)
            t = Transition(terminated | truncated, action, value, reward, chosen, obs, mask,
                           info["returned_episode"], info["returned_episode_returns"], illegal)
            return (state, env_state, obs_next, key), t

        def update(carry, _):
            carry, traj = jax.lax.scan(env_step, carry, None, config.num_steps)
            state, env_state, last_obs, key = carry
            _, last_value = network.apply(state.params, last_obs)

            def gae_step(c, t):
                gae, next_value = c
                delta = t.reward + config.gamma * next_value * (1 - t.done) - t.value
                gae = delta + config.gamma * config.gae_lambda * (1 - t.done) * gae
                return (gae, t.value), gae

            _, advantages = jax.lax.scan(gae_step, (jnp.zeros_like(last_value), last_value), traj,
                                         reverse=True)
            targets = advantages + traj.value

            def loss_fn(params, t, adv, target):
                logits, value = network.apply(params, t.obs)
                log_probs = masked_log_probs(logits, t.mask)
                chosen = jnp.take_along_axis(log_probs, t.action[:, None], axis=1)[:, 0]
                clipped = t.value + jnp.clip(value - t.value, -config.clip_eps, config.clip_eps)
                value_loss = 0.5 * jnp.maximum((value - target) ** 2, (clipped - target) ** 2).mean()
                ratio = jnp.exp(chosen - t.log_prob)
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                actor_loss = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - config.clip_eps,
                                                                1 + config.clip_eps) * adv).mean()
                entropy = -jnp.sum(jnp.where(t.mask, jnp.exp(log_probs) * log_probs, 0.0), -1).mean()
                total = actor_loss + config.vf_coef * value_loss - config.ent_coef * entropy
                return total, jnp.stack([value_loss, entropy])

            def epoch(c, _):
                state, key = c
                key, perm_key = jax.random.split(key)
                flat = jax.tree.map(lambda x: x.reshape((batch, *x.shape[2:])), (traj, advantages, targets))
                perm = jax.random.permutation(perm_key, batch)
                minibatches = jax.tree.map(
                    lambda x: x[perm].reshape((config.num_minibatches, -1, *x.shape[1:])), flat)

                def minibatch(state, mb):
                    grads, losses = jax.grad(loss_fn, has_aux=True)(state.params, *mb)
                    return state.apply_gradients(grads=grads), losses

                state, losses = jax.lax.scan(minibatch, state, minibatches)
                return (state, key), losses

            (state, key), losses = jax.lax.scan(epoch, (state, key), None, config.update_epochs)
            ended = traj.returned_episode
            returns = jnp.sum(traj.returned_episode_returns * ended) / jnp.maximum(ended.sum(), 1)
            value_loss, entropy = losses.reshape(-1, 2).mean(axis=0)
            metrics = {"episodes": ended.sum(), "mean_return": returns, "illegal_actions": traj.illegal.sum(),
                       "value_loss": value_loss, "entropy": entropy}
            return (state, env_state, last_obs, key), metrics

        (state, *_), metrics = jax.lax.scan(update, (state, env_state, obs, key), None, config.num_updates)
        return state, metrics

    return train


def main(argv: list[str] | None = None) -> dict[str, np.ndarray]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env-id", default=Config.env_id, choices=["MemTab-v0", "Pelmanism-v0"])
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="an option of memtab_env.jax.gymnax.make (values read as YAML), repeatable")
    for field in dataclasses.fields(Config):
        if field.name not in ("env_id", "env_options"):
            flag = f"--{field.name.replace('_', '-')}"
            ap.add_argument(flag, type=type(field.default), default=field.default)
    ap.add_argument("--log-every", type=int, default=10, help="print every N updates")
    args = vars(ap.parse_args(argv))
    options = {}
    for item in args.pop("option"):
        name, eq, value = item.partition("=")
        if not eq or not name:
            ap.error(f"--option takes KEY=VALUE, got {item!r}")
        options[name] = yaml.safe_load(value)
    log_every = args.pop("log_every")
    config = Config(env_options=options, **args)
    _, metrics = jax.jit(make_train(config))(jax.random.key(config.seed))
    metrics = jax.tree.map(np.asarray, metrics)
    steps_per_update = config.num_envs * config.num_steps
    for i in range(0, config.num_updates, max(1, log_every)):
        print(f"steps {(i + 1) * steps_per_update:>9}  episodes {int(metrics['episodes'][i]):>5}  "
              f"mean return {float(metrics['mean_return'][i]):+8.3f}  "
              f"entropy {float(metrics['entropy'][i]):6.3f}  "
              f"illegal actions {int(metrics['illegal_actions'][i])}")
    return metrics


if __name__ == "__main__":
    main()
