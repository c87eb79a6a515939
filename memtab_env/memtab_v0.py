"""MemTab: a memory card game with a tableau, as a PettingZoo AEC env.

Description
-----------
28 cards (a red and a black 2..8, each twice) lie face down in 4 rows of 7. On a turn the
player on turn flips three cards, one at a time; every flip is one action. Pairs found
with the first two flips leave the game; the third card goes into the player's tableau,
where it pairs off with its twin. Red cards score their value, black cards minus theirs.
Memory is the whole game: every player watches every flip, and what an observation still
shows of earlier flips is set by the memory model.

Rules
-----
Exactly ``docs/sources/000_bb99b56034cd6a7f.txt`` with ``docs/rulings.md`` (project page:
``docs/rules/memtab.md``):

1. Cards match when colour and value are equal (14 kinds, each twice).
2. Flips 1 and 2: if they match, both leave the game (nobody scores them); otherwise they
   stay face up until the end of the turn.
3. Flip 3 goes into the flipper's tableau; if the tableau holds its twin, both leave.
4. A turn in which at least one pair left the game is followed by another turn of the same
   player. Two pairs in one turn end the game at once: that player is the only winner.
5. At the start of every turn (extra turns included), if 2 or fewer face-down cards
   remain, the game ends; those cards are not taken.
6. Score = red values minus black values in the tableau; every top scorer wins.

Specs
-----

Observation
-----------
A dict: ``"observation"`` (int8 vector, layout in
:class:`memtab_env.games.memtab.observation.MemTabEncoder`), ``"action_mask"`` (int8[28], 1 =
legal flip; all zeros when the agent is not on turn) and ``"remembered_mask"`` (int8[28]:
face-down positions whose card this observer remembers under the memory model).

Action
------
The position (0..27, row-major in the 4x7 grid) of a face-down card to flip.

Rewards
-------
``reward="win"`` (default): at the end, winners share +1 and losers share -1 (two
players: +1/-1, a draw 0/0). ``reward="turns"``: -1 for each turn a player takes (the solo measure).
``reward="score"``: each step, each player gets the change of
its score. The same agent acts several times in a row; PettingZoo's cumulative reward
bookkeeping is reset when it acts again.

Episode End
-----------
When the end check finds 2 or fewer face-down cards at the start of a turn, or at once on
an instant win (two pairs in one turn). A game lasts at most 26 turns (78 flips). With
``env()``, an illegal action ends the game with -1 for the offender and 0 for the others.

Arguments
---------
.. code-block:: python

    import pettingzoo, memtab_env
    env = pettingzoo.make("aec", "memtab/MemTab-v0", num_players=2, memory="perfect",
                          reward="win", first_player=0, render_mode=None)
    # or: from memtab_env import memtab_v0; env = memtab_v0.env(num_players=3)

``num_players`` (1..6, default 2), ``first_player`` (seat that starts, default 0),
``memory`` (``"perfect"``, ``"none"``, ``"decay:p"``, ``"window:k"``), ``reward``
(``"win"``, ``"score"``), ``render_mode`` (``None``, ``"human"``, ``"ansi"``, ``"rgb_array"``).
"""

# raw_env adds the sections Registered Configurations and Version History from the registry row.

from __future__ import annotations

from memtab_env.aec import Specs, game_module
from memtab_env.registry import GAMES

raw_env, env = game_module(GAMES["memtab"], __doc__, __name__, Specs(
    max_players=6, actions=28, manual_control="Yes (``memtab play``)",
    observation_shape="(539,) for 2 players; 507 + 16 n for n players", observation_values="[-35, 35]"))
__doc__ = raw_env.__doc__

__all__ = ["env", "raw_env"]
