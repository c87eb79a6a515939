"""The batched MemTab engine and its vector envs (GitHub issue 7).

- :class:`~memtab_env.vector.engine.BatchedMemTab`: B games stepped at once by numba
  kernels, one flip per game per step, with the scalar engine's transition kernel, per-game
  seeds (the scalar env's games, game for game), auto-reset, masks and observations for
  every memory model written into preallocated arrays.
- :class:`~memtab_env.vector.gym_vector.MemTabVectorEnv`: the single-agent Gymnasium view,
  batched, with ``random`` / ``greedy`` opponents stepped inside the batch.
- :class:`~memtab_env.vector.sb3.MemTabSB3VecEnv` (needs stable-baselines3): an SB3
  ``VecEnv`` with ``action_masks()`` for sb3-contrib's ``MaskablePPO``.
"""

from __future__ import annotations

from typing import Any

from memtab_env.vector.engine import BatchedMemTab
from memtab_env.vector.gym_vector import MemTabVectorEnv

__all__ = ["BatchedMemTab", "MemTabSB3VecEnv", "MemTabVectorEnv"]

#: the ``vector_entry_point`` of ``MemTab-v0`` (``gymnasium.make_vec``)
VECTOR_ENTRY_POINT = "memtab_env.vector.gym_vector:MemTabVectorEnv"


def __getattr__(name: str) -> Any:
    if name == "MemTabSB3VecEnv":  # imported lazily: stable-baselines3 is optional
        from memtab_env.vector.sb3 import MemTabSB3VecEnv

        return MemTabSB3VecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
