"""``MemoryBoardVectorEnv``: the single-agent Memory: The Board Game view for B games at
once (Gymnasium).

``gymnasium.make_vec("MemoryBoard-v0", num_envs=B, vectorization_mode="vector_entry_point")``,
with the options, spaces, info keys, auto-reset and seeding of
:class:`~memtab_env.games.memtab.vector_env.MemTabVectorEnv`, over
:class:`~memtab_env.games.memory_board.batched.BatchedMemoryBoard`: slot ``i`` after
``reset(seed=s)`` plays the episodes of ``gymnasium.make("MemoryBoard-v0")`` after
``reset(seed=s + i)``, step for step. Actions are the board game's (flip, place, end a
return, pass: ``2 P + 2`` ids). Opponents: ``"random"`` and ``"greedy"``, played as
``agents.make(name, game="memory_board")`` plays them in the scalar view
(:func:`~memtab_env.games.memory_board.batched_kernels.greedy_action`).
"""

from __future__ import annotations

from typing import Any

from memtab_env.games.memory_board.batched import BatchedMemoryBoard
from memtab_env.games.memory_board.rules import MemoryBoardState
from memtab_env.vector.vector_env_base import BatchedVectorView

GAME_OPTIONS = ("board", "first_player", "max_turns", "num_players", "variant")


class MemoryBoardVectorEnv(BatchedVectorView):
    """B single-agent games of Memory: The Board Game stepped together; see the module
    docstring. Arguments as :class:`~memtab_env.games.memtab.vector_env.MemTabVectorEnv`, with
    the board game's options (``board``, ``num_players`` 1..4, ``first_player``,
    ``variant``, ``max_turns``)."""

    game_name = "memory_board"
    game_options = GAME_OPTIONS
    render_hint = "memtab_env.games.memory_board.render"

    def _make_engine(self, num_envs: int, memory: str, reward: str, parallel: bool | int | None,
                     game_options: dict[str, Any]) -> BatchedMemoryBoard:
        return BatchedMemoryBoard(num_envs, memory=memory, reward=reward, parallel=parallel,
                                  **game_options)

    def get_state(self, i: int) -> MemoryBoardState:
        """Game ``i`` as a scalar :class:`~memtab_env.games.memory_board.rules.MemoryBoardState`."""
        return self.engine.get_state(i)

