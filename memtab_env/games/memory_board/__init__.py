"""Memory: The Board Game: find pairs, return them to the board, grow a tree.

60 picture cards (30 pairs) lie face down on a board of 6 x 10 spaces divided into five
landscapes. On a turn a player either flips two cards to find a pair (a pair is
collected and the player goes again), or returns 1 to 4 collected cards face up onto free
spaces of their own landscape, touching each other, and grows its tree by a trunk of that
size while the supply lasts. After the last pair every seat makes one final return; the
tallest tree wins. Any board (``board``), the children's variant, 1 to 4 players, a turn
limit (``max_turns``). The rules as implemented, with every ruling and every decision
where the text is silent: ``docs/rules/memory_board.md``; the env page:
:mod:`memtab_env.memory_board_v0`; boards: :mod:`memtab_env.boards`.

The game's parts, in this folder:

- :mod:`~memtab_env.games.memory_board.rules` (:class:`MemoryBoard`,
  :class:`MemoryBoardState`);
- :mod:`~memtab_env.games.memory_board.observation` (``MemoryBoardEncoder``);
- :mod:`~memtab_env.games.memory_board.render` (``MemoryBoardRenderer``);
- :mod:`~memtab_env.games.memory_board.batched` (``BatchedMemoryBoard``) over
  :mod:`~memtab_env.games.memory_board.batched_kernels`;
- :mod:`~memtab_env.games.memory_board.vector_env` (``MemoryBoardVectorEnv``) and
  :mod:`~memtab_env.games.memory_board.sb3_vec_env` (``MemoryBoardSB3VecEnv``,
  stable-baselines3).

It has no JAX backend. Its row in :mod:`memtab_env.registry` names them. Its agents
(``memtab_env.agents``, the repository's ``agents/`` folder) are ``memory_board_agents``.
"""

from __future__ import annotations

from memtab_env.games.memory_board.rules import MemoryBoard, MemoryBoardState

__all__ = ["MemoryBoard", "MemoryBoardState"]
