"""``MemoryBoardVectorEnv``: the single-agent Memory: The Board Game view for B games at
once (Gymnasium).

``gymnasium.make_vec("MemoryBoard-v0", num_envs=B, vectorization_mode="vector_entry_point")``,
with the options, spaces, info keys, auto-reset and seeding of
:class:`~memtab_env.vector.vector_env_base.BatchedVectorView`, over
:class:`~memtab_env.games.memory_board.batched.BatchedMemoryBoard`: slot ``i`` after
``reset(seed=s)`` plays the episodes of ``gymnasium.make("MemoryBoard-v0")`` after
``reset(seed=s + i)``, step for step. Actions are the board game's (flip, place, end a
return, pass: ``2 P + 2`` ids). Opponents: ``"random"`` and ``"greedy"``, played as
``agents.make(name, game="memory_board")`` plays them in the scalar view
(:func:`~memtab_env.games.memory_board.batched_kernels.greedy_action`).
"""

from __future__ import annotations

from memtab_env.games.memory_board.rules import MemoryBoardState
from memtab_env.vector.vector_env_base import BatchedVectorView

GAME_OPTIONS = ("board", "first_player", "max_turns", "num_players", "variant")


class MemoryBoardVectorEnv(BatchedVectorView):
    """B single-agent games of Memory: The Board Game stepped together; see the module
    docstring. Arguments as :class:`~memtab_env.vector.vector_env_base.BatchedVectorView`, with
    the board game's options (``board``, ``num_players`` 1..4, ``first_player``,
    ``variant``, ``max_turns``)."""

    game_name = "memory_board"
    game_options = GAME_OPTIONS

    def get_state(self, i: int) -> MemoryBoardState:
        """Game ``i`` as a scalar :class:`~memtab_env.games.memory_board.rules.MemoryBoardState`."""
        return self.engine.get_state(i)

