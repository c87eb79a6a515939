"""Rendering as pure functions of a state: ``ansi`` text and ``rgb_array`` images.

Images are drawn with Pillow's ``ImageDraw`` and its built-in font: no downloaded assets,
so they work headless and with Gymnasium's ``RecordVideo``. The drawing helpers at the
top are shared by every game's renderer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from memtab_env.games.base import Game, Transition
from memtab_env.games.memtab import (
    CARD_CODES,
    DOWN,
    FLIPS_PER_TURN,
    TABLEAU,
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


def draw_position_labels(frame: np.ndarray, boxes: list[tuple[int, int, int, int]]) -> np.ndarray:
    """``frame`` with each position's number (its action id) in the top-left corner of
    its box ``boxes[p]``: a dark tag with light digits, readable on every card."""
    img = Image.fromarray(frame)
    d = ImageDraw.Draw(img)
    f = font(10)
    for pos, (x0, y0, _, _) in enumerate(boxes):
        text = str(pos)
        w = 6 * len(text) + 4
        d.rectangle((x0 + 2, y0 + 2, x0 + 2 + w, y0 + 14), fill=(0, 0, 0))
        d.text((x0 + 4, y0 + 3), text, fill=(255, 255, 255), font=f)
    return to_array(img)


def draw_notes(frame: np.ndarray, lines: list[str], rows: int) -> np.ndarray:
    """``frame`` with a panel of ``rows`` text lines below it (fixed height, so frames of
    one game keep one size: a video needs that); extra lines are summed up."""
    if len(lines) > rows:
        lines = [*lines[: rows - 1], f"... and {len(lines) - rows + 1} more"]
    h, w = frame.shape[:2]
    img = Image.new("RGB", (w, h + 6 + 14 * rows), FELT)
    img.paste(Image.fromarray(frame), (0, 0))
    d = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        d.text((8, h + 4 + 14 * i), line, fill=TEXT, font=font(11))
    return to_array(img)


def describe_transition(game: Game, state: Any, t: Transition) -> str:
    """What one action did, in words: the card it revealed, a pair that left, an extra
    turn, the end of the game (from the engine's :class:`~memtab_env.games.base.Transition`
    and the state after it)."""
    parts = []
    if t.revealed:
        pos, _ = t.revealed[0]
        parts.append(f"flips {pos}: {game.layout_codes(state)[pos]}")
    else:
        parts.append(f"action {t.action}")
    if t.removed:
        parts.append("a pair is taken")
    return ", ".join(parts) + _turn_note(t)


def _turn_note(t: Transition) -> str:
    if t.game_over:
        return "; game over"
    if t.turn_over and t.next_player == t.player:
        return "; extra turn"
    return ""


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
        return text + _turn_note(t)

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
