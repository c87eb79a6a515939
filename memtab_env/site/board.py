"""What the record viewer shows, from the Python engines: the statement that
``static/rules.js`` must agree with (``tests/test_site_browser.py`` compares the two at
every flip of games of every game type).

Every position of the viewer is a DOM element with ``data-position`` (its index) and
``data-card``: the card's code as records write it while face up (for the board game,
also a returned card lying face up on a space), ``down`` while face down, ``taken`` once
the card has left the table (MemTab: gone or in a tableau; Pelmanism: taken in a pair;
the board game: collected, the space empty). ``data-remembered`` marks the face-down
cards that the acting player's observation remembers under the memory model
(:class:`memtab_env.memory.Memory`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from memtab_env.games.base import Game
from memtab_env.games.memory_board.rules import PLACED
from memtab_env.memory import Memory
from memtab_env.record import check_record, engine_for

#: the data-card of a face-down card and of a card that has left the table
DOWN, TAKEN = "down", "taken"
#: the status code of a card flipped this turn, face up on the table, in every game
UP = 1


def position_cards(game: Game, state: Any) -> list[str]:
    """``data-card`` of every position of ``state`` (see the module docstring)."""
    codes = game.layout_codes(state)
    status = np.asarray(state.status)
    down = game.face_down(state)
    out = []
    for q in range(game.info.num_positions):
        if down[q]:
            out.append(DOWN)
        elif status[q] == UP:
            out.append(codes[q])
        elif game.name == "memory_board" and status[q] == PLACED:  # a returned card lies face up
            out.append(codes[int(state.placed[q])])
        else:
            out.append(TAKEN)
    return out


def viewer_frames(record: dict[str, Any], memory: str | None = None) -> Iterator[dict[str, Any]]:
    """What the viewer shows at flip 0, 1, ..., len(actions) of ``record``: ``cards``
    (:func:`position_cards`), ``remembered`` (bool per position, of the player on turn;
    all False once the game is over), ``current``, ``scores`` and ``over``. ``memory``
    overrides the record's memory model (not ``decay``, which the viewer does not draw)."""
    check_record(record)
    game = engine_for(record)
    state = game.from_layout(record["layout"])
    spec = memory or record["options"].get("memory", "perfect")
    mem = Memory(spec, game.num_players, game.info.num_positions)
    for i in range(len(record["actions"]) + 1):
        over = bool(game.is_over(state))
        current = int(game.current_player(state))
        known = (np.zeros(game.info.num_positions, dtype=bool) if over
                 else mem.remembered(current, game.face_down(state)))
        yield {"cards": position_cards(game, state), "remembered": known.tolist(), "current": current,
               "scores": np.asarray(game.scores(state)).tolist(), "over": over}
        if i < len(record["actions"]):
            entry = record["actions"][i]
            t = game.apply_inplace(state, entry["action"])
            mem.on_action(t.player, t.revealed)
