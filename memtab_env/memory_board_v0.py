"""Memory: The Board Game: find pairs, return them to the board, grow a tree (PettingZoo AEC).

Description
-----------
60 picture cards (30 pairs) lie face down on a board of 6 x 10 spaces, one on every
space. The board is divided into five landscapes (farmland, river, meadow, forest,
mountains) of 12 spaces; every picture has the background colour of one landscape. On a
turn a player either flips two cards to find a pair (a pair is collected and the player
goes again), or returns 1 to 4 collected cards face up onto free spaces of their own
landscape, touching each other, and grows its tree by a trunk of that size while the
supply lasts. The tallest tree wins. Memory is what finds the pairs; planning is what
turns them into tall trunks before the supply and the game run out.

Rules
-----
``docs/sources/004_c6aa3965ef94550f.txt`` with ``docs/rulings.md`` (board game 1-8);
the engine's docstring (:mod:`memtab_env.games.memory_board.rules`) states every ruling and
every decision where the text is silent:

1. Flip two face-down cards; the same picture: collect both and take another turn;
   otherwise both go back face down and the turn passes.
2. Or return: place 1 to 4 collected cards, one action each, on free spaces (whose card
   was taken) of the card's landscape; every placement after the first touches an
   earlier one of the same return by a side; end the return (the 4th placement ends it).
   Returned cards stay face up for good. Reward: a trunk of the size placed, else the
   largest smaller size left, else nothing.
3. Supply: 5 trunks of size 4, 7 of size 3, 10 of size 2, 13 of size 1.
4. When the last face-down pair is taken, every seat, from the one that took it on in seat
   order, makes one final return or passes (children's variant: seats keep returning,
   without passing, until the board is full again; seats without cards are skipped).
5. The tallest tree (sum of trunk sizes) wins; a tie goes to more collected cards still in
   front; a further tie is a shared win.
6. Turn limit (``max_turns``, default 500): main play that reaches it ends at once and is
   scored as it stands.

Specs
-----

Observation
-----------
A dict: ``"observation"`` (int8 vector, layout in
:class:`memtab_env.games.memory_board.observation.MemoryBoardEncoder`), ``"action_mask"``
(int8[122], 1 = legal; all zeros when the agent is not on turn) and ``"remembered_mask"``
(int8[60]: face-down spaces whose card this observer remembers under the memory model).

Action
------
``0..59`` flip the card on space p (row-major in the 6 x 10 grid); ``60..119`` place a
collected card on space ``a - 60`` (the collected card of that space's landscape with the
lowest card id); ``120`` end the return; ``121`` pass (final round only).

Rewards
-------
``reward="win"`` (default): at the end, winners share +1 and losers share -1 (two
players: +1/-1, a draw 0/0). ``reward="turns"``: -1 for each turn a player takes (the solo measure).
``reward="score"``: each step, each player gets the change of
its tree height. The same agent acts several times in a row (a pair, a return of several
cards); PettingZoo's cumulative reward bookkeeping is reset when it acts again.

Episode End
-----------
After the final round (or, in the children's variant, when the board is full again), or
when main play reaches ``max_turns`` turns. A game takes at most ``4 * max_turns + 4 n``
actions (children's variant: ``4 * max_turns + 120``). With ``env()``, an illegal action
ends the game with -1 for the offender and 0 for the others.

Arguments
---------
.. code-block:: python

    import pettingzoo, memtab_env
    env = pettingzoo.make("aec", "memtab/MemoryBoard-v0", num_players=2, memory="perfect",
                          reward="win", first_player=0, board=None, variant="standard",
                          max_turns=500, render_mode=None)
    # or: from memtab_env import memory_board_v0; env = memory_board_v0.env(num_players=3)

``num_players`` (1..4, default 2), ``first_player`` (seat that starts, default 0),
``board`` (``None`` for the default board, a path to a JSON board file or a dict, see
``docs/boards.md``), ``variant`` (``"standard"``, ``"children"``), ``max_turns`` (turn
limit of main play, default 500), ``memory`` (``"perfect"``, ``"none"``, ``"decay:p"``,
``"window:k"``), ``reward`` (``"win"``, ``"score"``, ``"turns"``), ``render_mode`` (``None``,
``"human"``, ``"ansi"``, ``"rgb_array"``). The specs above are for the default board.
"""

# raw_env adds the sections Registered Configurations and Version History from the registry row.

from __future__ import annotations

from memtab_env.aec import Specs, game_module
from memtab_env.registry import GAMES

raw_env, env = game_module(GAMES["memory_board"], __doc__, __name__, Specs(
    max_players=4, actions=122,
    observation_shape="(2458,) for 2 players; 2442 + 8 n for n players", observation_values="[0, 74]"))
__doc__ = raw_env.__doc__

__all__ = ["env", "raw_env"]
