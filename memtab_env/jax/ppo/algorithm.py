"""PPO with memory, top to bottom, as PureJaxRL's ``ppo_rnn.py`` reads: what one update
carries to the next (:class:`Runner`), the rollout (with reward normalisation), the
generalised advantage estimates, the clipped loss (plus the recall loss where
``recall_coef`` asks for it), the epochs of minibatch updates, and
:func:`make_train`, which puts them together as ``init`` and ``update`` functions for
``jit`` and ``vmap``.

One update: ``num_steps`` steps of ``num_envs`` games (auto-reset, the learner's steps;
opponents play inside the view), GAE, then ``update_epochs`` epochs of
``num_minibatches`` minibatches (split over games, whole sequences: recurrent state
reset where an episode starts, the rollout's first state carried from the previous
rollout). The networks are in :mod:`memtab_env.jax.ppo.networks`; seeds, devices and the
loop over updates in :mod:`memtab_env.jax.ppo.trainer`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

import memtab_env.jax as mj
from memtab_env.jax.ppo.config import PPOConfig
from memtab_env.jax.ppo.networks import ActorCritic, make_policy, make_view


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
    shown: jax.Array | None = None
    """int8[games, P]: the kind each game's observations last showed at each position
    (-1 none), the recall loss's targets; None without it (``recall_coef`` 0)"""


def update_stats(stats: jax.Array, x: jax.Array) -> jax.Array:
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


def optimiser(config: PPOConfig) -> optax.GradientTransformation:
    """Adam behind global-norm clipping, its learning rate
    :meth:`PPOConfig.learning_rate_at` the learner steps before the current update
    (constant within an update)."""

    def schedule(count: jax.Array) -> jax.Array:
        steps_per_update = config.update_epochs * config.num_minibatches
        return config.learning_rate_at(count // steps_per_update * config.num_envs * config.num_steps)

    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm),
                       optax.adam(schedule, eps=1e-5))


# -- rollout ----------------------------------------------------------------------------
def rollout_step(config: PPOConfig, static: Any, env_step: Callable, carry: tuple, _: Any
                 ) -> tuple[tuple, dict]:
    """One step of every game (a ``lax.scan`` body): sample the learner's flips, step the
    view, normalise the reward; the transition for the update."""
    params, env_state, h, starts, returns, discounted, stats, shown, key = carry
    model = eqx.combine(params, static)
    key, act_key, env_key = jax.random.split(key, 3)
    obs, mask = env_state.observation, env_state.legal_action_mask
    if shown is not None:
        shown = jax.vmap(model.shown_kinds)(obs, starts, shown)
    h_next, logits, value = jax.vmap(model.step)(h, obs, starts, mask)
    action = jax.random.categorical(act_key, logits)
    logp = jnp.take_along_axis(_log_probs(logits), action[:, None], axis=1)[:, 0]
    env_state = env_step(env_state, action.astype(jnp.int32), env_key)
    done = env_state.terminated | env_state.truncated
    reward = env_state.reward
    if config.score_reward:
        reward = reward + config.score_reward * env_state.score_change
    returns = returns + reward
    if config.normalize_reward:
        discounted = discounted * config.gamma + reward
        stats = update_stats(stats, discounted)
        discounted = jnp.where(done, 0.0, discounted)
        reward = reward / jnp.sqrt(stats[2] + 1e-8)
    out = dict(obs=obs, mask=mask, start=starts, action=action, logp=logp, value=value,
               reward=reward, done=done, episode_return=returns,
               won=env_state.reward > 0)
    if shown is not None:
        out["shown"] = shown
    returns = jnp.where(done, 0.0, returns)
    return (params, env_state, h_next, done, returns, discounted, stats, shown, key), out


