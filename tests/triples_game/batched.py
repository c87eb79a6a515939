"""``BatchedTriples``: B Triples games as rows of one int32 matrix (what the vector env
steps with the shared single-agent loop)."""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.vector.engine_base import BatchedGames
from tests.triples_game import batched_kernels as tk
from tests.triples_game import rules_kernels as rk
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
        self.times = np.zeros((self.num_envs, tk.time_width(game.num_positions)), dtype=np.int32)

    def _row_args(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
        game = self.game
        return self.state, self.times, (
            game.num_positions, game.num_kinds, self.num_players, self.first_player, self._mem,
            self._window,
        ), (game.cards.astype(np.int64),)  # fmt: skip

    @property
    def flips(self) -> np.ndarray:
        return self.times[:, tk.CLOCK]

    def get_state(self, i: int) -> TriplesState:
        """Game ``i`` as a scalar :class:`~tests.triples_game.rules.TriplesState`."""
        self._check_reset()
        st = TriplesState.__new__(TriplesState)
        st.data = self.state[i : i + 1, : rk.state_size(self.num_positions)].copy()
        st.data[0, rk.OVER] = self.state[i, rk.OVER] == tk.OVER_RULES
        st.data[0, rk.SPARE] = 0
        st.num_players = self.num_players
        return st
