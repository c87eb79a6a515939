"""The functional JAX env shared by every game: memory models, observations, rewards,
illegal actions and truncation written once over a game's pure rules.

pgx-style::

    env = memtab_env.jax.make("MemTab-v0", num_players=2, memory="none")
    state = env.init(jax.random.key(0))
    state = env.step(state, action)          # jit and vmap both; or step(state, action, key)
    obs = env.observe(state, player)         # any player's flat int8 observation

It follows pgx's v2 API (``pgx.core.Env``): ``step(state, action, key=None)``, the
properties ``id``, ``version``, ``num_players``, ``num_actions`` and
``observation_shape``, and a finished game's ``legal_action_mask`` all True (so that a
masked softmax never meets an empty mask; any action then changes nothing), so pgx's
loops and ``pgx.experimental.auto_reset(env.step, env.init)`` run on it unchanged.
``observe(state, player)``, :meth:`Env.observe_all` and :meth:`Env.init_from_layout`
are additions.

:class:`State` fields: ``current_player``, ``observation`` (of the current player),
``legal_action_mask`` (bool, the current player's), ``rewards`` (float32, one per player:
this step's rewards under the env's reward scheme, as the AEC env's ``rewards``),
``terminated``, ``truncated``, plus the game's own state, the memory state, the flip count
and a key (for ``decay``, when ``step`` is given none).

Illegal actions inside jit follow pgx's convention: the game ends (``terminated``), the
offender gets ``illegal_action_penalty`` (default -1) and every other player 0, the game
itself is left as it was (pgx also pays every other player ``-penalty``; PettingZoo's
``env()`` pays them 0, as here). This is what PettingZoo's ``env()`` does; the numba APIs keep
their own conventions (``raw_env`` raises, the Gymnasium view penalises). A step on a
finished game changes nothing and gives zero rewards.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from memtab_env.jax import checks
from memtab_env.jax.memory import MemoryModel, MemoryState
from memtab_env.rewards import check_reward_scheme


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class State:
    """One game (a pytree of fixed-shape arrays; a batch when vmapped)."""

    current_player: jax.Array
    observation: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    step_count: jax.Array
    game: Any
    memory: MemoryState
    key: jax.Array

    #: what :func:`auto_reset` carries from a game's last step into the next game's start
    episode_end_fields = ("rewards", "terminated", "truncated")

    def replace(self, **changes: Any) -> State:
        return dataclasses.replace(self, **changes)


def shuffle(key: jax.Array, cards: jax.Array) -> jax.Array:
    """A uniform permutation of ``cards`` (a deal), without a sort.

    Each card draws 32 random bits; a card's position is its rank among the draws (ties,
    probability below P**2 / 2**33, broken by card order, as ``jax.random.permutation``'s
    sort of 32-bit keys breaks them). Pairwise ranks are branch-free elementwise work,
    several times faster than ``jax.random.permutation``'s sort on CPUs, where the deal
    of an auto-reset otherwise costs more than the step itself.
    """
    n = cards.shape[0]
    u = jax.random.bits(key, (n,), jnp.uint32)
    i = jnp.arange(n)
    before = (u[None, :] < u[:, None]) | ((u[None, :] == u[:, None]) & (i[None, :] < i[:, None]))
    rank = before.sum(axis=1)
    return jnp.sum(jnp.where(rank[:, None] == i[None, :], cards[:, None].astype(jnp.int32), 0),
                   axis=0).astype(cards.dtype)


def uniform_legal(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniformly drawn legal action of a bool ``mask`` (0 when none is legal): one
    bounded random integer k, then the k-th legal action."""
    count = mask.sum()
    k = jax.random.randint(key, (), 0, jnp.maximum(count, 1))
    return jnp.argmax(mask & (jnp.cumsum(mask) == k + 1)).astype(jnp.int32)


def _win_rewards(winners: jax.Array) -> jax.Array:
    """The ``win`` scheme of :func:`memtab_env.rewards.win_rewards` on a bool mask."""
    n = winners.shape[0]
    k = winners.sum()
    losers = n - k
    r = jnp.where(winners, 1.0 / jnp.maximum(k, 1), -1.0 / jnp.maximum(losers, 1))
    return jnp.where((k == 0) | (k == n), 0.0, r).astype(jnp.float32)


