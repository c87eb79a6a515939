"""Pelmanism (Concentration, Memory): find pairs among face-down cards (PettingZoo AEC).

Description
-----------
Every card of a pack lies face down on the table. On a turn the player on turn flips two
cards, one at a time; every flip is one action. If they match, the player takes them (a
pair, one point) and plays again; otherwise both go back face down in place and the next
seat plays. Every player watches every flip, and what an observation still shows of
earlier flips is set by the memory model. With perfect memory the game is a known
benchmark: its expected values are computed exactly in
:mod:`memtab_env.games.pelmanism.values` (solo, and the optimum of two players on decks of
pairs, which ``agents.make("optimal", game="pelmanism")`` plays), tabulated in
``docs/pelmanism_values.md``.

Rules
-----
Exactly ``docs/sources/003_aca21a63258bacff.txt`` with ``docs/rulings.md`` (Pelmanism
1-4); the engine's docstring (:mod:`memtab_env.games.pelmanism.rules`) states every decision
where the text is silent:

1. Decks: ``standard`` (52 cards, a six matches any six: quartets; the default),
   ``colour`` (52 cards, match rank and colour: pairs), ``pairs:N`` (1..26 kinds) and
   ``quartets:N`` (1..13 kinds) of identical cards.
2. Flip two face-down cards: a match is taken and the same player goes again; otherwise
   both are turned back face down in place and play passes.
3. The game ends when every card has been taken; score = pairs taken; every top scorer
   wins (a shared win).
4. Solo (``num_players=1``): the measure is the number of turns taken (``turns_taken``).
5. House rule ``max_turns=T`` (default ``None``: no limit, as written): the game ends,
   scored as it stands, after ``T`` turns.

Specs
-----

The specs are for the default ``standard`` deck; in general the action space is
``Discrete(P)`` and the observation ``P (3 + K) + 2 n + 2`` values (``P`` cards, ``K``
kinds): 1514 for ``colour`` with two players, ``2N (3 + N) + 2 n + 2`` for ``pairs:N``.

Observation
-----------
A dict: ``"observation"`` (int8 vector, layout in
:class:`memtab_env.games.pelmanism.observation.PelmanismEncoder`), ``"action_mask"`` (int8[P],
1 = legal flip; all zeros when the agent is not on turn) and ``"remembered_mask"``
(int8[P]: face-down positions whose card this observer remembers under the memory model).

Action
------
The position (row-major in the drawn grid, 4 x 13 for 52 cards) of a face-down card to
flip.

Rewards
-------
``reward="win"`` (default): at the end, winners share +1 and losers share -1 (two
players: +1/-1, a draw 0/0). ``reward="turns"``: -1 for each turn a player takes (the solo measure).
``reward="score"``: each step, each player gets the change of
its score (+1 for the flip that takes a pair). The same agent acts several times in a row
(a match gives another turn; a turn is two actions); PettingZoo's cumulative reward
bookkeeping is reset when it acts again. Solo games are measured in turns: both schemes
give a solo player the same return whatever it does (0, or the number of pairs), so use
the engine's ``turns_taken`` or the episode length (two actions a turn) as the measure.

Episode End
-----------
When every card has been taken (or at the ``max_turns`` house-rule limit). No rule bounds
a game's length, since a player may flip non-matching cards for ever; the Gymnasium view
truncates at its registered step limit, and ``game.info.max_turns`` is a practical cap
(100 turns per card) unless ``max_turns`` is set. With ``env()``, an illegal action ends
the game with -1 for the offender and 0 for the others.

Arguments
---------
.. code-block:: python

    import pettingzoo, memtab_env
    env = pettingzoo.make("aec", "memtab/Pelmanism-v0", num_players=2, memory="perfect",
                          reward="win", deck="standard", first_player=0, max_turns=None,
                          render_mode=None)
    # or: from memtab_env import pelmanism_v0; env = pelmanism_v0.env(deck="pairs:8")

``deck`` (``"standard"``, ``"colour"``, ``"pairs:N"``, ``"quartets:N"``), ``num_players``
(1..6, default 2), ``first_player`` (seat that starts, default 0), ``max_turns``
(``None`` or a turn limit), ``memory`` (``"perfect"``, ``"none"``, ``"decay:p"``,
``"window:k"``), ``reward`` (``"win"``, ``"score"``, ``"turns"``), ``render_mode`` (``None``,
``"human"``, ``"ansi"``, ``"rgb_array"``).
"""

# raw_env adds the sections Registered Configurations and Version History from the registry row.

from __future__ import annotations

from memtab_env.aec import Specs, game_module
from memtab_env.registry import GAMES

raw_env, env = game_module(GAMES["pelmanism"], __doc__, __name__, Specs(
    max_players=6, actions=52,
    observation_shape="(838,) for 2 players; 834 + 2 n for n players", observation_values="[0, 26]"))
__doc__ = raw_env.__doc__

__all__ = ["env", "raw_env"]
