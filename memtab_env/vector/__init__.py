"""The batched engines of the three games and their vector envs.

- :class:`~memtab_env.vector.engine.BatchedMemTab`: B games stepped at once by numba
  kernels, one flip per game per step, with the scalar engine's transition kernel, per-game
  seeds (the scalar env's games, game for game), auto-reset, masks and observations for
  every memory model written into preallocated arrays.
- :class:`~memtab_env.vector.gym_vector.MemTabVectorEnv`: the single-agent Gymnasium view,
  batched, with ``random`` / ``greedy`` opponents stepped inside the batch.
- :class:`~memtab_env.vector.sb3.MemTabSB3VecEnv` (needs stable-baselines3): an SB3
  ``VecEnv`` with ``action_masks()`` for sb3-contrib's ``MaskablePPO``.
- :class:`~memtab_env.vector.pelmanism.BatchedPelmanism`,
  :class:`~memtab_env.vector.pelmanism_gym.PelmanismVectorEnv` and
  :class:`~memtab_env.vector.sb3.PelmanismSB3VecEnv`: the same for Pelmanism (every deck,
  1-6 players, the ``max_turns`` house rule), with the same API; its kernels restate the
  scalar rules, kept equal to them by ``tests/test_vector_pelmanism.py``.
- :class:`~memtab_env.vector.board.BatchedMemoryBoard`,
  :class:`~memtab_env.vector.board.MemoryBoardVectorEnv` and
  :class:`~memtab_env.vector.sb3.MemoryBoardSB3VecEnv`: the same for Memory: The Board
  Game (any board, both variants); its kernels restate the scalar rules too.

Every batched view is held to the scalar view, step for step, by
``tests/test_batched_equals_scalar.py``.
"""

from __future__ import annotations

from typing import Any

from memtab_env.vector.board import BatchedMemoryBoard, MemoryBoardVectorEnv
from memtab_env.vector.engine import BatchedMemTab
from memtab_env.vector.gym_vector import MemTabVectorEnv
from memtab_env.vector.pelmanism import BatchedPelmanism
from memtab_env.vector.pelmanism_gym import PelmanismVectorEnv

__all__ = [
    "BatchedMemTab",
    "BatchedMemoryBoard",
    "BatchedPelmanism",
    "MemTabSB3VecEnv",
    "MemTabVectorEnv",
    "MemoryBoardSB3VecEnv",
    "MemoryBoardVectorEnv",
    "PelmanismSB3VecEnv",
    "PelmanismVectorEnv",
]

#: the ``vector_entry_point`` of ``MemTab-v0`` (``gymnasium.make_vec``)
VECTOR_ENTRY_POINT = "memtab_env.vector.gym_vector:MemTabVectorEnv"
#: the ``vector_entry_point`` of ``Pelmanism-v0``
PELMANISM_VECTOR_ENTRY_POINT = "memtab_env.vector.pelmanism_gym:PelmanismVectorEnv"
_SB3_ADAPTERS = ("MemTabSB3VecEnv", "MemoryBoardSB3VecEnv", "PelmanismSB3VecEnv")


def __getattr__(name: str) -> Any:
    if name in _SB3_ADAPTERS:  # imported lazily: stable-baselines3 is optional
        from memtab_env.vector import sb3

        return getattr(sb3, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
