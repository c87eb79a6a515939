"""``BatchedMemTab``: B MemTab games stepped at once by compiled kernels.

Each call to :meth:`BatchedMemTab.step` makes one flip in every game (the action of the
seat on turn in that game). State lives in preallocated arrays (an int8 matrix with one row
per game, see :mod:`memtab_env.games.memtab.batched_kernels`); masks, observations and step results are
written into preallocated buffers that the next call overwrites (copy what you keep).

Seeds: same games as the scalar env, game for game
------------------------------------------------
A *slot* is one of the B places of the batch. ``reset(seed=...)`` gives every slot a seed
``s`` (``seed + i`` for an int, as Gymnasium's vector envs do, or one seed per slot). The
slot then plays exactly the games of the PettingZoo env ``memtab_v0.raw_env`` after
``reset(seed=s)`` followed by plain ``reset()`` calls:

- the first game has the *game seed* ``s``; each later game (auto-reset) has the game seed
  ``np.random.default_rng(s).integers(2**63)``, drawn in turn;
- a game with game seed ``g`` is dealt ``MemTab.new_game(np.random.default_rng(g))``;
- under ``decay:p`` its forgetting streams are those of
  ``Memory.reset(np.random.SeedSequence(g).spawn(2)[1])``, so forgetting is identical too;
- the random choices that are not the scalar env's (the ``random`` policy of
  :meth:`random_actions`) come from
  ``np.random.default_rng(np.random.SeedSequence(g).spawn(2)[0])``; the vector env's
  learner seats and opponents draw as the scalar Gymnasium view does
  (:mod:`memtab_env.games.memtab.vector_env`).

NumPy's ``SeedSequence`` and ``PCG64`` are re-expressed bit for bit inside the kernels
(:mod:`memtab_env.vector.rng`), so nothing is drawn in Python per game, and any game of the
batch is replayed by the scalar env from its game seed (:attr:`game_seed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memtab_env.errors import IllegalActionError, InvalidOptionError
from memtab_env.games.memtab import batched_kernels as kn
from memtab_env.games.memtab.observation import MemTabEncoder
from memtab_env.games.memtab.rules import NUM_POSITIONS, MemTab, MemTabState, parse_layout
from memtab_env.memory import parse_memory
from memtab_env.rewards import check_reward_scheme
from memtab_env.vector.batch_kernels import REWARD_CODES, rng_width
from memtab_env.vector.engine_base import (
    BatchedGames,
    KernelRunner,
    resolve_threads,
    take_actions,
)
from memtab_env.vector.memory_kernels import MEM_DECAY, MEM_WINDOW, MEMORY_CODES


class BatchedMemTab(BatchedGames):
    """B MemTab games in lockstep: one flip per game per :meth:`step`, with auto-reset.

    Args:
        num_envs: B, the number of games.
        num_players: 1 to 6 (as :class:`~memtab_env.games.memtab.rules.MemTab`).
        first_player: seat that starts every game.
        memory: memory model of :meth:`observations` and :meth:`remembered`:
            ``"perfect"``, ``"none"``, ``"decay:p"`` or ``"window:k"``.
        reward: ``"win"`` (terminal +1/-1 shared), ``"score"`` (each seat's score change)
            or ``"turns"`` (-1 to the seat whose turn ends), as :mod:`memtab_env.rewards`.
        autoreset: start a slot's next game in the step that ends one (default). Without
            it a finished game stays as it is and :meth:`step` ignores its action until
            :meth:`reset` restarts it.
        parallel: threads that run the kernels: ``None`` (every core from
            ``PARALLEL_THRESHOLD`` games on, else one), ``True`` (every core), ``False``
            (one) or a number (:class:`KernelRunner`).

    Attributes (all arrays have one row per game; views into the state matrix):
        layout, status, owner, turn_flips, current, flip, pairs, turn, over, instant_win,
        winner: the fields of :class:`~memtab_env.games.memtab.rules.MemTabState`.
        scores: (B, n) current scores. game_seed: (B,) the game seed of each game.
        final_scores, final_winners, final_instant_win, final_game_seed: results of the
        games that ended in the last :meth:`step` (rows where ``terminated``).
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        first_player: int = 0,
        memory: str = "perfect",
        reward: str = "win",
        autoreset: bool = True,
        parallel: bool | int | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise InvalidOptionError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.game = MemTab(num_players=num_players, first_player=first_player)
        self.encoder = MemTabEncoder(self.game)
        self.memory_spec = parse_memory(memory)
        self.reward_scheme = check_reward_scheme(reward)
        self.autoreset = bool(autoreset)
        n = self.num_players = self.game.num_players
        self.first_player = self.game.first_player
        self._mem = MEMORY_CODES[self.memory_spec.kind]
        self._decay = self._mem == MEM_DECAY
        # the decay probability, or None: kernels compile the other models without decay
        self._p_forget: float | None = float(self.memory_spec.param) if self._decay else None
        self._window = int(self.memory_spec.param) if self._mem == MEM_WINDOW else 0
        self._scheme = REWARD_CODES[self.reward_scheme]
        self.threads = resolve_threads(parallel, self.num_envs)
        self.run = KernelRunner(self.threads)

        b = self.num_envs
        self.state = np.zeros((b, kn.state_width(n, self._mem)), dtype=np.int8)
        self.rng = np.zeros((b, rng_width(n, self._decay)), dtype=np.uint64)
        self.obs_size = self.encoder.size
        # preallocated outputs
        self._rewards = np.zeros((b, n), dtype=np.float32)
        self._terminated = np.zeros(b, dtype=bool)
        self.final_scores = np.zeros((b, n), dtype=np.int8)
        self._final_bits = np.zeros(b, dtype=np.int64)
        self.final_game_seed = np.zeros(b, dtype=np.uint64)
        self._masks = np.zeros((b, NUM_POSITIONS), dtype=np.int8)
        self._obs: np.ndarray | None = None  # int8 observations, allocated on first use
        self._remembered = np.zeros((b, NUM_POSITIONS), dtype=bool)
        self._actions = np.zeros(b, dtype=np.int64)
        self._observers = np.full(b, -1, dtype=np.int64)
        self._all = np.arange(b, dtype=np.int64)
        self._has_reset = False
        self._masks_fresh = False

    # -- views of the state matrix ----------------------------------------------------
    @property
    def layout(self) -> np.ndarray:
        return self.state[:, kn.LAYOUT : kn.LAYOUT + NUM_POSITIONS]

    @property
    def status(self) -> np.ndarray:
        return self.state[:, kn.STATUS : kn.STATUS + NUM_POSITIONS]

    @property
    def owner(self) -> np.ndarray:
        return self.state[:, kn.OWNER : kn.OWNER + NUM_POSITIONS]

    @property
    def turn_flips(self) -> np.ndarray:
        return self.state[:, kn.TFLIPS : kn.TFLIPS + 3]

    @property
    def current(self) -> np.ndarray:
        return self.state[:, kn.CURRENT]

    @property
    def flip(self) -> np.ndarray:
        return self.state[:, kn.FLIP]

    @property
    def pairs(self) -> np.ndarray:
        return self.state[:, kn.PAIRS]

    @property
    def turn(self) -> np.ndarray:
        return self.state[:, kn.TURN]

    @property
    def over(self) -> np.ndarray:
        return self.state[:, kn.OVER].astype(bool)

    @property
    def instant_win(self) -> np.ndarray:
        return self.state[:, kn.IWIN].astype(bool)

    @property
    def winner(self) -> np.ndarray:
        return self.state[:, kn.WINNER]

    @property
    def scores(self) -> np.ndarray:
        return self.state[:, kn.BASE : kn.BASE + self.num_players]

    @property
    def flips(self) -> np.ndarray:
        """(B,) flips made in each game so far."""
        return self.state[:, kn.CLOCK]

    @property
    def final_instant_win(self) -> np.ndarray:
        """(B,) bool: whether the games that ended in the last step ended by instant win."""
        return (self._final_bits & 1).astype(bool)

    # -- lifecycle ----------------------------------------------------------------------
    def reset(
        self,
        seed: int | Sequence[int] | np.ndarray | None = None,
        indices: Sequence[int] | np.ndarray | None = None,
        layouts: Sequence[Any] | np.ndarray | None = None,
    ) -> None:
        """Start new games (explicit reset: the slots' seed streams restart).

        Args:
            seed: ``None`` (fresh entropy), an int (slot ``j`` of the reset gets
                ``seed + j``) or one seed per reset slot, each in ``[0, 2**64)``.
            indices: the slots to reset (default: all). The first call resets all.
            layouts: optional deals, one per reset slot (card codes or kind ids, checked as
                in ``MemTab.from_layout``), replacing the seeded deal; the game seed still
                seeds memory and auxiliary streams (as the AEC env's ``layout`` option).
        """
        idx, seeds, parsed = self._reset_slots(seed, indices, layouts, parse_layout)
        self.run(
            kn.reset_range, idx.size, self.state, self.rng, idx, seeds, self.num_players,
            self.first_player, self._p_forget,
        )  # fmt: skip
        if parsed is not None:
            kn.set_layouts(self.state, idx, parsed)
        self._has_reset = True
        self._masks_fresh = False

    def step(self, actions: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flip ``actions[i]`` in game ``i`` for the seat on turn there.

        Every action is checked first; an illegal one raises
        :class:`~memtab_env.errors.IllegalActionError` naming the game and its legal
        flips, and no game changes. Returns ``(rewards, terminated)``: ``rewards`` (B, n)
        float32 per seat, ``terminated`` (B,) bool. With auto-reset the games that ended
        are already replaced by their slot's next game; their results are in
        :attr:`final_scores`, :attr:`final_winners`, :attr:`final_instant_win` and
        :attr:`final_game_seed`. The arrays are overwritten by the next step.
        """
        self._check_reset()
        acts = self._actions
        a = take_actions(actions, acts)
        bad = (kn.first_illegal if self.autoreset else kn.first_illegal_live)(self.state, acts)
        if bad >= 0:
            legal = np.flatnonzero(self.status[bad] == 0).tolist() if not self.over[bad] else []
            raise IllegalActionError(
                f"game {bad}: cannot flip position {int(a[bad])}; face-down positions that "
                f"may be flipped: {legal}. No game was changed."
            )
        args = (
            self.state, self.rng, acts, self._rewards, self._terminated, self.final_scores,
            self._final_bits, self.final_game_seed, self._masks, self.num_players,
            self.first_player, self._p_forget, self._scheme, self.autoreset,
        )  # fmt: skip
        self.run(kn.step_range, self.num_envs, *args)
        self._masks_fresh = True  # step wrote the masks of the games it left
        return self._rewards, self._terminated

    # -- queries ------------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """(B, 28) int8: the legal flips of the seat on turn (all zeros once over).
        A preallocated buffer, overwritten by the next step (which computes it)."""
        self._check_reset()
        if self._masks_fresh:
            return self._masks
        self._masks_fresh = True
        self.run(kn.masks_range, self.num_envs, self.state, self._masks)
        return self._masks

    def observations(
        self,
        observer: int | Sequence[int] | np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B, D) flat observations, byte for byte ``MemTabEncoder.encode(state, observer,
        memory.remembered(observer, face_down))``.

        Args:
            observer: ``None`` (the seat on turn in each game), a seat, or one per game.
            out: optional (B, D) int8 or float32 array to write into; by default a
                preallocated int8 buffer, overwritten by the next call.
        """
        self._check_reset()
        observers = self._observer_array(observer)
        if out is None:
            if self._obs is None:
                self._obs = np.zeros((self.num_envs, self.obs_size), dtype=np.int8)
            out = self._obs
        elif out.shape != (self.num_envs, self.obs_size) or not out.flags.c_contiguous:
            raise InvalidOptionError(
                f"out must be a C-contiguous array of shape ({self.num_envs}, {self.obs_size})"
            )
        self.run(
            kn.encode_range, self.num_envs, self.state, observers, out, self.num_players,
            self._mem, self._window,
        )  # fmt: skip
        return out

    def remembered(self, observer: int | Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """(B, 28) bool: ``Memory.remembered(observer, face_down)`` of each game
        (observer ``None`` = the seat on turn). A preallocated buffer."""
        self._check_reset()
        observers = self._observer_array(observer)
        kn.remembered_range(
            self.state, observers, self._remembered, self.num_players, self._mem,
            self._window, 0, self.num_envs,
        )  # fmt: skip
        return self._remembered

    def random_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64: a uniform legal flip per game from its auxiliary stream
        (``legal[rng.integers(len(legal))]``; -1 for a finished game)."""
        return self._policy(False, out)

    def greedy_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64: the flip of the deterministic ``greedy`` policy (perfect memory) of
        the seat on turn in each game (-1 for a finished game)."""
        return self._policy(True, out)

    def _policy(self, greedy: bool, out: np.ndarray | None) -> np.ndarray:
        self._check_reset()
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        if greedy:
            self.run(kn.greedy_range, self.num_envs, self.state, out)
        else:
            self.run(kn.random_range, self.num_envs, self.state, self.rng, out)
        return out

    def get_state(self, i: int) -> MemTabState:
        """Game ``i`` as a :class:`~memtab_env.games.memtab.rules.MemTabState` (a copy of the
        scalar part of its row), for the scalar engine, renderers and records."""
        self._check_reset()
        st = MemTabState.__new__(MemTabState)
        st.data = self.state[i, : kn.ROW].copy()
        return st

    def _buffers(self) -> tuple[np.ndarray, ...]:
        return (
            self.state, self.rng, self._rewards, self._terminated, self.final_scores,
            self._final_bits, self.final_game_seed, self._masks, self._remembered,
            self._actions, self._observers, self._all,
        )  # fmt: skip
