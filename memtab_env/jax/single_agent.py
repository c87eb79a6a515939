"""The single-agent JAX view: the learner holds one seat, built-in opponents the rest.

The JAX counterpart of :class:`memtab_env.gym_env.SingleAgentEnv`, pure and jittable::

    view = memtab_env.jax.make_single_agent("MemTab-v0", opponents="greedy")
    state = view.reset(jax.random.key(0))
    state = view.step(state, action)  # opponents play inside, until the learner's turn

Opponents are pure JAX functions stepped inside :meth:`SingleAgentEnv.step`:

``random``
    uniform over the legal flips (from the state's key: the same law as
    ``agents.make("random")``, other streams).
``pool``
    a frozen snapshot of a policy (self-play): the view is built with ``pool_policy`` (the
    network's structure, a :mod:`memtab_env.jax.ppo` policy) and ``step`` / ``reset`` are
    given ``pool=(params, filled)``, the snapshots' weights stacked on a leading axis and
    how many of them are filled. Each pool seat draws one snapshot per episode (uniformly
    among the filled ones) and samples its flips from it, with a recurrent state of its
    own that sees the seat's observation each time it acts.
``greedy``
    the exact greedy rule of the game's numpy agent (:mod:`agents.memtab_agents`,
    :mod:`agents.pelmanism_agents`), keeping its own memory as ``agents.make("greedy")``
    does: every kind one of its own observations showed (it observes only when it acts,
    so under ``window`` and ``decay`` it misses what the env dropped meanwhile). Its
    choices equal the numpy agent's on the same observations.
``expert`` (MemTab)
    the numpy agent itself (``agents.make("expert")``), played on the host through
    ``jax.pure_callback``: a game's JAX class names such host players in its
    ``host_opponents`` (a function of the observations, the player's ``seen`` memory and
    which lanes act). Its memory is ``seen``, kept as greedy's is, so its choices equal the
    numpy agent's. Each call leaves the compiled graph for the host (one Python call per
    batch, the kernel per game): a training run against it is slower, and on an
    accelerator the observations make a round trip to the host.

As in the Gymnasium view, a game that the opponents end before the learner's first
action is dealt again (``state.redeals`` counts it, at most :data:`MAX_REDEALS` in a row;
the numpy view raises past that, which jit cannot: the episode then starts finished, with
``terminated`` or ``truncated`` set and no learner action possible). The reward is the
learner's reward from its step and the opponents' steps that follow; ``score_change`` is the
learner's score change over the same steps (for a training reward that mixes the
scheme's reward with the score, as :mod:`memtab_env.jax.ppo`'s ``score_reward`` does).
Illegal learner
actions follow the functional env's convention (the game ends, the learner gets the penalty).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp

from memtab_env.errors import InvalidOptionError
from memtab_env.gym_env import MAX_REDEALS
from memtab_env.jax import checks
from memtab_env.jax.env import Env, State, uniform_legal
from memtab_env.registry import load

#: opponents played on the host by the game's numpy agent, where the game's JAX class
#: names them in ``host_opponents``
HOST_OPPONENTS = ("expert",)
OPPONENTS = ("random", "greedy", "pool", *HOST_OPPONENTS)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class SingleAgentState:
    """One single-agent episode.

    Attributes:
        observation: int8[obs], the learner's observation.
        legal_action_mask: bool[A], the learner's legal actions (all True once over, as
            pgx makes it: a masked softmax never meets an empty mask).
        reward: float32, the learner's reward from the last step (opponents included).
        score_change: float32, the change of the learner's score (``game.scores``) over
            the last step (opponents included); 0 after a reset.
        terminated, truncated: bool.
        learner: int32, the learner's seat.
        redeals: int32, deals the opponents ended before the learner's first action.
        env_state: the game (:class:`memtab_env.jax.env.State`).
        seen: int8[n, P], each greedy or expert opponent's own memory of kinds (-1 unknown).
        pool_seats: per seat, the snapshot a ``pool`` opponent plays this episode, its
            recurrent state and whether it has acted yet (None without pool opponents).
        key: the key of the opponents' draws and the redeals.
    """

    observation: jax.Array
    legal_action_mask: jax.Array
    reward: jax.Array
    score_change: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    learner: jax.Array
    redeals: jax.Array
    env_state: State
    seen: jax.Array
    pool_seats: Any
    key: jax.Array

    episode_end_fields = ("reward", "score_change", "terminated", "truncated")

    def replace(self, **changes: Any) -> SingleAgentState:
        return dataclasses.replace(self, **changes)


class SingleAgentEnv:
    """Single-agent view over a functional :class:`Env` (built with ``observe=False``).

    Args:
        env: the game's functional env.
        opponents: ``"random"``, ``"greedy"``, or one of those per other seat, in seat
            order after the learner.
        learner_seat: the learner's seat, or ``"random"`` (drawn each episode).
    """

    def __init__(self, env: Env, opponents: str | Sequence[str] = "random",
                 learner_seat: int | str = 0, pool_policy: Any = None) -> None:
        n = env.num_players
        self.env = env
        self.num_players = n
        self.num_actions = env.num_actions
        self.obs_size = env.obs_size
        names = [opponents] * (n - 1) if isinstance(opponents, str) else list(opponents)
        if len(names) != n - 1:
            raise InvalidOptionError(
                f"opponents: {n - 1} other seat(s) need {n - 1} opponent(s), got {len(names)}")
        host = dict(getattr(env.game, "host_opponents", {}))
        playable = [name for name in OPPONENTS if name not in HOST_OPPONENTS or name in host]
        for name in names:
            if name not in playable:
                raise InvalidOptionError(
                    f"the JAX view of {env.game.name} plays the built-in opponents {playable}, got "
                    f"{name!r} (other agents play through the numpy views)")
        self.opponents = names
        if learner_seat != "random" and (isinstance(learner_seat, bool) or not isinstance(
                learner_seat, int) or not 0 <= learner_seat < n):
            raise InvalidOptionError(
                f"learner_seat must be 'random' or an integer in [0, {n - 1}], got {learner_seat!r}")
        self.learner_seat = learner_seat
        self._greedy_after = jnp.asarray([name == "greedy" for name in names] + [False], jnp.bool_)
        # each host player: which seats after the learner it holds, and its function
        self._host = {name: (jnp.asarray([other == name for other in names] + [False], jnp.bool_),
                             load(host[name]))
                      for name in dict.fromkeys(names) if name in HOST_OPPONENTS}
        self._pool_after = jnp.asarray([name == "pool" for name in names] + [False], jnp.bool_)
        self.has_pool = "pool" in names
        if self.has_pool and pool_policy is None:
            raise InvalidOptionError("opponents 'pool' play a policy: give pool_policy (the network)")
        self.pool_policy = pool_policy

    # -- opponents ------------------------------------------------------------------
    def _is_greedy(self, learner: jax.Array, seat: jax.Array) -> jax.Array:
        return self._greedy_after[(seat - learner - 1) % self.num_players]

    def opponent_action(self, es: State, seen: jax.Array, learner: jax.Array, key: jax.Array
                        ) -> tuple[jax.Array, jax.Array]:
        """The action of the opponent on turn in ``es`` (``random`` draws from ``key``)
        and the greedy memories ``seen`` with what its observation shows added."""
        game, env = self.env.game, self.env
        seat = es.current_player
        legal = es.legal_action_mask
        # greedy: add what its observation shows now to what it has seen
        shown = game.visible(es.game, env.remembered_mask(es, seat))
        row = jnp.where(shown, game.kinds(es.game), seen[seat]).astype(jnp.int8)
        target = game.greedy_target(es.game, row.astype(jnp.int32), legal)
        unknown = legal & (row < 0)
        greedy = jnp.where(target.any(), jnp.argmax(target),
                           jnp.where(unknown.any(), jnp.argmax(unknown), jnp.argmax(legal)))
        uniform = uniform_legal(key, legal)
        is_greedy = self._is_greedy(learner, seat)
        action = jnp.where(is_greedy, greedy, uniform).astype(jnp.int32)
        remembers = is_greedy
        if self._host:  # (graphs of views without host opponents stay as they were)
            live = ~(es.terminated | es.truncated)
            observation = env.observe(es, seat)
            for after, flips in self._host.values():
                acts = after[(seat - learner - 1) % self.num_players] & live
                flip = jax.pure_callback(flips, jax.ShapeDtypeStruct((), jnp.int32),
                                         observation, seen[seat], acts, vmap_method="broadcast_all")
                action = jnp.where(acts, flip, action)
                remembers = remembers | acts
        seen = jnp.where(remembers, seen.at[seat].set(row), seen)
        return action, seen

    def _new_pool_seats(self, key: jax.Array, pool: Any) -> Any:
        """Every seat's snapshot for a new episode, a fresh recurrent state, not acted."""
        if not self.has_pool:
            return None
        if pool is None:
            raise InvalidOptionError("this view has pool opponents: pass pool=(params, filled)")
        _, filled = pool
        n = self.num_players
        index = jax.random.randint(key, (n,), 0, jnp.maximum(filled, 1), jnp.int32)
        h = jax.vmap(lambda _: self.pool_policy.initial_state())(jnp.arange(n))
        return index, h, jnp.ones(n, jnp.bool_)

    def _pool_action(self, es: State, pool_seats: Any, pool: Any, key: jax.Array
                     ) -> tuple[jax.Array, Any]:
        """The flip of the pool snapshot on turn, sampled, and the seats' states after it."""
        import equinox as eqx

        index, h, start = pool_seats
        params, _ = pool
        seat = es.current_player
        _, static = eqx.partition(self.pool_policy, eqx.is_inexact_array)
        model = eqx.combine(jax.tree.map(lambda x: x[index[seat]], params), static)
        h_seat, logits, _ = model.step(jax.tree.map(lambda x: x[seat], h),
                                       self.env.observe(es, seat), start[seat],
                                       es.legal_action_mask)
        action = jax.random.categorical(key, logits).astype(jnp.int32)
        h = jax.tree.map(lambda x, y: x.at[seat].set(y), h, h_seat)
        return action, (index, h, start.at[seat].set(False))

    def _play_opponents(self, es: State, seen: jax.Array, pool_seats: Any, learner: jax.Array,
                        key: jax.Array, pool: Any = None
                        ) -> tuple[State, jax.Array, Any, jax.Array, jax.Array]:
        """Opponents act until the learner is on turn or the game is over; returns the
        learner's reward collected meanwhile."""

        def waiting(carry: tuple) -> jax.Array:
            es = carry[0]
            return ~(es.terminated | es.truncated) & (es.current_player != learner)

        def act(carry: tuple) -> tuple:
            es, seen, pool_seats, total, key = carry
            key, sub = jax.random.split(key)
            action, seen = self.opponent_action(es, seen, learner, sub)
            if self.has_pool:  # (streams of views without pool opponents stay as they were)
                pool_key = jax.random.fold_in(sub, 1)
                is_pool = self._pool_after[(es.current_player - learner - 1) % self.num_players]
                pool_flip, after = self._pool_action(es, pool_seats, pool, pool_key)
                action = jnp.where(is_pool, pool_flip, action)
                pool_seats = jax.tree.map(lambda new, old: jnp.where(is_pool, new, old),
                                          after, pool_seats)
            es = self.env.step(es, action)
            return es, seen, pool_seats, total + es.rewards[learner], key

        return jax.lax.while_loop(waiting, act, (es, seen, pool_seats, jnp.float32(0.0), key))

    def _view(self, es: State, seen: jax.Array, pool_seats: Any, learner: jax.Array,
              reward: jax.Array, redeals: jax.Array, key: jax.Array,
              score_change: jax.Array | float = 0.0) -> SingleAgentState:
        over = es.terminated | es.truncated  # all True then, as the functional env's mask
        mask = (es.legal_action_mask & (es.current_player == learner)) | over
        return SingleAgentState(
            observation=self.env.observe(es, learner), legal_action_mask=mask,
            reward=reward.astype(jnp.float32), score_change=jnp.asarray(score_change, jnp.float32),
            terminated=es.terminated, truncated=es.truncated,
            learner=learner, redeals=redeals, env_state=es, seen=seen, pool_seats=pool_seats,
            key=key)

    # -- the view -------------------------------------------------------------------
    def reset(self, key: jax.Array, pool: Any = None) -> SingleAgentState:
        """A new episode: deal, then the opponents play until the learner is on turn
        (``pool``: the snapshots, for ``pool`` opponents)."""
        n, p = self.num_players, self.env.game.num_positions
        seat_key, key = jax.random.split(key)
        if self.learner_seat == "random":
            learner = jax.random.randint(seat_key, (), 0, n, jnp.int32)
        else:
            learner = jnp.int32(self.learner_seat)

        def deal(carry: tuple) -> tuple:
            _, _, _, redeals, key = carry
            key, deal_key, play_key = jax.random.split(key, 3)
            es = self.env.init(deal_key)
            seen = jnp.full((n, p), -1, jnp.int8)
            seats = self._new_pool_seats(jax.random.fold_in(deal_key, 1), pool)
            es, seen, seats, _, _ = self._play_opponents(es, seen, seats, learner, play_key, pool)
            return es, seen, seats, redeals + 1, key

        def ended(carry: tuple) -> jax.Array:
            es, _, _, redeals, _ = carry
            return (es.terminated | es.truncated) & (redeals < MAX_REDEALS)

        es, seen, seats, redeals, key = deal((None, None, None, jnp.int32(-1), key))
        es, seen, seats, redeals, key = jax.lax.while_loop(ended, deal, (es, seen, seats, redeals, key))
        es = es.replace(rewards=jnp.zeros_like(es.rewards))
        return self._view(es, seen, seats, learner, jnp.float32(0.0), redeals, key)

    def reset_from_layout(self, layout: Any, key: jax.Array | None = None,
                          learner: int | None = None, pool: Any = None) -> SingleAgentState:
        """An episode on the given deal (as :meth:`Env.init_from_layout` takes it), the
        opponents playing until the learner is on turn; never dealt again (a deal the
        opponents end first gives a finished episode). ``learner`` defaults to the
        view's seat (required when that is ``"random"``)."""
        n, p = self.num_players, self.env.game.num_positions
        if learner is None:
            if self.learner_seat == "random":
                raise InvalidOptionError("learner_seat is 'random': pass learner= to reset_from_layout")
            learner = self.learner_seat
        key = jax.random.key(0) if key is None else key
        env_key, play_key, key = jax.random.split(key, 3)
        seat = checks.player(learner, n, "learner")
        es = self.env.init_from_layout(layout, key=env_key)
        seen = jnp.full((n, p), -1, jnp.int8)
        seats = self._new_pool_seats(jax.random.fold_in(env_key, 1), pool)
        es, seen, seats, _, _ = self._play_opponents(es, seen, seats, seat, play_key, pool)
        es = es.replace(rewards=jnp.zeros_like(es.rewards))
        return self._view(es, seen, seats, seat, jnp.float32(0.0), jnp.int32(0), key)

    def step(self, state: SingleAgentState, action: jax.Array, pool: Any = None) -> SingleAgentState:
        """The learner plays ``action``; then the opponents, until its next turn
        (``pool``: the snapshots, for ``pool`` opponents)."""
        learner = state.learner
        es = self.env.step(state.env_state, action)
        reward = es.rewards[learner]
        key, play_key = jax.random.split(state.key)
        es, seen, seats, more, _ = self._play_opponents(es, state.seen, state.pool_seats, learner,
                                                        play_key, pool)
        scores = self.env.game.scores
        change = scores(es.game)[learner] - scores(state.env_state.game)[learner]
        return self._view(es, seen, seats, learner, reward + more, state.redeals, key,
                          change.astype(jnp.float32))
