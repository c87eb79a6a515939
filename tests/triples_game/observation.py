"""Triples observation encoder."""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.observations import Encoder, Field
from tests.triples_game.rules import FLIPS_PER_TURN, GONE, UP, Triples, TriplesState

_STATUS = np.eye(3, dtype=np.int8)


class TriplesEncoder(Encoder):
    """Flat int8 observation of Triples for one observer (seats relative to it).

    ================  ==========  =====================================================
    field             shape       meaning
    ================  ==========  =====================================================
    status            P x 3       one-hot per position: down, up (this turn), gone
    card              P x K       one-hot kind when visible: up, taken, or face down and
                                  remembered
    triples           n           triples taken by each seat, observer first
    flip              3           one-hot next flip of the turn (zeros once over)
    turn              n           one-hot seat on turn, observer first (zeros once over)
    ================  ==========  =====================================================
    """

    def __init__(self, game: Triples) -> None:
        n, p, k = game.num_players, game.num_positions, game.num_kinds
        self.game, self.num_players, self.num_positions, self.num_kinds = game, n, p, k
        self.fields = [
            Field("status", (p, 3), 0, 1, "one-hot: down, up, gone"),
            Field("card", (p, k), 0, 1, "visible (up, taken) or remembered kind"),
            Field("triples", (n,), 0, k, "triples taken, observer first"),
            Field("flip", (FLIPS_PER_TURN,), 0, 1, "one-hot next flip in the turn"),
            Field("turn", (n,), 0, 1, "one-hot seat on turn, observer first"),
        ]
        self._finish()
        self._kind_rows = np.vstack([np.eye(k, dtype=np.int8), np.zeros((1, k), np.int8)])

    def token_layout(self) -> dict[str, Any]:
        g, o = self.game, self.offsets
        return {"game": "triples", "size": self.size, "positions": g.num_positions,
                "kinds": g.num_kinds, "status": list(o["status"]), "card": list(o["card"]),
                "tableaux": None, "num_players": g.num_players, "global_start": o["card"][1],
                "scores": list(o["triples"])}

    def encode(self, state: TriplesState, observer: int, remembered: np.ndarray) -> np.ndarray:
        n = self.num_players
        visible = (state.status == UP) | (state.status == GONE) | remembered
        kinds = np.where(visible, state.kinds, self.num_kinds)
        flip = np.zeros(FLIPS_PER_TURN, dtype=np.int8)
        turn = np.zeros(n, dtype=np.int8)
        if not state.over:
            flip[state.flip] = 1
            turn[(state.current - observer) % n] = 1
        order = np.roll(np.arange(n), -observer)
        return np.concatenate([_STATUS[state.status].ravel(), self._kind_rows[kinds].ravel(),
                               state.triples[order].astype(np.int8), flip, turn])
