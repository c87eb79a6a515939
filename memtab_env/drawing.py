"""What every game's renderer shares: colours, Pillow's built-in font, cards, position
labels, note panels, and a plain description of any game's transition.

Images are drawn with Pillow's ``ImageDraw`` and its built-in font: no downloaded assets,
so they work headless and with Gymnasium's ``RecordVideo``. Each game's renderer (the
``renderer`` of its registry row, ``render.py`` in the game's folder under
:mod:`memtab_env.games`) draws with these.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from memtab_env.games.base import Game, Transition

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
    return ", ".join(parts) + turn_note(t)


def turn_note(t: Transition) -> str:
    if t.game_over:
        return "; game over"
    if t.turn_over and t.next_player == t.player:
        return "; extra turn"
    return ""
