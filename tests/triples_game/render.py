"""Triples renderer: a text grid (``ansi``) and a small picture (``rgb``)."""

from __future__ import annotations

import numpy as np

from tests.triples_game.rules import DOWN, GONE, Triples, TriplesState


class TriplesRenderer:
    """Draws one Triples state: face-down cards ``##``, face-up ones their code."""

    CELL = 24

    def __init__(self, game: Triples) -> None:
        self.game = game
        self.cols = 3

    def ansi(self, state: TriplesState) -> str:
        cells = ["##" if s == DOWN else (".." if s == GONE else self.game.card_code(int(k)))
                 for s, k in zip(state.status.tolist(), state.kinds.tolist(), strict=True)]
        rows = [" ".join(cells[r : r + self.cols]) for r in range(0, len(cells), self.cols)]
        head = (f"turn {state.turns + 1}, player {state.current} to flip"
                if not state.over else "game over")
        return "\n".join([head, *rows, f"triples: {state.triples.tolist()}"])

    def rgb(self, state: TriplesState) -> np.ndarray:
        c, rows = self.CELL, -(-self.game.num_positions // self.cols)
        frame = np.full((rows * c, self.cols * c, 3), 40, dtype=np.uint8)
        for p, (s, k) in enumerate(zip(state.status.tolist(), state.kinds.tolist(), strict=True)):
            r, q = divmod(p, self.cols)
            colour = (90, 90, 160) if s == DOWN else (30, 30, 30) if s == GONE else (
                40 + 25 * k, 200 - 20 * k, 120)
            frame[r * c + 2 : (r + 1) * c - 2, q * c + 2 : (q + 1) * c - 2] = colour
        return frame
