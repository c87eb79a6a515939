"""Rendering as pure functions of a state: ``ansi`` text and ``rgb_array`` images.

Images are drawn with Pillow's ``ImageDraw`` and its built-in font: no downloaded assets,
so they work headless and with Gymnasium's ``RecordVideo``. The drawing helpers at the
top are shared by every game's renderer.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from memtab_env.games.memtab import (
    CARD_CODES,
    DOWN,
    FLIPS_PER_TURN,
    UP,
    MemTab,
    MemTabState,
)

FELT = (22, 92, 56)
CARD_BACK = (40, 70, 160)
CARD_FACE = (250, 250, 245)
RED = (200, 30, 30)
BLACK = (20, 20, 20)
TEXT = (240, 240, 240)
HIGHLIGHT = (255, 210, 60)


@lru_cache(maxsize=8)
def font(size: int = 14) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's built-in font (scalable since Pillow 10.1), cached."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # pragma: no cover - Pillow < 10.1
        return ImageFont.load_default()


def draw_card(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    label: str | None,
    colour: tuple[int, int, int] = BLACK,
    face_up: bool = True,
    outline: tuple[int, int, int] | None = None,
    size: int = 16,
) -> None:
    """One card: a face-down back when ``face_up`` is False, else ``label`` on a face."""
    fill = CARD_FACE if face_up else CARD_BACK
    draw.rounded_rectangle(box, radius=6, fill=fill, outline=outline or (0, 0, 0), width=2)
    if face_up and label:
        x0, y0, x1, y1 = box
        draw.text(((x0 + x1) / 2, (y0 + y1) / 2), label, fill=colour, font=font(size), anchor="mm")


def to_array(img: Image.Image) -> np.ndarray:
    """uint8 array of shape (H, W, 3)."""
    return np.asarray(img.convert("RGB"), dtype=np.uint8).copy()


class MemTabRenderer:
    """Draws a MemTab state: the 4x7 table, every tableau and score, whose turn it is."""

    ROWS, COLS = 4, 7
    CW, CH, GAP = 54, 74, 8

    def __init__(self, game: MemTab) -> None:
        self.game = game

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

    def ansi(self, state: MemTabState) -> str:
        """The table as text: ``##`` face down, a card code face up, ``..`` empty."""
        lines = [self.status_line(state), "      " + "".join(f"{c:>5}" for c in range(self.COLS))]
        for r in range(self.ROWS):
            cells = []
            for c in range(self.COLS):
                pos = r * self.COLS + c
                st = state.status[pos]
                if st == DOWN:
                    cells.append("##")
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
