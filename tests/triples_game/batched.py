"""``BatchedTriples``: B Triples games as rows of one int32 matrix (what the vector env
steps with the shared single-agent loop)."""

from __future__ import annotations

import numpy as np

from memtab_env.errors import InvalidOptionError
from memtab_env.memory import parse_memory
from memtab_env.rewards import check_reward_scheme
from memtab_env.vector.batch_kernels import REWARD_CODES, rng_width
from memtab_env.vector.engine_base import BatchedGames, KernelRunner, resolve_threads
from memtab_env.vector.memory_kernels import MEM_DECAY, MEM_WINDOW, MEMORY_CODES
from tests.triples_game import batched_kernels as tk
from tests.triples_game.observation import TriplesEncoder
from tests.triples_game.rules import Triples, TriplesState


class BatchedTriples(BatchedGames):
    """B Triples games; options as :class:`~tests.triples_game.rules.Triples`."""

    def __init__(self, num_envs: int, memory: str = "perfect", reward: str = "win",
                 parallel: bool | int | None = None, **game_options: int) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise InvalidOptionError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = b = int(num_envs)
        self.game = game = Triples(**game_options)
        self.encoder = TriplesEncoder(game)
        self.memory_spec = parse_memory(memory)
        self.reward_scheme = check_reward_scheme(reward)
        n = self.num_players = game.num_players
        self.first_player = game.first_player
        self.num_positions = p = game.num_positions
        self._mem = MEMORY_CODES[self.memory_spec.kind]
        decay = self._mem == MEM_DECAY
        self._p_forget: float | None = float(self.memory_spec.param) if decay else None
        self._window = int(self.memory_spec.param) if self._mem == MEM_WINDOW else 0
        self._scheme = REWARD_CODES[self.reward_scheme]
        self.threads = resolve_threads(parallel, b)
        self.run = KernelRunner(self.threads)
        self.state = np.zeros((b, tk.state_width(p, n, decay)), dtype=np.int32)
        self.rng = np.zeros((b, rng_width(n, decay)), dtype=np.uint64)
        self._final_bits = np.zeros(b, dtype=np.int64)
        self._observers = np.full(b, -1, dtype=np.int64)
        self._obs: np.ndarray | None = None
        self._has_reset = False
        self._masks_fresh = False

    def row_constants(self) -> tuple:
        """``G`` of the row kernels."""
        return (self.game.cards.astype(np.int64), self.game.num_kinds, self.num_players,
                self.first_player, self._mem, self._window, self.game.info.max_game_length)

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

    def _buffers(self) -> tuple[np.ndarray, ...]:
        return (self.state, self.rng, self._final_bits, self._observers)
