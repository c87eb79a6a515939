"""``PelmanismVectorEnv``: the single-agent Pelmanism view for B games at once (Gymnasium).

``gymnasium.make_vec("Pelmanism-v0", num_envs=B, vectorization_mode="vector_entry_point",
deck="pairs:8")`` (the registration names this class as its ``vector_entry_point``), or
directly ``PelmanismVectorEnv(num_envs=B, opponents="greedy")``. It is
:class:`~memtab_env.vector.gym_vector.MemTabVectorEnv` for Pelmanism: the same options,
spaces, info keys and auto-reset, over :class:`~memtab_env.vector.pelmanism.BatchedPelmanism`.

It is :class:`memtab_env.gym_env.SingleAgentEnv` batched: the learner holds one seat of
every game, its opponents are stepped inside the compiled batch, and each ``step`` makes
one learner flip in every game followed by the opponents' flips until the learner is on
turn again or the game has ended.

- Observation: the learner's flat observation (``PelmanismEncoder``, ``P (3 + K) + 2 n +
  2`` values) as float32; action: one flip position per game (``MultiDiscrete([P] * B)``).
- ``action_masks()`` (B, P) int8 (sb3-contrib's name); also ``info["action_mask"]``.
- Rewards (:mod:`memtab_env.rewards`): ``"win"`` (terminal share of +1/-1; 0 in a solo
  game), ``"score"`` (+1 when the learner's flip takes a pair) or ``"turns"`` (-1 when
  its flip ends its turn: the solo measure).
- Illegal learner action: ``illegal_penalty`` as reward, nothing changes (the opponents
  do not move either), ``info["illegal_action"]`` is True; ``illegal_action="raise"``
  raises :class:`~memtab_env.errors.IllegalActionError` before any game changes. Nothing
  is remapped.
- Episodes end when the game is over (``terminated``), or are truncated after
  ``max_episode_steps`` learner steps (as ``TimeLimit``; 3000 by default, the
  registration's) or when the game's flips reach the engine's practical cap
  (``game.info.max_game_length``, where the AEC env truncates). Auto-reset in the same
  step (``AutoresetMode.SAME_STEP``): the returned observation is the next episode's
  first one; ``info["final_obs"]`` and ``info["final_info"]`` (``scores``, ``winners``,
  ``learner_seat``, ``game_seed``, ``turns``, ``flips``) hold the finished ones.
- Opponents: ``"random"`` (uniform legal flip) and ``"greedy"``
  (``agents.pelmanism_agents.PelmanismGreedyAgent`` with its own memory, the default:
  each greedy seat observes the game under the ``memory`` model at each of its flips,
  records what it is shown, and applies the exact greedy rule), vectorised.
- Seeds: ``reset(seed=s)`` gives game ``i`` the seed ``s + i`` and the games of the scalar
  view reset with that seed follow (:mod:`memtab_env.vector.pelmanism`); with
  ``learner_seat`` fixed and ``greedy`` opponents every episode equals the scalar
  ``SingleAgentEnv``'s, flip for flip. The learner seat (``"random"``) and the random
  opponents draw from each game's auxiliary stream instead of the scalar view's generator.
- A game that the opponents end before the learner's first flip is set aside and the
  slot's next game is dealt, as the scalar view does (the greedy opponents start that
  game with an empty memory, where the scalar view's agents keep what they saw in the
  game set aside). Configurations in which every deal ends so (a deck of one kind, or a
  ``max_turns`` limit reached before the learner's seat plays) are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from memtab_env.errors import IllegalActionError, InvalidOptionError, MemTabError
from memtab_env.games.pelmanism import PelmanismState
from memtab_env.registry import GAMES, game_spec
from memtab_env.vector import kernels as kn
from memtab_env.vector import pelmanism_kernels as pk
from memtab_env.vector.engine import seed_array
from memtab_env.vector.pelmanism import BatchedPelmanism

ILLEGAL_MODES = ("penalty", "raise")
GAME_OPTIONS = ("deck", "first_player", "max_turns", "num_players")
#: learner steps before truncation: the registration's (``gymnasium.make`` uses the same)
DEFAULT_MAX_EPISODE_STEPS = GAMES["pelmanism"].max_episode_steps


def _opponent_codes(opponents: Any, count: int) -> np.ndarray:
    """Policy code of the seat ``k`` places after the learner at index ``k`` (index 0, the
    learner itself, is unused)."""
    allowed = sorted(kn.OPPONENT_CODES)
    if isinstance(opponents, str):
        names = [opponents] * count
    elif isinstance(opponents, Sequence):
        names = list(opponents)
        if len(names) != count:
            raise InvalidOptionError(
                f"opponents: {count} other seat(s) need {count} opponent(s), got {len(names)}"
            )
    else:
        raise InvalidOptionError(
            f"opponents must be one of {allowed} or a sequence of them "
            f"(one per other seat, in seat order after the learner); got {opponents!r}"
        )
    codes = np.zeros(count + 1, dtype=np.int64)
    for k, name in enumerate(names, start=1):
        if not isinstance(name, str) or name not in kn.OPPONENT_CODES:
            raise InvalidOptionError(
                f"the vector env steps only vectorised opponents {allowed}; got {name!r} "
                "(use gymnasium.make('Pelmanism-v0') for other agents)"
            )
        codes[k] = kn.OPPONENT_CODES[name]
    return codes


class PelmanismVectorEnv(VectorEnv):
    """B single-agent Pelmanism games stepped together; see the module docstring.

    Args:
        num_envs: B.
        game: must be ``"pelmanism"`` (the registration passes it).
        opponents: ``"random"``, ``"greedy"``, or one of those per other seat in seat order
            after the learner.
        learner_seat: the learner's seat, or ``"random"`` (drawn per episode).
        memory: memory model of the learner's observation and of the greedy opponents'
            observations (``"perfect"``, ``"none"``, ``"decay:p"``, ``"window:k"``).
        reward: ``"win"``, ``"score"`` or ``"turns"``.
        obs_mode: ``"flat"`` (the only mode of the vector env).
        illegal_action: ``"penalty"`` or ``"raise"``.
        illegal_penalty: reward of an illegal action in ``"penalty"`` mode.
        max_episode_steps: learner steps before truncation (``None``: never; the game's
            flip cap still truncates).
        copy: return fresh observation arrays each step (default, as Gymnasium's vector
            envs); ``False`` returns a buffer that the next step overwrites.
        parallel: threads that step the games: ``None`` (every core from 2048 games on),
            ``True``, ``False`` or a number (as :class:`BatchedPelmanism`).
        render_mode: must be ``None`` (render a game with :meth:`get_state` and
            :mod:`memtab_env.render_pelmanism`).
        **game_options: ``deck``, ``num_players`` (1..6), ``first_player``, ``max_turns``.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        game: str = "pelmanism",
        opponents: Any = "random",
        learner_seat: int | str = 0,
        memory: str = "perfect",
        reward: str = "win",
        obs_mode: str = "flat",
        illegal_action: str = "penalty",
        illegal_penalty: float = -0.1,
        max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
        copy: bool = True,
        parallel: bool | int | None = None,
        render_mode: str | None = None,
        **game_options: Any,
    ) -> None:
        if game_spec(game).name != "pelmanism":
            raise InvalidOptionError(
                f"PelmanismVectorEnv plays Pelmanism only, got game={game!r} "
                "(MemTab: memtab_env.vector.MemTabVectorEnv)"
            )
        unknown = sorted(set(game_options) - set(GAME_OPTIONS))
        if unknown:
            raise InvalidOptionError(
                f"unknown option(s) {unknown}; allowed game options: {list(GAME_OPTIONS)}"
            )
        if obs_mode != "flat":
            raise InvalidOptionError(
                f"obs_mode {obs_mode!r}: the vector env has the flat observation only "
                "(masks come from action_masks() and info['action_mask'])"
            )
        if illegal_action not in ILLEGAL_MODES:
            raise InvalidOptionError(
                f"illegal_action must be one of {list(ILLEGAL_MODES)}, got {illegal_action!r}"
            )
        if render_mode is not None:
            raise InvalidOptionError(
                "the vector env does not render; use get_state(i) with memtab_env.render_pelmanism"
            )
        self.engine = BatchedPelmanism(
            num_envs, memory=memory, reward=reward, parallel=parallel, **game_options
        )
        eng = self.engine
        n = eng.num_players
        if learner_seat == "random":
            self._seat_mode = -1
        elif (
            isinstance(learner_seat, (int, np.integer))
            and not isinstance(learner_seat, bool)
            and 0 <= int(learner_seat) < n
        ):
            self._seat_mode = int(learner_seat)
        else:
            raise InvalidOptionError(
                f"learner_seat must be 'random' or an integer in [0, {n - 1}], got {learner_seat!r}"
            )
        self._check_learner_gets_a_turn()
        if max_episode_steps is not None and (
            isinstance(max_episode_steps, bool)
            or not isinstance(max_episode_steps, (int, np.integer))
            or max_episode_steps < 1
        ):
            raise InvalidOptionError(
                f"max_episode_steps must be a positive integer or None, got {max_episode_steps!r}"
            )
        self.num_envs = eng.num_envs
        self.learner_seat_option = learner_seat
        self.opponents = opponents
        self._opponents = _opponent_codes(opponents, n - 1)
        self.illegal_action = illegal_action
        self.illegal_penalty = float(illegal_penalty)
        self.max_episode_steps = max_episode_steps
        self._max_steps = int(max_episode_steps) if max_episode_steps is not None else 2**62
        self.copy = bool(copy)
        self.render_mode = None

        enc = eng.encoder
        p = eng.num_positions
        self.single_observation_space = spaces.Box(
            low=enc.low.astype(np.float32), high=enc.high.astype(np.float32), dtype=np.float32
        )
        self.single_action_space = spaces.Discrete(p)
        b, d = self.num_envs, enc.size
        self.observation_space = spaces.Box(
            low=np.tile(self.single_observation_space.low, (b, 1)),
            high=np.tile(self.single_observation_space.high, (b, 1)),
            dtype=np.float32,
        )
        self.action_space = spaces.MultiDiscrete(np.full(b, p, dtype=np.int64))

        self._obs = np.zeros((b, d), dtype=np.float32)
        self._final_obs = np.zeros((b, d), dtype=np.float32)
        self._masks = np.zeros((b, p), dtype=np.int8)
        self._steps = np.zeros(b, dtype=np.int64)
        self._rewards = np.zeros(b, dtype=np.float64)
        self._terminated = np.zeros(b, dtype=bool)
        self._truncated = np.zeros(b, dtype=bool)
        self._illegal = np.zeros(b, dtype=bool)
        self._final_scores = np.zeros((b, n), dtype=np.int8)
        self._final_bits = np.zeros(b, dtype=np.int64)
        self._final_seed = np.zeros(b, dtype=np.uint64)
        self._final_seat = np.zeros(b, dtype=np.int64)
        self._final_turns = np.zeros(b, dtype=np.int64)
        self._final_flips = np.zeros(b, dtype=np.int64)
        self._actions = np.zeros(b, dtype=np.int64)
        self._has_reset = False

    def _check_learner_gets_a_turn(self) -> None:
        """Refuse a fixed learner seat that no deal ever lets play (the kernels would deal
        again and again): a deck of one kind (every flip matches, so the first seat takes
        every card) or a ``max_turns`` limit reached before the learner's first turn."""
        eng = self.engine
        if self._seat_mode < 0:
            return
        before = (self._seat_mode - eng.first_player) % eng.num_players  # turns before it
        if before and eng.num_kinds == 1:
            raise InvalidOptionError(
                f"deck {eng.game.deck.spec!r} has one kind: seat {eng.first_player} takes every "
                f"card before learner_seat {self._seat_mode} plays; use learner_seat="
                f"{eng.first_player} or 'random'"
            )
        if eng.max_turns is not None and eng.max_turns <= before:
            raise InvalidOptionError(
                f"max_turns={eng.max_turns} ends every game before learner_seat "
                f"{self._seat_mode} plays ({before} turn(s) come first); allowed: max_turns > "
                f"{before}, or learner_seat 'random'"
            )

    # -- Gymnasium VectorEnv API ------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every game: ``seed`` ``None``, an int (game ``i`` gets ``seed + i``) or one
        seed per game. No ``options`` are supported."""
        if options:
            raise InvalidOptionError(f"the vector env takes no reset options, got {sorted(options)}")
        eng = self.engine
        seeds = seed_array(seed, self.num_envs)
        args = (
            eng.state, eng.times, eng.rng, seeds, self._steps, self._obs, self._masks,
            self._seat_mode, self._opponents, eng._cards, eng._card_kind, eng.num_kinds,
            eng.num_players, eng.first_player, eng._p_forget, eng._mem, eng._window,
            eng._max_turns, eng.max_flips,
        )  # fmt: skip
        eng.run(pk.venv_reset_range, self.num_envs, *args)
        eng._has_reset = True
        eng._masks_fresh = False
        self._has_reset = True
        obs = self._obs.copy() if self.copy else self._obs
        return obs, self._step_info()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner flip in every game (then its opponents); same-step auto-reset."""
        if not self._has_reset:
            raise MemTabError("call reset() before step()")
        eng = self.engine
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise IllegalActionError(
                f"actions must be an integer array of shape ({self.num_envs},), "
                f"got {a.dtype} {a.shape}"
            )
        acts = self._actions
        np.copyto(acts, a, casting="unsafe")
        if self.illegal_action == "raise":
            bad = pk.venv_first_illegal(eng.state, acts, eng.num_positions)
            if bad >= 0:
                legal = np.flatnonzero(self._masks[bad]).tolist()
                raise IllegalActionError(
                    f"env {bad}: cannot flip position {int(a[bad])} (positions are "
                    f"0..{eng.num_positions - 1}); face-down positions that may be flipped: "
                    f"{legal}. No game was changed."
                )
        obs = np.empty_like(self._obs) if self.copy else self._obs
        args = (
            eng.state, eng.times, eng.rng, acts, self._steps, obs, self._masks, self._rewards,
            self._terminated, self._truncated, self._illegal, self._final_obs,
            self._final_scores, self._final_bits, self._final_seed, self._final_seat,
            self._final_turns, self._final_flips, self._seat_mode, self._opponents,
            self._max_steps, self.illegal_penalty, eng._scheme, eng._cards, eng._card_kind,
            eng.num_kinds, eng.num_players, eng.first_player, eng._p_forget, eng._mem,
            eng._window, eng._max_turns, eng.max_flips,
        )  # fmt: skip
        eng.run(pk.venv_step_range, self.num_envs, *args)
        eng._masks_fresh = False
        if not self.copy:
            self._obs = obs
        info = self._step_info()
        info["illegal_action"] = self._illegal.copy()
        info["_illegal_action"] = np.ones(self.num_envs, dtype=bool)
        done = self._terminated | self._truncated
        if done.any():
            self._add_final(info, done)
        return (
            obs,
            self._rewards.copy(),
            self._terminated.copy(),
            self._truncated.copy(),
            info,
        )

    def _step_info(self) -> dict[str, Any]:
        every = np.ones(self.num_envs, dtype=bool)
        return {
            "action_mask": self._masks.copy(),
            "_action_mask": every,
            "learner_seat": self.learner_seats,
            "_learner_seat": every.copy(),
        }

    def _add_final(self, info: dict[str, Any], done: np.ndarray) -> None:
        """``final_obs`` (object array of rows, as Gymnasium's SyncVectorEnv) and
        ``final_info`` (arrays with ``_key`` masks) of the episodes that ended."""
        idx = np.flatnonzero(done)
        final_obs = np.full(self.num_envs, None, dtype=object)
        rows = self._final_obs[idx]  # one copy of the finished rows
        for j, i in enumerate(idx.tolist()):
            final_obs[i] = rows[j]
        n = self.engine.num_players
        bits = self._final_bits[:, None] >> (1 + np.arange(n))
        final_info = {
            "scores": self._final_scores.astype(np.int64),
            "winners": (bits & 1).astype(bool) & self._terminated[:, None],
            "learner_seat": self._final_seat.copy(),
            "game_seed": self._final_seed.copy(),
            "turns": self._final_turns.copy(),
            "flips": self._final_flips.copy(),
        }
        for key in list(final_info):
            final_info["_" + key] = done.copy()
        info["final_obs"] = final_obs
        info["_final_obs"] = done.copy()
        info["final_info"] = final_info
        info["_final_info"] = done.copy()

    def action_masks(self) -> np.ndarray:
        """(B, P) int8: the learner's legal flips in every game (a fresh array)."""
        return self._masks.copy()

    @property
    def learner_seats(self) -> np.ndarray:
        """(B,) the learner's seat in each game."""
        return self.engine.state[:, pk.SEAT].astype(np.int64)

    def get_state(self, i: int) -> PelmanismState:
        """Game ``i`` as a scalar :class:`~memtab_env.games.pelmanism.PelmanismState`."""
        return self.engine.get_state(i)

    @property
    def game_seeds(self) -> np.ndarray:
        """(B,) game seed of the game in each slot (replays it in the AEC env)."""
        return self.engine.game_seed.copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Stops the engine's worker threads."""
        self.engine.close()
