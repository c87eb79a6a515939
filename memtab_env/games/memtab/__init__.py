"""MemTab: 28 red and black cards face down on a 4 x 7 table, 1 to 6 players.

A turn is three flips. Flips 1 and 2 leave the game together when they match (nobody
scores them); flip 3 goes into the flipper's tableau, and pairs off with its twin when
the tableau holds it. A turn that removed a pair earns another turn; a turn that removed
two pairs wins the game at once. Otherwise the game ends when two or fewer face-down
cards are left, and the top scorers win (score: red values minus black values in the
tableau). The rules as implemented, with every decision where the texts are silent:
``docs/rules/memtab.md``; the env page: :mod:`memtab_env.memtab_v0`.

The game's parts, in this folder:

- :mod:`~memtab_env.games.memtab.rules` (:class:`MemTab`, :class:`MemTabState`) over
  :mod:`~memtab_env.games.memtab.rules_kernels`, the transition as numba kernels;
- :mod:`~memtab_env.games.memtab.observation` (``MemTabEncoder``);
- :mod:`~memtab_env.games.memtab.render` (``MemTabRenderer``);
- :mod:`~memtab_env.games.memtab.batched` (``BatchedMemTab``) over
  :mod:`~memtab_env.games.memtab.batched_kernels`;
- :mod:`~memtab_env.games.memtab.vector_env` (``MemTabVectorEnv``) and
  :mod:`~memtab_env.games.memtab.sb3_vec_env` (``MemTabSB3VecEnv``, stable-baselines3);
- :mod:`~memtab_env.games.memtab.jax_env` (``MemTabJax``, the jax extra).

Its row in :mod:`memtab_env.registry` names them. Its agents (``memtab_env.agents``, the
repository's ``agents/`` folder) are ``memtab_agents`` (``random``, ``greedy``),
``expert``, ``search``, ``human`` and the shipped policies.
"""

from __future__ import annotations

from memtab_env.games.memtab.rules import MemTab, MemTabState

__all__ = ["MemTab", "MemTabState"]
