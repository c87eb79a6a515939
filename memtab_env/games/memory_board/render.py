"""Rendering of Memory: The Board Game as pure functions of a state: ``ansi`` and ``rgb``.

Images are drawn with Pillow's ``ImageDraw`` and its built-in font (the helpers of
:mod:`memtab_env.drawing`): no downloaded assets. The landscape tiles, which never change,
are drawn once per renderer and copied for every frame.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from memtab_env.drawing import CARD_BACK, CARD_FACE, HIGHLIGHT, TEXT, font, to_array
from memtab_env.games.memory_board.rules import (
    CHILDREN,
    CHOOSE,
    DOWN,
    FINAL,
    FLIP2,
    FREE,
    MAIN,
    PLACED,
    UP,
    MemoryBoard,
    MemoryBoardState,
)

BACKGROUND = (34, 52, 40)
TRUNK = (121, 85, 56)
TRUNK_EDGE = (70, 48, 30)
CROWN = (60, 150, 70)
ROOT = (96, 66, 40)
INK = (20, 20, 20)

ANSI_LEGEND = (
    "cell = landscape letter + card: '##' face down, '>XX' flipped this turn, "
    "'.' free, '=XX' returned card, '+XX' placed in this return"
)


class MemoryBoardRenderer:
    """Draws a state: the board by landscape, every tree, collected cards and the supply."""

    TILE, GAP, HEADER, LINE = 44, 2, 26, 20
    TREE_W = 58

    def __init__(self, game: MemoryBoard) -> None:
        self.game = game
        b = game.board
        self.board = b
        t, g = self.TILE, self.GAP
        self.board_w = g + b.cols * (t + g)
        self.board_h = g + b.rows * (t + g)
        n = game.num_players
        self.width = max(self.board_w + n * self.TREE_W + 2 * g, 420)
        self.height = self.HEADER + self.board_h + (n + 1) * self.LINE + 2 * g + 4
        self._base = self._draw_base()

    # -- text ---------------------------------------------------------------------------
    def status_line(self, state: MemoryBoardState) -> str:
        """One line: whose turn, what may be done, or the result."""
        game = self.game
        if state.over:
            winners = ", ".join(f"player_{w}" for w in game.winners(state))
            how = f" (turn limit of {game.max_turns} reached)" if state.capped else ""
            return f"Game over after {state.turn} turns{how}. Winner(s): {winners}"
        who = f"player_{state.current}"
        if state.phase == FLIP2:
            doing = "second flip"
        elif state.phase == CHOOSE:
            doing = {
                MAIN: "flip two cards or return cards",
                FINAL: "final return or pass",
                CHILDREN: "return cards",
            }[state.stage]
        else:
            doing = f"returning ({state.num_placed} placed; place more or end)"
        stage = ""
        if state.stage == FINAL:
            stage = f" | final round, {state.final_left} final turn(s) left"
        elif state.stage == CHILDREN:
            stage = " | children's returns"
        return f"Turn {state.turn}: {who} to play: {doing}{stage}"

    def _cell(self, state: MemoryBoardState, s: int, in_return: set[int]) -> str:
        b = self.board
        letter = b.letters[b.landscape[s]]
        status = int(state.status[s])
        if status == DOWN:
            body = " ##"
        elif status == UP:
            body = ">" + b.kind_codes[int(state.layout[s])]
        elif status == FREE:
            body = " ."
        else:
            mark = "+" if s in in_return else "="
            body = mark + b.kind_codes[int(state.layout[int(state.placed[s])])]
        return f"{letter}{body:<4}"

    def ansi(self, state: MemoryBoardState) -> str:
        """The board as text (see :data:`ANSI_LEGEND`), then trees, collected cards, supply."""
        game, b = self.game, self.board
        in_return = set(state.returning[: state.num_placed].tolist())
        lines = [self.status_line(state), "      " + " ".join(f"{c:<5}" for c in range(b.cols))]
        for r in range(b.rows):
            cells = [self._cell(state, r * b.cols + c, in_return) for c in range(b.cols)]
            lines.append(f"row {r} " + " ".join(cells))
        trees = game.trees(state)
        counts = game.collected_counts(state)
        for p in range(game.num_players):
            mark = "*" if (p == state.current and not state.over) else " "
            sizes = [size + 1 for size in range(4) for _ in range(int(state.trunks[p, size]))]
            trunks = "+".join(map(str, sorted(sizes, reverse=True))) or "-"
            held = " ".join(f"{b.letters[i]}{int(c)}" for i, c in enumerate(counts[p]))
            lines.append(
                f"{mark}player_{p}  tree {int(trees[p]):>3} ({trunks})  "
                f"collected {int(counts[p].sum()):>2}: {held}"
            )
        supply = ", ".join(f"{int(c)} x {size + 1}" for size, c in enumerate(state.supply))
        lines.append(f"supply (count x trunk size): {supply}")
        lines.append(
            "landscapes: " + ", ".join(f"{b.letters[i]} {b.names[i]}" for i in range(len(b.letters)))
        )
        lines.append(ANSI_LEGEND)
        return "\n".join(lines)

    # -- image --------------------------------------------------------------------------
    def position_boxes(self) -> list[tuple[int, int, int, int]]:
        """The box of every space in :meth:`rgb` (space = the action id that flips it)."""
        return [self._tile_box(s) for s in range(self.board.num_spaces)]

    def _tile_box(self, s: int) -> tuple[int, int, int, int]:
        r, c = divmod(s, self.board.cols)
        t, g = self.TILE, self.GAP
        x0, y0 = g + c * (t + g), self.HEADER + g + r * (t + g)
        return (x0, y0, x0 + t, y0 + t)

    def _draw_base(self) -> Image.Image:
        img = Image.new("RGB", (self.width, self.height), BACKGROUND)
        d = ImageDraw.Draw(img)
        for s in range(self.board.num_spaces):
            d.rectangle(self._tile_box(s), fill=self.board.rgbs[self.board.landscape[s]])
        return img

    def _card(
        self,
        d: ImageDraw.ImageDraw,
        s: int,
        kind: int,
        outline: tuple[int, int, int],
        width: int,
    ) -> None:
        x0, y0, x1, y1 = self._tile_box(s)
        box = (x0 + 4, y0 + 4, x1 - 4, y1 - 4)
        d.rounded_rectangle(box, radius=5, fill=CARD_FACE, outline=outline, width=width)
        colour = self.board.rgbs[self.board.kind_landscape[kind]]
        d.rectangle((box[0] + 3, box[1] + 3, box[2] - 3, box[1] + 8), fill=colour)
        d.text(
            ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2 + 4),
            self.board.kind_codes[kind],
            fill=INK,
            font=font(13),
            anchor="mm",
        )

    def rgb(self, state: MemoryBoardState) -> np.ndarray:
        """uint8 image (H, W, 3): tiles in landscape colours, cards, trees as stacked trunks."""
        b = self.board
        img = self._base.copy()
        d = ImageDraw.Draw(img)
        d.text((self.GAP + 2, 6), self.status_line(state), fill=TEXT, font=font(13))
        in_return = set(state.returning[: state.num_placed].tolist())
        for s in range(b.num_spaces):
            status = int(state.status[s])
            x0, y0, x1, y1 = self._tile_box(s)
            if status == DOWN:
                d.rounded_rectangle(
                    (x0 + 4, y0 + 4, x1 - 4, y1 - 4), radius=5, fill=CARD_BACK, outline=INK, width=1
                )
            elif status == UP:
                self._card(d, s, int(state.layout[s]), HIGHLIGHT, 3)
            elif status == PLACED:
                kind = int(state.layout[int(state.placed[s])])
                if s in in_return:
                    self._card(d, s, kind, HIGHLIGHT, 3)
                else:
                    self._card(d, s, kind, INK, 1)
            # FREE: the bare landscape tile
        self._draw_trees(d, state)
        self._draw_seats(d, state)
        return to_array(img)

    def _draw_trees(self, d: ImageDraw.ImageDraw, state: MemoryBoardState) -> None:
        game = self.game
        top, bottom = self.HEADER + 22, self.HEADER + self.board_h - 18
        unit = (bottom - top) / max(self.board.trunk_height, 1)
        trees = game.trees(state)
        for p in range(game.num_players):
            x0 = self.board_w + self.GAP + p * self.TREE_W
            cx = x0 + self.TREE_W / 2
            d.rectangle((cx - 12, bottom, cx + 12, bottom + 6), fill=ROOT)  # root
            y = bottom
            for size in range(3, -1, -1):  # the biggest trunks at the bottom
                for _ in range(int(state.trunks[p, size])):
                    h = max(1.0, (size + 1) * unit)
                    d.rectangle((cx - 9, y - h, cx + 9, y), fill=TRUNK, outline=TRUNK_EDGE)
                    y -= h
            d.ellipse((cx - 16, y - 22, cx + 16, y), fill=CROWN)  # crown
            mark = ">" if (p == state.current and not state.over) else ""
            d.text(
                (cx, bottom + 16),
                f"{mark}P{p} {int(trees[p])}",
                fill=TEXT,
                font=font(12),
                anchor="mm",
            )

    def _draw_seats(self, d: ImageDraw.ImageDraw, state: MemoryBoardState) -> None:
        game, b = self.game, self.board
        counts = game.collected_counts(state)
        y = self.HEADER + self.board_h + 4
        for p in range(game.num_players):
            d.text((self.GAP + 2, y + 2), f"P{p} collected:", fill=TEXT, font=font(12))
            for i in range(b.num_landscapes):
                x = 100 + i * 40
                d.rectangle((x, y + 2, x + 14, y + 16), fill=b.rgbs[i], outline=INK)
                d.text((x + 18, y + 2), str(int(counts[p, i])), fill=TEXT, font=font(12))
            y += self.LINE
        supply = "  ".join(f"{size + 1}-trunks: {int(c)}" for size, c in enumerate(state.supply))
        d.text((self.GAP + 2, y + 2), f"supply  {supply}", fill=TEXT, font=font(12))
