"""``BatchedMemoryBoard``: B games of Memory: The Board Game stepped by compiled kernels.

B games as rows of int32 matrices (:mod:`memtab_env.games.memory_board.batched_kernels`),
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
from memtab_env.games.memory_board import rules_kernels as rk
from memtab_env.games.memory_board.observation import MemoryBoardEncoder
from memtab_env.games.memory_board.rules import MemoryBoard, MemoryBoardState
from memtab_env.vector.engine_base import BatchedGames, column_view


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
        self.times = np.zeros((b, bk.time_width(p)), dtype=np.int32)

    def _row_args(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
        return self.state, self.times, (
            self.num_spaces, self.game.num_kinds, self.num_players, self.first_player, self._land,
            self._kland, self._adj, self._nbr, self.game.num_landscapes, self._children,
            self.game.max_turns, self._max_len, self._mem, self._window,
        ), (self._supply0,)  # fmt: skip

    flips = column_view("times", bk.CLOCK,
                        "(B,) flips made in each game so far (returns and passes are not flips).")

    def get_state(self, i: int) -> MemoryBoardState:
        """Game ``i`` as a :class:`~memtab_env.games.memory_board.rules.MemoryBoardState` (a
        copy), for the scalar engine, renderers and records."""
        self._check_reset()
        data = self.state[i : i + 1, : rk.state_size(self.num_spaces)].copy()
        data[0, rk.OVER] = data[0, rk.OVER] == bk.OVER_RULES
        data[0, rk.SPARE] = 0
        st = MemoryBoardState.from_row(data, self.num_players)
        return st
