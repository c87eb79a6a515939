"""Pelmanism observation encoder."""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.games.pelmanism.rules import FLIPS_PER_TURN, GONE, UP, Pelmanism, PelmanismState
from memtab_env.observations import Encoder, Field

_STATUS = np.eye(3, dtype=np.int8)


class PelmanismEncoder(Encoder):
    """Flat int8 observation of Pelmanism for one observer.

    ``P`` = number of positions (52 for the standard and colour decks, ``2N`` for
    ``pairs:N``, ``4N`` for ``quartets:N``), ``K`` = number of kinds (13 standard, 26
    colour, ``N`` for a special pack), ``n`` = number of players. Seats are listed
    *relative to the observer*: entry 0 is the observer, entry 1 the next seat in turn
    order, and so on.

    ================  ==========  =====================================================
    field             shape       meaning
    ================  ==========  =====================================================
    status            P x 3       one-hot per position: down (face down on the table),
                                  up (flipped first this turn), gone (taken)
    card              P x K       one-hot kind of the card at the position when this
                                  observer can see it: face up now, taken (taken pairs
                                  lie face up in front of their taker), or face down
                                  and remembered; all zeros otherwise
    pairs             n           pairs taken by each seat (0 .. P/2), observer first
    flip              2           one-hot index of the next flip within the turn (all
                                  zeros once the game is over)
    turn              n           one-hot seat on turn, observer first (all zeros once
                                  the game is over)
    ================  ==========  =====================================================

    Total size ``P (3 + K) + 2 n + 2``: 838 for the standard deck with two players,
    1514 for the colour deck, ``2N (3 + N) + 2 n + 2`` for ``pairs:N``. Kinds are the
    engine's kind ids (:mod:`memtab_env.games.pelmanism.rules`): ranks ``A..K`` = 0..12 for the
    standard deck; suits are not shown because they never matter for matching.
    """

    def token_layout(self) -> dict[str, Any]:
        """The set network's layout of this observation (plain data)."""
        g, o = self.game, self.offsets
        return {"game": "pelmanism", "size": self.size, "positions": g.num_positions,
                "kinds": g.num_kinds, "status": list(o["status"]), "card": list(o["card"]),
                "tableaux": None, "num_players": g.num_players, "global_start": o["card"][1],
                "scores": list(o["pairs"])}

    def __init__(self, game: Pelmanism) -> None:
        n = game.num_players
        p, k = game.num_positions, game.num_kinds
        self.game = game
        self.num_players = n
        self.num_positions = p
        self.num_kinds = k
        self.fields = [
            Field("status", (p, 3), 0, 1, "one-hot: down, up, gone"),
            Field("card", (p, k), 0, 1, "visible (up, taken) or remembered kind"),
            Field("pairs", (n,), 0, game.num_pairs, "pairs taken, observer first"),
            Field("flip", (FLIPS_PER_TURN,), 0, 1, "one-hot next flip in the turn"),
            Field("turn", (n,), 0, 1, "one-hot seat on turn, observer first"),
        ]
        self._finish()
        self._kind_rows = np.vstack([np.eye(k, dtype=np.int8), np.zeros((1, k), np.int8)])
        self._seat_order = [np.roll(np.arange(n), -i) for i in range(n)]

    def encode(
        self, state: PelmanismState, observer: int, remembered: np.ndarray
    ) -> np.ndarray:
        """Encode ``state`` for ``observer``; ``remembered`` masks the face-down positions
        whose card the observer remembers (from :class:`memtab_env.memory.Memory`)."""
        n = self.num_players
        status = state.status
        visible = (status == UP) | (status == GONE) | remembered
        kinds = np.where(visible, state.kinds, self.num_kinds)
        flip = np.zeros(FLIPS_PER_TURN, dtype=np.int8)
        turn = np.zeros(n, dtype=np.int8)
        if not state.over:
            flip[state.flip] = 1
            turn[(state.current - observer) % n] = 1
        return np.concatenate(
            [
                _STATUS[status].ravel(),
                self._kind_rows[kinds].ravel(),
                state.pairs[self._seat_order[observer]].astype(np.int8),
                flip,
                turn,
            ]
        )
