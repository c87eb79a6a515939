"""Triples (three of a kind), a game that lives in the tests, as a PettingZoo AEC env.

Description
-----------
Pelmanism with three of a kind: ``3 K`` cards (``K`` kinds, three of each) lie face
down; a turn is three flips, and three cards of a kind are taken.

Rules
-----
:mod:`tests.triples_game.rules`: the first two flips of a turn stay face up; if the
three match, the player takes them and plays again, otherwise they turn face down and
the next seat plays. The game ends when every card is taken; every top scorer wins.

Specs
-----
====================  ===========================================
Import                ``from tests.triples_game import triples_v0``
Actions               Discrete
Parallel API          No
Agents                ``agents = ['player_0', 'player_1']`` (``num_players``: 1 to 4)
Action Shape          Discrete(12)
Observation Shape     (91,) for the defaults; P (3 + K) + 2 n + 3
====================  ===========================================

Observation
-----------
:class:`tests.triples_game.observation.TriplesEncoder`, with ``action_mask`` and
``remembered_mask``.

Action
------
The position of a face-down card to flip.

Rewards
-------
``win`` (default), ``score`` (triples taken) or ``turns``, as every game.

Episode End
-----------
When every card is taken; truncated at ``GameInfo.max_game_length`` flips.

Arguments
---------
``num_kinds`` (2..8, default 4), ``num_players`` (1..4), ``first_player``, ``memory``,
``reward``, ``render_mode``.

Registered Configurations
-------------------------
``memtab/Triples-v0`` (PettingZoo AEC) and ``Triples-v0`` (Gymnasium), while the tests
that add its registry row run.

Version History
---------------
* v0: the fourth game of the tests.
"""

from __future__ import annotations

from typing import Any

from memtab_env.aec import MemoryGameEnv, StandardWrapper, wrap
from memtab_env.registry import GAMES


class raw_env(MemoryGameEnv):  # noqa: N801 - PettingZoo classic naming
    __doc__ = __doc__
    metadata = {"name": "triples_v0", "render_modes": ["human", "ansi", "rgb_array"],
                "is_parallelizable": False, "render_fps": 2}

    @property
    def game_spec(self) -> Any:  # the row is added by the tests that use the game
        return GAMES["triples"]


def env(**kwargs: Any) -> StandardWrapper:
    """The Triples AEC env with the standard wrapper (illegal action = loss)."""
    return wrap(raw_env(**kwargs))
