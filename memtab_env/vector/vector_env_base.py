"""What the batched single-agent views of every game share: :class:`BatchedVectorView`.

Each game's Gymnasium vector env (``MemTabVectorEnv``, ``PelmanismVectorEnv``,
``MemoryBoardVectorEnv``, in the game's folder under :mod:`memtab_env.games`; the
``vector_entry_point`` of its registration) is this class with the game's engine and
kernels: the options, spaces, info keys, same-step auto-reset, seeding and redeals are
the same for every game, as MemTab's module (:mod:`memtab_env.games.memtab.vector_env`)
states in full.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from memtab_env.errors import (
    IllegalActionError,
    InvalidOptionError,
    MemTabError,
    check_finite,
    unknown_option_error,
)
from memtab_env.gym_env import ILLEGAL_MODES, MAX_REDEALS, opponents_per_seat, too_many_redeals
from memtab_env.registry import game_spec, load
from memtab_env.vector.batch_kernels import OPPONENT_CODES, view_width
from memtab_env.vector.engine_base import seed_array, take_actions


def _opponent_codes(opponents: Any, count: int, env_id: str, allowed: tuple[str, ...]) -> np.ndarray:
    """Policy code of the seat ``k`` places after the learner at index ``k`` (index 0, the
    learner itself, is unused); ``allowed``: the opponents the game's batch plays exactly."""
    names = opponents_per_seat(
        opponents, count, isinstance(opponents, str),
        f"one of {sorted(allowed)} or a sequence of them (one per other seat, in seat order "
        "after the learner)")
    codes = np.zeros(count + 1, dtype=np.int64)
    for k, name in enumerate(names, start=1):
        if not isinstance(name, str) or name not in allowed:
            raise InvalidOptionError(
                f"opponent {name!r} cannot be played exactly inside the batch; allowed: "
                f"{sorted(allowed)}, or one of those per other seat (use "
                f"gymnasium.make({env_id!r}) for other agents)"
            )
        codes[k] = OPPONENT_CODES[name]
    return codes


