"""Rendering MemTab as pure functions of a state: ``ansi`` text and ``rgb_array`` images.

Images use the shared drawing helpers of :mod:`memtab_env.drawing` (Pillow's built-in
font, no downloaded assets), so they work headless and with Gymnasium's ``RecordVideo``.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from memtab_env.drawing import BLACK, FELT, HIGHLIGHT, RED, TEXT, draw_card, font, to_array, turn_note
from memtab_env.games.base import Transition
from memtab_env.games.memtab.rules import (
    CARD_CODES,
    DOWN,
    FLIPS_PER_TURN,
    TABLEAU,
    UP,
    MemTab,
    MemTabState,
)


class MemTabRenderer:
    """Draws a MemTab state: the 4x7 table, every tableau and score, whose turn it is."""

    ROWS, COLS = 4, 7
    CW, CH, GAP = 54, 74, 8

    def __init__(self, game: MemTab) -> None:
        self.game = game

    def position_boxes(self) -> list[tuple[int, int, int, int]]:
        """The box of every position in :meth:`rgb` (position = action id)."""
        cw, ch, gap = self.CW, self.CH, self.GAP
        out = []
        for pos in range(self.ROWS * self.COLS):
            r, c = divmod(pos, self.COLS)
            x0, y0 = gap + c * (cw + gap), 30 + r * (ch + gap)
            out.append((x0, y0, x0 + cw, y0 + ch))
        return out

    def describe(self, state: MemTabState, t: Transition) -> str:
        """What a flip caused: the card, a pair removed (flips 1 and 2, or flip 3 with the
        tableau's twin), the card going to the tableau, an extra turn, an instant win."""
        pos, kind = t.revealed[0]
        text = f"flips {pos} (row {pos // self.COLS}, column {pos % self.COLS}): {CARD_CODES[kind]}"
        if t.removed:
            twin = next(p for p in t.removed if p != pos)
            text += f", a pair is removed (with {twin})"
        elif state.status[pos] == TABLEAU:
            text += f", to player_{t.player}'s tableau"
        if t.game_over and self.game.instant_win(state):
            return text + "; two pairs in one turn: instant win"
        return text + turn_note(t)

    def status_line(self, state: MemTabState) -> str:
        if state.over:
            winners = ", ".join(f"player_{w}" for w in self.game.winners(state))
            how = " (instant win: two pairs in one turn)" if state.instant_win else ""
            turns = state.turn - (0 if state.instant_win else 1)
            return f"Game over after {turns} turns. Winner(s): {winners}{how}"
        return (
            f"Turn {state.turn}: player_{state.current} to play flip "
            f"{state.flip + 1} of {FLIPS_PER_TURN}"
        )

    def ansi(self, state: MemTabState, labels: bool = False) -> str:
        """The table as text: ``##`` face down (with ``labels``: the position number, the
        action id that flips it), a card code face up, ``..`` empty."""
        lines = [self.status_line(state), "      " + "".join(f"{c:>5}" for c in range(self.COLS))]
        for r in range(self.ROWS):
            cells = []
            for c in range(self.COLS):
                pos = r * self.COLS + c
                st = state.status[pos]
                if st == DOWN:
                    cells.append(f"#{pos}" if labels else "##")
                elif st == UP:
                    cells.append(CARD_CODES[state.layout[pos]])
                else:
                    cells.append("..")
            lines.append(f"row {r} " + "".join(f"{x:>5}" for x in cells))
        scores = self.game.scores(state)
        for p in range(self.game.num_players):
            cards = " ".join(CARD_CODES[state.layout[i]] for i in self.game.tableau(state, p))
            mark = "*" if (p == state.current and not state.over) else " "
            lines.append(f"{mark}player_{p}  score {int(scores[p]):>4}  tableau: {cards or '-'}")
        return "\n".join(lines)

    def rgb(self, state: MemTabState) -> np.ndarray:
        n = self.game.num_players
        cw, ch, gap = self.CW, self.CH, self.GAP
        tw, th = 30, 42  # tableau card size
        width = gap + self.COLS * (cw + gap)
        table_h = 30 + self.ROWS * (ch + gap)
        height = table_h + n * (th + gap) + gap
        img = Image.new("RGB", (width, height), FELT)
        d = ImageDraw.Draw(img)
        d.text((gap, 8), self.status_line(state), fill=TEXT, font=font(13))
        for pos in range(self.ROWS * self.COLS):
            r, c = divmod(pos, self.COLS)
            x0, y0 = gap + c * (cw + gap), 30 + r * (ch + gap)
            box = (x0, y0, x0 + cw, y0 + ch)
            st = state.status[pos]
            kind = int(state.layout[pos])
            colour = RED if kind < 7 else BLACK
            if st == DOWN:
                draw_card(d, box, None, face_up=False)
            elif st == UP:
                draw_card(d, box, CARD_CODES[kind], colour, outline=HIGHLIGHT)
            else:
                d.rounded_rectangle(box, radius=6, outline=(60, 120, 80), width=1)
        scores = self.game.scores(state)
        for p in range(n):
            y0 = table_h + p * (th + gap)
            mark = ">" if (p == state.current and not state.over) else " "
            d.text((gap, y0 + th / 2), f"{mark}P{p} {int(scores[p]):+d}", fill=TEXT,
                   font=font(13), anchor="lm")
            for j, i in enumerate(self.game.tableau(state, p)):
                kind = int(state.layout[i])
                x0 = 80 + j * (tw + 4)
                draw_card(d, (x0, y0, x0 + tw, y0 + th), CARD_CODES[kind],
                          RED if kind < 7 else BLACK, size=11)
        return to_array(img)
