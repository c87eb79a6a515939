"""The batched engines of the three games and their vector envs.

- ``BatchedMemTab`` (:mod:`memtab_env.games.memtab.batched`): B games stepped at once by
  numba kernels, one flip per game per step, with the scalar engine's transition kernel,
  per-game seeds (the scalar env's games, game for game), auto-reset, masks and
  observations for every memory model written into preallocated arrays.
- ``MemTabVectorEnv`` (:mod:`memtab_env.games.memtab.vector_env`): the single-agent
  Gymnasium view, batched, with ``random`` / ``greedy`` opponents stepped inside the batch.
- ``MemTabSB3VecEnv`` (:mod:`memtab_env.games.memtab.sb3_vec_env`, needs
  stable-baselines3): an SB3 ``VecEnv`` with ``action_masks()`` for sb3-contrib's
  ``MaskablePPO``.
- ``BatchedPelmanism``, ``PelmanismVectorEnv`` and ``PelmanismSB3VecEnv``: the same for
  Pelmanism (every deck, 1-6 players, the ``max_turns`` house rule), with the same API.
- ``BatchedMemoryBoard``, ``MemoryBoardVectorEnv`` and ``MemoryBoardSB3VecEnv``: the same
  for Memory: The Board Game (any board, both variants).

Every game's rules are its ``rules_kernels`` module, which the scalar engine and the
batched loops both call; the batched engines add the deal, the memories, the
observations and the built-in opponents, kept equal to the scalar ones by the
differential tests.

Every engine's loops (reset, step, masks, observations, the random policy) and every
vector env's single-agent loop are written once, in :mod:`~memtab_env.vector.row_loops`,
over each game's row kernels; ``docs/adding_a_game.md`` says what a game gives.

Each game's batched parts live in its folder under :mod:`memtab_env.games`; this package
holds what they share (:mod:`~memtab_env.vector.engine_base`,
:mod:`~memtab_env.vector.vector_env_base`, :mod:`~memtab_env.vector.sb3`, and the kernels
of :mod:`~memtab_env.vector.rng`, :mod:`~memtab_env.vector.batch_kernels`,
:mod:`~memtab_env.vector.memory_kernels` and :mod:`~memtab_env.vector.row_loops`) and
imports every game's classes by name, when first asked for.

Every batched view is held to the scalar view, step for step, by
``tests/test_batched_equals_scalar.py``, and every engine to its AEC env by
``tests/test_batched_engine_equals_scalar.py``.
"""

from __future__ import annotations

from typing import Any

from memtab_env.registry import GAMES, game_spec, load

#: public name -> ``"module:Class"``: every game's batched engine, vector env and SB3
#: VecEnv, from its registry row (imported when first asked for: the game modules import
#: this package's shared modules, and stable-baselines3 is optional)
_EXPORTS = {
    path.rpartition(":")[2]: path
    for spec in GAMES.values()
    for path in (spec.batched_engine, spec.vector_entry_point, spec.sb3_vec_env)
    if path is not None
}

__all__ = sorted(_EXPORTS)

#: the ``vector_entry_point`` of ``MemTab-v0`` (``gymnasium.make_vec``)
VECTOR_ENTRY_POINT = game_spec("memtab").vector_entry_point
#: the ``vector_entry_point`` of ``Pelmanism-v0``
PELMANISM_VECTOR_ENTRY_POINT = game_spec("pelmanism").vector_entry_point


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return load(_EXPORTS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
