"""``BatchedTriples``: B Triples games as rows of one int32 matrix (what the vector env
steps with the shared single-agent loop)."""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.vector.engine_base import BatchedGames
from tests.triples_game import batched_kernels as tk
from tests.triples_game.observation import TriplesEncoder
from tests.triples_game.rules import Triples, TriplesState


class BatchedTriples(BatchedGames):
    """B Triples games; options as :class:`~tests.triples_game.rules.Triples`."""

    kernels = tk
    action_words = ("flip position", "face-down positions that may be flipped")

    def __init__(self, num_envs: int, memory: str = "perfect", reward: str = "win",
                 autoreset: bool = True, parallel: bool | int | None = None,
                 **game_options: int) -> None:
        game = Triples(**game_options)
        self._setup(num_envs, game, TriplesEncoder(game), memory, reward, autoreset, parallel)
        self.num_positions = game.num_positions
        self.state = np.zeros((self.num_envs, tk.state_width(game.num_positions,
                                                              self.num_players, self._decay)),
                              dtype=np.int32)
        self._no_times = np.zeros((self.num_envs, 0), dtype=np.int32)

    def _row_args(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
        game = self.game
        return self.state, self._no_times, (
            game.num_positions, game.num_kinds, self.num_players, self.first_player, self._mem,
            self._window,
        ), (game.cards.astype(np.int64),)  # fmt: skip

    @property
    def flips(self) -> np.ndarray:
        return self.state[:, tk.CLOCK]

    def get_state(self, i: int) -> TriplesState:
        """Game ``i`` as a scalar :class:`~tests.triples_game.rules.TriplesState`."""
        self._check_reset()
        row, p = self.state[i], self.num_positions
        st = TriplesState(row[tk.HEAD : tk.HEAD + p].astype(np.int8), self.num_players,
                          self.first_player)
        st.status[:] = row[tk.HEAD + p : tk.HEAD + 2 * p]
        st.owner[:] = row[tk.HEAD + 2 * p : tk.HEAD + 3 * p]
        st.triples[:] = row[tk.SCORES : tk.SCORES + self.num_players]
        st.up[:] = row[tk.UP0 : tk.UP0 + 2]
        st.current, st.flip, st.turns = int(row[tk.CURRENT]), int(row[tk.FLIP]), int(row[tk.TURNS])
        st.over = bool(row[tk.OVER] == tk.OVER_RULES)
        return st