class Env:
    """A game's functional env. Build it with :func:`memtab_env.jax.make`.

    Args:
        game: the game's JAX rules (:class:`memtab_env.games.memtab.jax_env.MemTabJax`, ...).
        memory: ``"perfect"``, ``"none"``, ``"decay:p"`` or ``"window:k"``.
        reward: ``"win"``, ``"score"`` or ``"turns"`` (:mod:`memtab_env.rewards`).
        illegal_action_penalty: the offender's reward for an illegal action.
        observe: compute ``state.observation`` in ``init``/``step`` (default). With False
            it stays a zero-length array and :meth:`observe` builds observations on demand
            (the fastest way to step games whose observations are not all read).
    """

    def __init__(self, game: Any, memory: str = "perfect", reward: str = "win",
                 illegal_action_penalty: float = -1.0, observe: bool = True) -> None:
        self.game = game
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.obs_size = game.obs_size
        self.memory_model = MemoryModel(memory, game.num_players, game.num_positions)
        self.reward_scheme = check_reward_scheme(reward)
        self.illegal_action_penalty = checks.real(illegal_action_penalty, "illegal_action_penalty")
        self.auto_observe = checks.flag(observe, "observe")
        self.max_game_length = game.max_game_length

    @property
    def memory(self) -> str:
        return str(self.memory_model.spec)

    # -- pgx's descriptive properties -----------------------------------------------
    @property
    def id(self) -> str:
        """The env id (``"MemTab-v0"``), as ``pgx.core.Env.id``."""
        from memtab_env.registry import game_spec

        return game_spec(self.game.name).env_id

    @property
    def version(self) -> str:
        """The id's version (``"v0"``), as ``pgx.core.Env.version``."""
        return self.id.rpartition("-")[2]

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """The shape of one observation, ``(obs_size,)`` (also with ``observe=False``,
        where ``state.observation`` stays empty and :meth:`observe` builds it)."""
        return (self.obs_size,)

    # -- construction ---------------------------------------------------------------
    def init(self, key: jax.Array) -> State:
        """A new game dealt from ``key`` (a uniform permutation; other streams than the
        numpy engine's)."""
        deal_key, key = jax.random.split(key)
        return self._start(self.game.deal(deal_key), jnp.int32(self.game.first_player), key)

    def init_from_layout(self, layout: Any, first_player: int | jax.Array | None = None,
                         key: jax.Array | None = None) -> State:
        """The game dealt as ``layout``: card codes by position as a record lists them
        (or card/kind ids). Python sequences and numpy arrays are checked by the engine
        (a clear error names what is wrong); a JAX array is taken as card ids unchecked,
        so this also jits and vmaps over layouts. ``key`` seeds ``decay``'s forgetting."""
        if not isinstance(layout, jax.Array):
            layout = jnp.asarray(self.game.parse_layout(layout))
        if first_player is None:
            first_player = self.game.first_player
        else:
            first_player = checks.player(first_player, self.num_players, "first_player")
        key = jax.random.key(0) if key is None else key
        return self._start(layout, jnp.asarray(first_player, jnp.int32), key)

    def _start(self, layout: jax.Array, first_player: jax.Array, key: jax.Array) -> State:
        gs = self.game.init(layout, first_player)
        mem = self.memory_model.init()
        state = State(
            current_player=gs.current,
            observation=jnp.zeros(0, jnp.int8),
            legal_action_mask=self.game.legal(gs),
            rewards=jnp.zeros(self.num_players, jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            step_count=jnp.int32(0),
            game=gs,
            memory=mem,
            key=key,
        )
        return self._with_observation(state)

    # -- the transition -------------------------------------------------------------
    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """Play ``action`` for the current player (see the module docstring for illegal
        actions and finished games). ``key`` (pgx's v2 signature) is the randomness of
        the transition: ``decay``'s forgetting draws from it when given, else from the
        state's key; the other memory models draw nothing."""
        game = self.game
        # the observation is rebuilt from the new state below, never selected
        state = state.replace(observation=jnp.zeros(0, jnp.int8))
        action = checks.action(action, self.num_actions)
        in_range = (action >= 0) & (action < self.num_actions)
        a = jnp.clip(action, 0, self.num_actions - 1).astype(jnp.int32)
        done = state.terminated | state.truncated
        legal = in_range & state.legal_action_mask[a] & ~done
        actor = state.current_player

        gs, turn_over = game.step(state.game, a)
        next_key, forget_key = state.key, None
        if self.memory_model.random:
            next_key, forget_key = jax.random.split(state.key) if key is None else (state.key, key)
        uniforms = None
        if forget_key is not None:
            uniforms = jax.random.uniform(forget_key, (self.num_players, game.num_positions))
        mem = self.memory_model.reveal(state.memory, actor, a, uniforms)
        over = gs.over
        seat = jnp.arange(self.num_players) == actor
        if self.reward_scheme == "win":
            rewards = jnp.where(over, _win_rewards(game.winners(gs)), 0.0)
        elif self.reward_scheme == "score":
            rewards = (game.scores(gs) - game.scores(state.game)).astype(jnp.float32)
        else:  # turns: -1 to the player whose turn ends
            rewards = jnp.where(seat & turn_over, -1.0, 0.0)
        count = state.step_count + 1
        stepped = State(
            current_player=gs.current,
            observation=state.observation,
            legal_action_mask=game.legal(gs),
            rewards=rewards.astype(jnp.float32),
            terminated=over,
            truncated=~over & (count >= self.max_game_length),
            step_count=count,
            game=gs,
            memory=mem,
            key=next_key,
        )
        illegal = state.replace(
            rewards=jnp.where(seat, self.illegal_action_penalty, 0.0).astype(jnp.float32),
            terminated=jnp.bool_(True),
        )
        finished = state.replace(rewards=jnp.zeros_like(state.rewards))
        out = jax.tree.map(lambda x, y: jnp.where(legal, x, y), stepped, illegal)
        out = jax.tree.map(lambda x, y: jnp.where(done, y, x), out, finished)
        out = out.replace(legal_action_mask=out.legal_action_mask | out.terminated | out.truncated)
        return self._with_observation(out) if self.auto_observe else out

    # -- observations ---------------------------------------------------------------
    def actions(self, actions: Any) -> jax.Array:
        """A concrete batch of actions (any integer dtype, any shape) as int32, every value
        outside the action space as -1 (illegal): check int64/uint64 arrays with this before
        a jitted ``step``, whose boundary would otherwise wrap them (:mod:`memtab_env.jax.checks`)."""
        return checks.actions(actions, self.num_actions)

    def remembered_mask(self, state: State, player: jax.Array) -> jax.Array:
        """bool[P]: face-down positions whose card ``player`` remembers (a concrete
        ``player`` is range-checked, a traced one is not: :mod:`memtab_env.jax.checks`)."""
        return self._remembered(state, checks.player(player, self.num_players))

    def observe(self, state: State, player: jax.Array) -> jax.Array:
        """``player``'s flat int8 observation (the numba encoder's layout and values); a
        concrete ``player`` is range-checked, a traced one is not (:mod:`memtab_env.jax.checks`)."""
        return self._observe(state, checks.player(player, self.num_players))

    def observe_all(self, state: State) -> jax.Array:
        """int8[n, obs]: every player's observation (the multi-agent view for self-play)."""
        return jax.vmap(lambda p: self._observe(state, p))(jnp.arange(self.num_players))

    def _remembered(self, state: State, player: jax.Array) -> jax.Array:
        return self.memory_model.remembered(state.memory, player, self.game.face_down(state.game))

    def _observe(self, state: State, player: jax.Array) -> jax.Array:
        return self.game.encode(state.game, player, self._remembered(state, player))

    def _with_observation(self, state: State) -> State:
        if not self.auto_observe:
            return state
        return state.replace(observation=self._observe(state, state.current_player))


def _observe_once(step_fn: Callable, init_fn: Callable) -> tuple[Callable, Callable, Callable | None]:
    """For ``env.step`` and ``env.init`` of one observing :class:`Env`: the same functions
    without observations and the function that adds them, so that an auto-reset step
    builds each observation once, after the reset, not for the stepped game and again
    for the new one. Any other pair is returned as it is (and None)."""
    env = getattr(step_fn, "__self__", None)
    if not (isinstance(env, Env) and env.auto_observe and getattr(init_fn, "__self__", None) is env
            and getattr(step_fn, "__func__", None) is Env.step
            and getattr(init_fn, "__func__", None) is Env.init):
        return step_fn, init_fn, None
    quiet = copy.copy(env)
    quiet.auto_observe = False
    return quiet.step, quiet.init, env._with_observation


def auto_reset(step_fn: Callable[[Any, jax.Array], Any], init_fn: Callable[[jax.Array], Any]
               ) -> Callable[[Any, jax.Array, jax.Array], Any]:
    """``step(state, action, key)`` that starts a new game from ``key`` when the step
    ends the game (terminated or truncated). The returned state is the new game's first
    state, with the final step's ``rewards``, ``terminated`` and ``truncated`` kept, so a
    training loop reads the episode's end from it (pgx's ``auto_reset`` convention); use
    it under ``jax.vmap`` with one key per game. Works for :class:`Env` and
    :class:`memtab_env.jax.single_agent.SingleAgentEnv` (``step_fn=env.step``,
    ``init_fn=env.init`` or ``env.reset``)."""

    step_fn, init_fn, observe = _observe_once(step_fn, init_fn)

    def step(state: Any, action: jax.Array, key: jax.Array) -> Any:
        # the flags of an episode end delivered by the previous call are cleared first
        state = state.replace(terminated=jnp.zeros_like(state.terminated),
                              truncated=jnp.zeros_like(state.truncated))
        state = step_fn(state, action)
        fresh = init_fn(key).replace(**{f: getattr(state, f) for f in state.episode_end_fields})
        done = state.terminated | state.truncated
        state = jax.tree.map(lambda x, y: jnp.where(done, x, y), fresh, state)
        return state if observe is None else observe(state)

    return step


def auto_reset_batch(step_fn: Callable[[Any, jax.Array], Any], init_fn: Callable[[jax.Array], Any],
                     reserve: int | None = None) -> Callable[[Any, jax.Array, jax.Array], Any]:
    """:func:`auto_reset` for a whole batch (states with a leading batch axis, not under
    ``vmap``): ``step(states, actions, key)`` steps every game, then deals new games only
    for those that ended. Each call draws ``reserve`` new games (default
    ``max(8, B // 16)``) and hands them to the ended games in batch order; a call in which
    more games end than that draws a new game for every slot instead (``lax.cond``), so
    every new game is an independent deal whatever happens. With ``vmap`` of
    :func:`auto_reset` every game draws a deal on every step, which on CPUs costs more than
    the step."""

    step_fn, init_fn, observe = _observe_once(step_fn, init_fn)

    def step(states: Any, actions: jax.Array, key: jax.Array) -> Any:
        states = states.replace(terminated=jnp.zeros_like(states.terminated),
                                truncated=jnp.zeros_like(states.truncated))
        states = jax.vmap(step_fn)(states, actions)
        done = states.terminated | states.truncated
        batch = done.shape[0]
        spare = min(batch, reserve if reserve is not None else max(8, batch // 16))
        ends = {f: getattr(states, f) for f in states.episode_end_fields}

        def few() -> Any:  # the new games written into the ended games' slots only
            slots = jnp.nonzero(done, size=spare, fill_value=batch)[0]
            fresh = jax.vmap(init_fn)(jax.random.split(key, spare))
            fresh = fresh.replace(**{f: v.at[slots].get(mode="clip") for f, v in ends.items()})
            return jax.tree.map(lambda x, y: x.at[slots].set(y, mode="drop"), states, fresh)

        def every() -> Any:
            fresh = jax.vmap(init_fn)(jax.random.split(key, batch)).replace(**ends)
            pick = lambda x, y: jnp.where(done.reshape(done.shape + (1,) * (x.ndim - 1)), x, y)  # noqa: E731
            return jax.tree.map(pick, fresh, states)

        states = jax.lax.cond(done.sum() <= spare, few, every)
        return states if observe is None else jax.vmap(observe)(states)

    return step
