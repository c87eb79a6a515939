"""Rendering Pelmanism as pure functions of a state: ``ansi`` text and ``rgb`` images.

The table is drawn as the engine's grid (4 rows of 13 for 52 cards, see
:func:`memtab_env.games.pelmanism.rules.grid_shape`), positions numbered row-major. Images use
the shared drawing helpers of :mod:`memtab_env.drawing` (Pillow's built-in font, no
downloaded assets); every image of one configuration has the same size, so frames can be
written to a video.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from memtab_env.drawing import BLACK, FELT, HIGHLIGHT, RED, TEXT, draw_card, font, to_array
from memtab_env.games.pelmanism.rules import DOWN, GONE, SUIT_COLOUR, UP, Pelmanism, PelmanismState

_TAKEN_CELL = "  "
_DOWN_CELL = "##"


class PelmanismRenderer:
    """Draws a Pelmanism state: the table, the previous turn, every player's pairs and
    whose turn it is."""

    CW, CH, GAP = 44, 60, 8  # card size and spacing on the table
    TW, TH, TGAP = 22, 30, 3  # size of a taken pair's card
    HEADER, LABEL_W, MIN_WIDTH = 48, 96, 420

    def __init__(self, game: Pelmanism) -> None:
        self.game = game
        n = game.num_players
        self.width = max(self.MIN_WIDTH, self.GAP + game.cols * (self.CW + self.GAP))
        per_line = max(1, (self.width - self.LABEL_W - self.GAP) // (self.TW + self.TGAP))
        self._taken_per_line = per_line
        lines = math.ceil(game.num_pairs / per_line)
        self._player_h = lines * (self.TH + self.TGAP) + self.GAP
        self._table_h = self.HEADER + game.rows * (self.CH + self.GAP)
        self.height = self._table_h + n * self._player_h + self.GAP

    def position_boxes(self) -> list[tuple[int, int, int, int]]:
        """The box of every position in :meth:`rgb` (position = action id)."""
        cw, ch, gap, cols = self.CW, self.CH, self.GAP, self.game.cols
        return [(gap + (p % cols) * (cw + gap), self.HEADER + (p // cols) * (ch + gap),
                 gap + (p % cols) * (cw + gap) + cw, self.HEADER + (p // cols) * (ch + gap) + ch)
                for p in range(self.game.num_positions)]

    # -- text --------------------------------------------------------------------------
    def status_line(self, state: PelmanismState) -> str:
        """One line: the deck, and whose turn it is (or the result)."""
        game = self.game
        head = f"Pelmanism, deck {game.deck.spec}"
        turns = game.turns_taken(state)
        if state.over:
            if game.stopped_by_turn_limit(state):
                head = f"{head}: stopped by the turn limit"
            elif game.num_players == 1:
                return f"{head}: table cleared in {turns} turns"
            if game.num_players == 1:
                return f"{head} after {turns} turns with {int(state.pairs[0])} pairs"
            winners = game.winners(state)
            names = ", ".join(f"player_{w}" for w in winners)
            best = int(state.pairs.max())
            shared = " (shared win)" if len(winners) > 1 else ""
            return f"{head}: game over after {turns} turns; winner(s) {names} with {best} pairs{shared}"
        return (
            f"{head}: turn {turns + 1}, player_{state.current} to play flip "
            f"{state.flip + 1} of 2"
        )

    def last_turn_line(self, state: PelmanismState) -> str | None:
        """What the previous turn showed (both cards, and whether they matched), or None
        before the first turn ends."""
        a, b = (int(p) for p in state.last)
        if a < 0:
            return None
        game = self.game
        matched = state.status[a] == GONE and state.status[b] == GONE and state.owner[a] == state.owner[b]
        who = int(state.owner[a]) if matched else (state.current - 1) % game.num_players
        outcome = "a match, taken" if matched else "no match, turned back face down"
        return (
            f"previous turn: player_{who} flipped {a} ({game.position_code(state, a)}) and "
            f"{b} ({game.position_code(state, b)}): {outcome}"
        )

    def cell(self, state: PelmanismState, pos: int) -> str:
        """``##`` face down, the card code face up, blank once taken."""
        st = state.status[pos]
        if st == DOWN:
            return _DOWN_CELL
        if st == UP:
            return self.game.position_code(state, pos)
        return _TAKEN_CELL

    def ansi(self, state: PelmanismState) -> str:
        """The table as text, then the previous turn and every player's pairs
        (``*`` marks the player on turn)."""
        game = self.game
        width = 5
        lines = [self.status_line(state)]
        lines.append("       " + "".join(f"{c:>{width}}" for c in range(game.cols)))
        for r in range(game.rows):
            cells = [
                self.cell(state, pos)
                for pos in range(r * game.cols, min((r + 1) * game.cols, game.num_positions))
            ]
            lines.append(f"row {r:<2} " + "".join(f"{x:>{width}}" for x in cells).rstrip())
        last = self.last_turn_line(state)
        if last:
            lines.append(last)
        for p in range(game.num_players):
            mark = "*" if (p == state.current and not state.over) else " "
            taken = self._taken(state, p)
            cards = " ".join(game.position_code(state, int(i)) for i in taken)
            lines.append(f"{mark}player_{p}  pairs {int(state.pairs[p]):>2}  taken: {cards or '-'}")
        if game.num_players == 1:
            lines.append(f" turns taken: {game.turns_taken(state)}")
        return "\n".join(lines)

    def _taken(self, state: PelmanismState, player: int) -> np.ndarray:
        """Positions of the cards ``player`` took, the two cards of each pair together."""
        taken = self.game.taken(state, player)
        return taken[np.argsort(state.kinds[taken], kind="stable")]

    # -- image -------------------------------------------------------------------------
    def _colour(self, state: PelmanismState, pos: int) -> tuple[int, int, int]:
        """Red for hearts and diamonds, black otherwise (special packs are black)."""
        if self.game.deck.spec in ("standard", "colour"):
            suit = int(state.layout[pos]) // 13
            return RED if SUIT_COLOUR[suit] == 0 else BLACK
        return BLACK

    def rgb(self, state: PelmanismState) -> np.ndarray:
        """The state as a uint8 image of shape ``(height, width, 3)`` (fixed per game)."""
        game = self.game
        cw, ch, gap = self.CW, self.CH, self.GAP
        img = Image.new("RGB", (self.width, self.height), FELT)
        d = ImageDraw.Draw(img)
        d.text((gap, 6), self.status_line(state), fill=TEXT, font=font(12))
        last = self.last_turn_line(state)
        if last:
            d.text((gap, 24), last, fill=TEXT, font=font(11))
        recent = {int(p) for p in state.last if p >= 0}
        for pos in range(game.num_positions):
            r, c = divmod(pos, game.cols)
            x0, y0 = gap + c * (cw + gap), self.HEADER + r * (ch + gap)
            box = (x0, y0, x0 + cw, y0 + ch)
            st = state.status[pos]
            if st == DOWN:
                # the two cards just turned back are outlined: everybody saw them
                outline = HIGHLIGHT if pos in recent else None
                draw_card(d, box, None, face_up=False, outline=outline)
            elif st == UP:
                draw_card(d, box, game.position_code(state, pos), self._colour(state, pos),
                          outline=HIGHLIGHT, size=14)
            else:
                d.rounded_rectangle(box, radius=6, outline=(60, 120, 80), width=1)
        tw, th, tgap = self.TW, self.TH, self.TGAP
        for p in range(game.num_players):
            y = self._table_h + p * self._player_h
            mark = ">" if (p == state.current and not state.over) else " "
            d.text((gap, y + th / 2), f"{mark}P{p} {int(state.pairs[p]):>2}", fill=TEXT,
                   font=font(13), anchor="lm")
            taken = self._taken(state, p)
            for j, i in enumerate(taken[::2]):  # one card per pair taken
                line, col = divmod(j, self._taken_per_line)
                x0 = self.LABEL_W + col * (tw + tgap)
                y0 = y + line * (th + tgap)
                draw_card(d, (x0, y0, x0 + tw, y0 + th), game.position_code(state, int(i)),
                          self._colour(state, int(i)), size=9)
        return to_array(img)