class BatchedVectorView(VectorEnv):
    """What the batched single-agent views share (every game's ``vector_entry_point``):
    option checks, spaces, buffers, the Gymnasium ``reset``/``step`` around the game's
    compiled kernels, infos, same-step auto-reset and ``final_info``.

    A subclass names its game and builds its engine, whose kernels module holds the
    single-agent loop (``loops``, :mod:`memtab_env.vector.row_loops` compiled over the
    game's row kernels) and ``SEAT``, the learner's column, and which gives the row
    kernels' arguments; see the subclasses for the game options.

    Args:
        num_envs: B.
        game: the subclass's game (the registration passes it).
        opponents: ``"random"``, ``"greedy"``, or one of those per other seat in seat order
            after the learner (``opponent_names``: those the game's kernels play).
        learner_seat: the learner's seat, or ``"random"`` (drawn per episode).
        memory: memory model of the learner's observation and of the greedy opponents'
            observations (``"perfect"``, ``"none"``, ``"decay:p"``, ``"window:k"``).
        reward: ``"win"``, ``"score"`` or ``"turns"``.
        obs_mode: ``"flat"`` (the only mode of the vector env).
        illegal_action: ``"penalty"`` or ``"raise"``.
        illegal_penalty: reward of an illegal action in ``"penalty"`` mode.
        max_episode_steps: learner steps before truncation (``None``: never; by default
            the registration's; a game's own length cap still truncates).
        copy: return fresh observation arrays each step (default, as Gymnasium's vector
            envs); ``False`` returns a buffer that the next step overwrites.
        parallel: threads that step the games: ``None`` (every core from 2048 games on),
            ``True``, ``False`` or a number (as the game's batched engine).
        render_mode: must be ``None`` (render a game with :meth:`get_state` and the game's
            renderer).
        **game_options: the game's options (``game_options``).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    #: the game's short name and the class the error messages name
    game_name: ClassVar[str]
    #: the game options the engine takes
    game_options: ClassVar[tuple[str, ...]]
    #: the built-in opponents that the game's kernels play exactly as ``agents.make``
    opponent_names: ClassVar[tuple[str, ...]] = tuple(OPPONENT_CODES)

    def __init__(
        self,
        num_envs: int = 1,
        game: str | None = None,
        opponents: Any = "random",
        learner_seat: int | str = 0,
        memory: str = "perfect",
        reward: str = "win",
        obs_mode: str = "flat",
        illegal_action: str = "penalty",
        illegal_penalty: float = -0.1,
        max_episode_steps: int | None | str = "registered",
        copy: bool = True,
        parallel: bool | int | None = None,
        render_mode: str | None = None,
        **game_options: Any,
    ) -> None:
        spec = self._spec = game_spec(self.game_name if game is None else game)
        if max_episode_steps == "registered":  # the registration's, as gymnasium.make
            max_episode_steps = spec.max_episode_steps
        if spec.name != self.game_name:
            raise InvalidOptionError(
                f"{type(self).__name__} plays {self.game_name} only, got game={game!r}"
            )
        unknown = sorted(set(game_options) - set(self.game_options))
        if unknown:
            raise unknown_option_error(unknown, f"{type(self).__name__} (game options)",
                                       sorted(self.game_options))
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
                "the vector env does not render; use get_state(i) with "
                f"{spec.renderer.partition(':')[0]}"
            )
        self.engine = self._make_engine(num_envs, memory, reward, parallel, game_options)
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
        self._opponents = _opponent_codes(opponents, n - 1, spec.env_id, self.opponent_names)
        self.illegal_action = illegal_action
        self.illegal_penalty = check_finite("illegal_penalty", illegal_penalty)
        self.max_episode_steps = max_episode_steps
        self._max_steps = int(max_episode_steps) if max_episode_steps is not None else 2**62
        self.copy = bool(copy)
        self.render_mode = None

        enc = eng.encoder
        p = self.num_positions
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
        self._final_scores = np.zeros((b, n), dtype=np.int64)
        self._final_bits = np.zeros(b, dtype=np.int64)
        self._final_seed = np.zeros(b, dtype=np.uint64)
        self._final_seat = np.zeros(b, dtype=np.int64)
        self._final_turns = np.zeros(b, dtype=np.int64)
        self._final_flips = np.zeros(b, dtype=np.int64)
        self._actions = np.zeros(b, dtype=np.int64)
        self._redeals = np.zeros(b, dtype=np.int64)
        #: the view's generators (batch_kernels.view_width: its np_random and the opponents')
        self._view_rng = np.zeros((b, view_width(n)), dtype=np.uint64)
        self._has_reset = False

    # -- what a game gives -------------------------------------------------------------
    def _make_engine(self, num_envs: int, memory: str, reward: str, parallel: bool | int | None,
                     game_options: dict[str, Any]) -> Any:
        """The game's batched engine (its registry row's ``batched_engine``)."""
        engine_cls = load(self._spec.batched_engine)
        return engine_cls(num_envs, memory=memory, reward=reward, parallel=parallel, **game_options)

    @property
    def num_positions(self) -> int:
        """P: the learner's actions (flip positions)."""
        return int(self.engine.num_positions)

    def _check_learner_gets_a_turn(self) -> None:
        """Refuse options under which the learner never plays (none by default)."""

    def _first_illegal(self, acts: np.ndarray) -> int:
        """Index of the first game whose action is not in the learner's mask, or -1."""
        ok = (acts >= 0) & (acts < self.num_positions)
        ok[ok] = self._masks[np.flatnonzero(ok), acts[ok]] != 0
        bad = np.flatnonzero(~ok)
        return int(bad[0]) if bad.size else -1

    def _final_extra(self) -> dict[str, np.ndarray]:
        """Game-specific ``final_info`` entries."""
        return {}

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
        st, tm, consts, deal = eng._row_args()
        eng.run(
            eng.kernels.loops.venv_reset_range, self.num_envs, st, tm, eng.rng, self._view_rng,
            seed_array(seed, self.num_envs), self._steps, self._obs, self._masks, self._redeals,
            self._seat_mode, self._opponents, MAX_REDEALS, eng._max_flips, consts, deal,
            eng._p_forget,
        )  # fmt: skip
        self._check_redeals()
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
        acts = self._actions
        a = take_actions(actions, acts)
        if self.illegal_action == "raise":
            bad = self._first_illegal(acts)
            if bad >= 0:
                legal = np.flatnonzero(self._masks[bad]).tolist()
                raise IllegalActionError(
                    f"env {bad}: cannot flip position {int(a[bad])} (positions are "
                    f"0..{self.num_positions - 1}); face-down positions that may be flipped: "
                    f"{legal}. No game was changed."
                )
        obs = np.empty_like(self._obs) if self.copy else self._obs
        st, tm, consts, deal = eng._row_args()
        eng.run(
            eng.kernels.loops.venv_step_range, self.num_envs, st, tm, eng.rng, self._view_rng, acts,
            self._steps, obs, self._masks, self._rewards, self._terminated, self._truncated,
            self._illegal, self._final_obs, self._final_scores, self._final_bits, self._final_seed,
            self._final_seat, self._final_turns, self._final_flips, self._redeals, self._seat_mode,
            self._opponents, self._max_steps, self.illegal_penalty, eng._scheme, MAX_REDEALS,
            eng._max_flips, consts, deal, eng._p_forget,
        )  # fmt: skip
        self._check_redeals()
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

    def _check_redeals(self) -> None:
        """Raise the scalar view's error where a slot's opponents ended more than
        ``MAX_REDEALS`` deals in a row before the learner's first flip (the kernels stop
        the slot there)."""
        failed = np.flatnonzero(self._redeals > MAX_REDEALS)
        if failed.size:
            self._has_reset = False  # the slot holds a finished game: reset() first
            seat = int(self.learner_seats[failed[0]])
            raise InvalidOptionError(f"game {int(failed[0])}: {too_many_redeals(seat)}")

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
            **self._final_extra(),
            "learner_seat": self._final_seat.copy(),
            "game_seed": self._final_seed.copy(),
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
        return self.engine.state[:, self.engine.kernels.SEAT].astype(np.int64)

    def get_state(self, i: int) -> Any:
        """Game ``i`` as a scalar state of the game's engine."""
        return self.engine.get_state(i)

    @property
    def game_seeds(self) -> np.ndarray:
        """(B,) game seed of the game in each slot (replays it in the AEC env)."""
        return self.engine.game_seed.copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Stops the engine's worker threads."""
        self.engine.close()