def gae(config: PPOConfig, traj: dict, last_value: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Generalised advantage estimates and value targets [T, B] of a rollout ``traj``
    (``last_value``: the value of the state after it)."""

    def step(carry: tuple, t: dict) -> tuple:
        adv, next_value = carry
        nonterminal = 1.0 - t["done"]
        delta = t["reward"] + config.gamma * next_value * nonterminal - t["value"]
        adv = delta + config.gamma * config.gae_lambda * nonterminal * adv
        return (adv, t["value"]), adv

    _, advantages = jax.lax.scan(
        step, (jnp.zeros(config.num_envs), last_value),
        {k: traj[k] for k in ("done", "reward", "value")}, reverse=True)
    return advantages, advantages + traj["value"]


# -- loss and update --------------------------------------------------------------------
def ppo_loss(params: Any, h0: Any, batch: dict, advantages: jax.Array, targets: jax.Array, *,
             static: Any, config: PPOConfig) -> tuple[jax.Array, dict]:
    """The clipped PPO loss of a minibatch of whole sequences ([games, T, ...]), with the
    clipped value loss and the entropy over legal flips; and what it measured."""
    model = eqx.combine(params, static)
    # sequences are [T, ...] per game: vmap over the games of the minibatch
    if config.recall_coef:
        _, logits, values, recall, asked = jax.vmap(model.forward)(
            h0, batch["obs"], batch["start"], batch["mask"])
    else:
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
    info = {"policy_loss": pg, "value_loss": v_loss, "entropy": entropy,
            "approx_kl": ((ratio - 1) - jnp.log(ratio)).mean()}
    if config.recall_coef:
        recall_loss, recalled, kept = recall_loss_and_counts(recall, asked, batch["shown"])
        loss = loss + config.recall_coef * recall_loss
        info.update(recall_loss=recall_loss, recall_right=recalled, recall_asked=kept)
    return loss, info


def recall_loss_and_counts(recall: jax.Array, asked: jax.Array, shown: jax.Array
                           ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The recall loss: the mean cross-entropy of the readout's logits ``recall``
    [..., P, K + 1] against the kinds ``shown`` [..., P] (-1: the last class, "not
    known") over the positions ``asked`` [..., P]. Also how many asked positions had
    been shown a kind, and at how many of those the readout's likeliest class is that
    kind (their ratio: how often a memory gives back a card it saw)."""
    classes = recall.shape[-1]
    target = jnp.where(shown >= 0, shown.astype(jnp.int32), classes - 1)
    nll = -jnp.take_along_axis(_log_probs(recall), target[..., None], axis=-1)[..., 0]
    loss = jnp.where(asked, nll, 0.0).sum() / jnp.maximum(asked.sum(), 1)
    known = asked & (shown >= 0)
    right = known & (jnp.argmax(recall, axis=-1) == target)
    return loss, right.sum().astype(jnp.float32), known.sum().astype(jnp.float32)


def learn(config: PPOConfig, tx: optax.GradientTransformation, loss_fn: Callable, params: Any,
          opt_state: Any, key: jax.Array, h0: Any, seq: dict, advantages: jax.Array,
          targets: jax.Array) -> tuple[Any, Any, dict]:
    """``update_epochs`` epochs over the games of a rollout (``seq``: [B, T, ...], ``h0``
    their first recurrent states), each in ``num_minibatches`` minibatches of whole
    games drawn from ``key``: the new weights, optimiser state and per-step metrics."""

    def epoch(carry: tuple, _: Any) -> tuple:
        params, opt_state, key = carry
        key, perm_key = jax.random.split(key)
        order = jax.random.permutation(perm_key, config.num_envs).reshape(config.num_minibatches, -1)

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

    (params, opt_state, _), info = jax.lax.scan(
        epoch, (params, opt_state, key), None, length=config.update_epochs)
    return params, opt_state, info


# -- init and update --------------------------------------------------------------------
def make_train(config: PPOConfig, stage: int = 0) -> tuple[Callable, Callable, ActorCritic]:
    """``(init(key) -> Runner, update(Runner) -> (Runner, metrics), policy)``, both
    jittable and vmappable over seeds (``key`` draws the weights, the games and every
    sample of the run, so a seed draws the same alone or beside others; the vectorised
    arithmetic may round differently, which a long run amplifies), against the
    opponents and memory model of ``stage`` of the config's curriculum
    (:meth:`PPOConfig.stages`; :class:`Trainer` switches between stages)."""
    config.check()
    _, opponents, memory = config.stages()[stage]
    plain = mj.make_single_agent(config.env_id, learner_seat=config.learner_seat,
                                 **config.env_options)
    policy = make_policy(config, plain)
    view = make_view(dataclasses.replace(config, opponents=opponents, opponent_switches="",
                                         env_options={**config.env_options, "memory": memory}),
                     policy)
    _, static = eqx.partition(policy, eqx.is_inexact_array)
    n_envs, n_steps = config.num_envs, config.num_steps
    self_play = opponents == "pool"
    pooled = config.uses_pool  # a curriculum that reaches pool keeps the pool from the start
    tx = optimiser(config)
    loss_fn = functools.partial(ppo_loss, static=static, config=config)

    def env_fns(pool_params: Any, pool_count: jax.Array) -> tuple[Callable, Callable]:
        if not self_play:
            return view.step, view.reset
        pool = (pool_params, jnp.minimum(pool_count, config.pool_size))
        return (lambda s, a: view.step(s, a, pool=pool)), (lambda k: view.reset(k, pool=pool))

    def fresh_shown() -> jax.Array | None:
        """The recall loss's memory of shown kinds, empty; None without the loss."""
        if not config.recall_coef:
            return None
        return jnp.full((n_envs, plain.env.game.num_positions), -1, jnp.int8)

    def init(key: jax.Array) -> Runner:
        net_key, env_key, key = jax.random.split(key, 3)
        params, _ = eqx.partition(make_policy(config, plain, key=net_key), eqx.is_inexact_array)
        pool_params = (jax.tree.map(lambda x: jnp.stack([x] * config.pool_size), params)
                       if pooled else None)
        pool_count = jnp.int32(1 if pooled else 0)
        reset = env_fns(pool_params, pool_count)[1]
        env_state = jax.vmap(reset)(jax.random.split(env_key, n_envs))
        h = jax.vmap(lambda _: policy.initial_state())(jnp.arange(n_envs))
        return Runner(params, tx.init(params), env_state, h, jnp.ones(n_envs, bool),
                      jnp.zeros(n_envs, jnp.float32), jnp.zeros(n_envs, jnp.float32),
                      jnp.array([1e-4, 0.0, 1.0], jnp.float32), pool_params, pool_count, key,
                      jnp.int32(0), fresh_shown())

    def fresh_games(runner: Runner) -> Runner:
        """``runner`` with every game dealt afresh and every memory reset."""
        key, env_key = jax.random.split(runner.key)
        reset = env_fns(runner.pool_params, runner.pool_count)[1]
        return dataclasses.replace(
            runner, env_state=jax.vmap(reset)(jax.random.split(env_key, n_envs)),
            h=jax.vmap(lambda _: policy.initial_state())(jnp.arange(n_envs)),
            starts=jnp.ones(n_envs, bool), returns=jnp.zeros(n_envs, jnp.float32),
            discounted=jnp.zeros(n_envs, jnp.float32), shown=fresh_shown(), key=key)

    def update(runner: Runner) -> tuple[Runner, dict]:
        if config.fresh_rollouts:
            runner = fresh_games(runner)
        h0 = runner.h
        env_step = mj.auto_reset_batch(*env_fns(runner.pool_params, runner.pool_count))
        (params, env_state, h, starts, returns, discounted, stats, shown, key), traj = jax.lax.scan(
            functools.partial(rollout_step, config, static, env_step),
            (runner.params, runner.env_state, runner.h, runner.starts, runner.returns,
             runner.discounted, runner.reward_stats, runner.shown, runner.key), None, length=n_steps)
        # bootstrap value of the state after the rollout
        model = eqx.combine(params, static)
        _, _, last_value = jax.vmap(model.step)(h, env_state.observation, starts,
                                                env_state.legal_action_mask)
        advantages, targets = gae(config, traj, last_value)
        # [T, B] -> [B, T]: whole sequences per game
        seq = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), traj)
        advantages, targets = advantages.T, targets.T
        key, epoch_key = jax.random.split(key)
        params, opt_state, info = learn(config, tx, loss_fn, params, runner.opt_state, epoch_key,
                                        h0, seq, advantages, targets)
        done = traj["done"]
        episodes = done.sum()
        per_episode = lambda x: jnp.where(done, x, 0).sum() / jnp.maximum(episodes, 1)  # noqa: E731
        metrics = {k: v.mean() for k, v in info.items() if k not in ("recall_right", "recall_asked")}
        if config.recall_coef:  # over the whole update: shown cards the readout gave back
            metrics["recall_accuracy"] = info["recall_right"].sum() / jnp.maximum(
                info["recall_asked"].sum(), 1.0)
        metrics["learning_rate"] = config.learning_rate_at(runner.update * n_envs * n_steps)
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
                     pool_params, pool_count, key, runner.update + 1, shown)
        return new, metrics

    return init, update, policy
