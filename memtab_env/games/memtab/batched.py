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

from memtab_env.games.memtab import batched_kernels as kn
from memtab_env.games.memtab.observation import MemTabEncoder
from memtab_env.games.memtab.rules import NUM_POSITIONS, MemTab, MemTabState, parse_layout
from memtab_env.vector.engine_base import BatchedGames, block_view, column_view


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

    kernels = kn
    action_words = ("flip position", "face-down positions that may be flipped")

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
        game = MemTab(num_players=num_players, first_player=first_player)
        self._setup(num_envs, game, MemTabEncoder(game), memory, reward, autoreset, parallel)
        b, n = self.num_envs, self.num_players
        self.state = np.zeros((b, kn.state_width(n, self._mem)), dtype=np.int8)
        self._no_times = np.zeros((b, 0), dtype=np.int32)  # the loops' second state matrix
        self._remembered = np.zeros((b, NUM_POSITIONS), dtype=bool)

    def _row_args(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
        return self.state, self._no_times, (self.num_players, self.first_player, self._mem,
                                            self._window), ()

    def _parse_layout(self, layout: Any) -> np.ndarray:
        return parse_layout(layout)

    def _set_layouts(self, indices: np.ndarray, layouts: np.ndarray) -> None:
        kn.set_layouts(self.state, indices, layouts)

    # -- views of the state matrix ----------------------------------------------------
    layout = block_view("state", kn.LAYOUT, NUM_POSITIONS, "(B, 28) kind dealt at each position.")
    status = block_view("state", kn.STATUS, NUM_POSITIONS, "(B, 28) 0 DOWN, 1 UP, 2 GONE, 3 TABLEAU.")
    owner = block_view("state", kn.OWNER, NUM_POSITIONS,
                       "(B, 28) seat whose tableau holds the card, -1 otherwise.")
    turn_flips = block_view("state", kn.TFLIPS, 3, "(B, 3) positions flipped so far this turn, -1.")
    current = column_view("state", kn.CURRENT, "(B,) seat on turn.")
    flip = column_view("state", kn.FLIP, "(B,) index of the next flip within the turn (0, 1, 2).")
    pairs = column_view("state", kn.PAIRS, "(B,) pairs removed so far this turn.")
    turn = column_view("state", kn.TURN, "(B,) turns started, 1-based.")
    winner = column_view("state", kn.WINNER, "(B,) the instant winner, -1 otherwise.")
    flips = column_view("state", kn.CLOCK, "(B,) flips made in each game so far.")

    @property
    def over(self) -> np.ndarray:
        return self.state[:, kn.OVER].astype(bool)

    @property
    def instant_win(self) -> np.ndarray:
        return self.state[:, kn.IWIN].astype(bool)

    @property
    def scores(self) -> np.ndarray:
        return self.state[:, kn.BASE : kn.BASE + self.num_players]

    @property
    def final_instant_win(self) -> np.ndarray:
        """(B,) bool: whether the games that ended in the last step ended by instant win."""
        return (self._final_bits & 1).astype(bool)

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
        self._step(actions)
        return self._rewards, self._terminated

    # -- queries ------------------------------------------------------------------------
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

    def greedy_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64: the flip of the deterministic ``greedy`` policy (perfect memory) of
        the seat on turn in each game (-1 for a finished game)."""
        self._check_reset()
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        self.run(kn.greedy_range, self.num_envs, self.state, out)
        return out

    def get_state(self, i: int) -> MemTabState:
        """Game ``i`` as a :class:`~memtab_env.games.memtab.rules.MemTabState` (a copy of the
        scalar part of its row), for the scalar engine, renderers and records."""
        self._check_reset()
        st = MemTabState.__new__(MemTabState)
        st.data = self.state[i, : kn.ROW].copy()
        return st

    def _extra_buffers(self) -> tuple[np.ndarray, ...]:
        return (self._remembered,)
