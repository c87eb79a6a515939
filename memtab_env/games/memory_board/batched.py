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

from memtab_env.errors import InvalidOptionError
from memtab_env.games.memory_board import batched_kernels as bk
from memtab_env.games.memory_board.observation import MemoryBoardEncoder
from memtab_env.games.memory_board.rules import MemoryBoard, MemoryBoardState
from memtab_env.memory import parse_memory
from memtab_env.rewards import check_reward_scheme
from memtab_env.vector.batch_kernels import REWARD_CODES, rng_width
from memtab_env.vector.engine_base import BatchedGames, KernelRunner, resolve_threads
from memtab_env.vector.memory_kernels import MEM_DECAY, MEM_WINDOW, MEMORY_CODES


class BatchedMemoryBoard(BatchedGames):
    """B games of Memory: The Board Game in lockstep (one action per game per step).

    Args:
        num_envs: B.
        memory: memory model of :meth:`observations` (and of the vector env).
        reward: ``"win"``, ``"score"`` or ``"turns"`` (the vector env's learner reward).
        parallel: threads, as :class:`~memtab_env.games.memtab.batched.BatchedMemTab`.
        **game_options: ``num_players`` (1..4), ``first_player``, ``board``, ``variant``,
            ``max_turns``, as :class:`~memtab_env.games.memory_board.rules.MemoryBoard`.
    """

    def __init__(self, num_envs: int, memory: str = "perfect", reward: str = "win",
                 parallel: bool | int | None = None, **game_options: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise InvalidOptionError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = b = int(num_envs)
        self.game = game = MemoryBoard(**game_options)
        self.encoder = MemoryBoardEncoder(game)
        self.memory_spec = parse_memory(memory)
        self.reward_scheme = check_reward_scheme(reward)
        n = self.num_players = game.num_players
        self.first_player = game.first_player
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
        self._mem = MEMORY_CODES[self.memory_spec.kind]
        decay = self._mem == MEM_DECAY
        self._p_forget: float | None = float(self.memory_spec.param) if decay else None
        self._window = int(self.memory_spec.param) if self._mem == MEM_WINDOW else 0
        self._scheme = REWARD_CODES[self.reward_scheme]
        self.threads = resolve_threads(parallel, b)
        self.run = KernelRunner(self.threads)
        self.state = np.zeros((b, bk.state_width(p, n, decay)), dtype=np.int32)
        self.rng = np.zeros((b, rng_width(n, decay)), dtype=np.uint64)
        self._final_bits = np.zeros(b, dtype=np.int64)
        self._observers = np.full(b, -1, dtype=np.int64)
        self._obs: np.ndarray | None = None
        self._has_reset = False
        self._masks_fresh = False

    def board_args(self) -> tuple[Any, ...]:
        """The board and rule options, in the kernels' argument order."""
        return (self._supply0, self._land, self._kland, self._adj, self._nbr,
                self.game.num_landscapes, self._children, self.game.max_turns, self._max_len)

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

    def _buffers(self) -> tuple[np.ndarray, ...]:
        return (self.state, self.rng, self._final_bits, self._observers)
