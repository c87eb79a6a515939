"""Pelmanism (Concentration, Memory, Shinkei-suijaku): find pairs among face-down cards.

Every card of a pack lies face down. On a turn the player on turn flips two cards, one at
a time; a match is taken (one point) and the same player goes again, otherwise both go
back face down in place and play passes. The game ends when every card has been taken;
every top scorer wins. Decks ``standard`` (52 cards, a six matches any six), ``colour``
(match rank and colour), ``pairs:N`` and ``quartets:N``; 1 to 6 players (solo: the
number of turns is the measure); the house rule ``max_turns``. The rules as implemented,
with every decision where the text is silent: ``docs/rules/pelmanism.md``; the env page:
:mod:`memtab_env.pelmanism_v0`.

The game's parts, in this folder:

- :mod:`~memtab_env.games.pelmanism.rules` (:class:`Pelmanism`, :class:`PelmanismState`,
  the decks);
- :mod:`~memtab_env.games.pelmanism.values` (exact expected values with perfect memory);
- :mod:`~memtab_env.games.pelmanism.observation` (``PelmanismEncoder``);
- :mod:`~memtab_env.games.pelmanism.render` (``PelmanismRenderer``);
- :mod:`~memtab_env.games.pelmanism.batched` (``BatchedPelmanism``) over
  :mod:`~memtab_env.games.pelmanism.batched_kernels`;
- :mod:`~memtab_env.games.pelmanism.vector_env` (``PelmanismVectorEnv``) and
  :mod:`~memtab_env.games.pelmanism.sb3_vec_env` (``PelmanismSB3VecEnv``,
  stable-baselines3);
- :mod:`~memtab_env.games.pelmanism.jax_env` (``PelmanismJax``, the jax extra).

Its row in :mod:`memtab_env.registry` names them. Its agents (``memtab_env.agents``, the
repository's ``agents/`` folder) are ``pelmanism_agents`` and the shipped policy.
"""

from __future__ import annotations

from memtab_env.games.pelmanism.rules import Pelmanism, PelmanismState

__all__ = ["Pelmanism", "PelmanismState"]
