"""``MemoryBoardSB3VecEnv``:
:class:`~memtab_env.games.memory_board.vector_env.MemoryBoardVectorEnv` as a
Stable-Baselines3 ``VecEnv`` (needs stable-baselines3; see :mod:`memtab_env.vector.sb3`)."""

from __future__ import annotations

from memtab_env.games.memory_board.vector_env import MemoryBoardVectorEnv
from memtab_env.vector.sb3 import BatchedSB3VecEnv


class MemoryBoardSB3VecEnv(BatchedSB3VecEnv):
    """SB3 ``VecEnv`` over :class:`~memtab_env.games.memory_board.vector_env.MemoryBoardVectorEnv`
    (``action_masks()``: (B, 2 P + 2) bool); arguments as ``MemTabSB3VecEnv``, with
    the board game's options."""

    vector_env_class = MemoryBoardVectorEnv
