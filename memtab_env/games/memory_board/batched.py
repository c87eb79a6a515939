"""``BatchedMemoryBoard``: B games of Memory: The Board Game stepped by compiled kernels.

B games as rows of an int32 matrix (:mod:`memtab_env.games.memory_board.batched_kernels`),
one action per game per :meth:`BatchedMemoryBoard.step`, with auto-reset; deals, game
seeds and forgetting streams are the AEC env's, slot for slot, as in
:mod:`memtab_env.games.memtab.batched` (a slot reset with seed ``s`` plays the games of
``memory_board_v0.raw_env`` after ``reset(seed=s)`` and plain ``reset()`` calls). Its
single-agent Gymnasium view is :mod:`memtab_env.games.memory_board.vector_env`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.games.memory_board import batched_kernels as bk
from memtab_env.games.memory_board.observation import MemoryBoardEncoder
from memtab_env.games.memory_board.rules import MemoryBoard, MemoryBoardState
from memtab_env.vector.engine_base import BatchedGames


class BatchedMemoryBoard(BatchedGames):
    """B games of Memory: The Board Game in lockstep (one action per game per step).

    Args:
        num_envs: B.
        memory: memory model of :meth:`observations` (and of the vector env).
        reward: ``"win"``, ``"score"`` (the change of the acting seat's tree) or
            ``"turns"``.
        autoreset: start a slot's next game in the step that ends one (default).
        parallel: threads, as :class:`~memtab_env.games.memtab.batched.BatchedMemTab`.
        **game_options: ``num_players`` (1..4), ``first_player``, ``board``, ``variant``,
            ``max_turns``, as :class:`~memtab_env.games.memory_board.rules.MemoryBoard`.
    """

    kernels = bk
    score_dtype = np.int16

    def __init__(self, num_envs: int, memory: str = "perfect", reward: str = "win",
                 autoreset: bool = True, parallel: bool | int | None = None,
                 **game_options: Any) -> None:
        game = MemoryBoard(**game_options)
        self._setup(num_envs, game, MemoryBoardEncoder(game), memory, reward, autoreset, parallel)
        b, n = self.num_envs, self.num_players
        self.num_spaces = p = game.num_spaces
        self.num_positions = game.num_actions  # what the learner chooses among
        board = game.board
        self._land = board.landscape.astype(np.int64)
        self._kland = board.kind_landscape.astype(np.int64)
        self._adj = board.adjacency.astype(np.int8)
        self._nbr = np.full((p, 4), -1, dtype=np.int64)  # side neighbours, -1 padded
        for s, near in enumerate(board.neighbours):
            self._nbr[s, : len(near)] = near
        self._supply0 = np.array(board.trunks, dtype=np.int64)
        self._children = game.variant == "children"
        self._max_len = game.info.max_game_length
        self._max_flips = 2**62  # its cap counts every action (not only flips): its own
        self.state = np.zeros((b, bk.state_width(p, n, self._decay)), dtype=np.int32)
        self._no_times = np.zeros((b, 0), dtype=np.int32)  # the loops' second state matrix

    def _row_args(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
        return self.state, self._no_times, (
            self.num_spaces, self.game.num_kinds, self.num_players, self.first_player, self._land,
            self._kland, self._adj, self._nbr, self.game.num_landscapes, self._children,
            self.game.max_turns, self._max_len, self._mem, self._window,
        ), (self._supply0,)  # fmt: skip

    @property
    def flips(self) -> np.ndarray:
        """(B,) flips made in each game so far (returns and passes are not flips)."""
        return self.state[:, bk.CLOCK]

    def get_state(self, i: int) -> MemoryBoardState:
        """Game ``i`` as a :class:`~memtab_env.games.memory_board.rules.MemoryBoardState` (a
        copy), for the scalar engine, renderers and records."""
        self._check_reset()
        row, p, n = self.state[i], self.num_spaces, self.num_players
        game = self.game
        st = MemoryBoardState(row[bk.HEAD : bk.HEAD + p].astype(np.int8), n, self.first_player,
                              game.board)
        st.status[:] = row[bk.HEAD + p : bk.HEAD + 2 * p]
        st.holder[:] = row[bk.HEAD + 2 * p : bk.HEAD + 3 * p]
        st.placed[:] = row[bk.HEAD + 3 * p : bk.HEAD + 4 * p]
        st.trunks[:] = row[bk.TRUNKS : bk.TRUNKS + 4 * n].reshape(n, 4)
        st.supply[:] = row[bk.SUPPLY : bk.SUPPLY + 4]
        st.returning[:] = row[bk.RETURNING : bk.RETURNING + 4]
        for name, col in (("first_flip", bk.FIRST), ("current", bk.CURRENT), ("phase", bk.PHASE),
                          ("stage", bk.STAGE), ("num_placed", bk.NPLACED),
                          ("final_left", bk.FINAL_LEFT), ("last_pair", bk.LAST_PAIR),
                          ("turn", bk.TURN)):
            setattr(st, name, int(row[col]))
        st.over = bool(row[bk.OVER] == bk.OVER_RULES)
        st.capped = bool(row[bk.CAPPED])
        return st
