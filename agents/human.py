"""``human``: a person plays MemTab from the terminal.

:class:`HumanAgent` shows the table and asks for a flip. A flip is written as the
position number (``0``..``27``, row-major in the 4 x 7 grid) or as ``row col`` (``2 5``,
``2,5``). Anything else is refused with the reason and asked again: not a number, out of
range, or a card that cannot be flipped (already face up this turn, gone, in a tableau).
``?`` or ``help`` prints the help; ``q`` or ``quit`` (or the end of input) stops the game
by raising :class:`HumanQuit`.

What it shows: the table drawn by ``renderer`` (``memtab play`` passes the env's ``ansi``
render), or, without a renderer, the table as the observation shows it. In both cases
the face-down cards the observation still shows (those remembered under the env's memory
model) are listed, since the env's render keeps them face down. The human's own memory is
their own business: like every agent, a human sees what the observation shows.

``input_fn`` and ``output_fn`` (default :func:`input` and :func:`print`) make the agent
scriptable: the tests drive it with a list of answers.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np
from memtab_env.agents.belief import action_mask, encoder_for, flat_observation, num_players_of

from memtab_env.games.memtab.rules import CARD_CODES, DOWN, GONE, NUM_POSITIONS, TABLEAU, UP

ROWS, COLS = 4, 7
HELP = (
    "Flip a face-down card: type its position 0-27 (row-major, 7 per row) or 'row col' "
    "(rows 0-3, columns 0-6), e.g. '9' or '1 2'. '?' shows this help, 'q' quits."
)
_WHY = {UP: "is already face up this turn", GONE: "has left the game", TABLEAU: "is in a tableau"}


class HumanQuit(Exception):
    """The human asked to stop (``q``, ``quit`` or end of input)."""


def parse_position(text: str) -> int:
    """Position from ``"9"``, ``"1 2"`` or ``"1,2"``; ValueError with the reason."""
    parts = text.replace(",", " ").split()
    if not parts:
        raise ValueError("type a position (0-27) or 'row col'")
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a position: type 0-27 or 'row col'") from None
    if len(nums) == 1:
        pos = nums[0]
        if not 0 <= pos < NUM_POSITIONS:
            raise ValueError(f"position {pos} is out of range: positions are 0-27")
        return pos
    if len(nums) == 2:
        row, col = nums
        if not (0 <= row < ROWS and 0 <= col < COLS):
            raise ValueError(f"row {row} column {col} is off the table: rows 0-3, columns 0-6")
        return row * COLS + col
    raise ValueError(f"{text.strip()!r}: give one position or 'row col'")


def remembered_cards(observation: Any) -> dict[int, str]:
    """Face-down positions whose card the observation shows, with the card code."""
    flat = flat_observation(observation)
    views = encoder_for(num_players_of(flat)).views(flat)
    status = views["status"].argmax(axis=1)
    card = views["card"]
    return {
        int(p): CARD_CODES[int(card[p].argmax())] for p in np.flatnonzero((status == DOWN) & card.any(axis=1))
    }


def render_observation(observation: Any) -> str:
    """The table as the observation shows it (``[R5]``: face down, remembered)."""
    flat = flat_observation(observation)
    n = num_players_of(flat)
    views = encoder_for(n).views(flat)
    status = views["status"].argmax(axis=1)
    card = views["card"]
    lines = ["        " + "".join(f"{c:^6}" for c in range(COLS))]
    for r in range(ROWS):
        cells = []
        for c in range(COLS):
            p = r * COLS + c
            code = CARD_CODES[int(card[p].argmax())] if card[p].any() else None
            if status[p] == DOWN:
                cell = f"[{code}]" if code else "##"
            elif status[p] == UP:
                cell = code or "??"
            elif status[p] == TABLEAU:
                cell = "--"
            else:
                cell = ".."
            cells.append(f"{cell:^6}")
        lines.append(f"row {r}   " + "".join(cells))
    names = ["you"] + [f"seat +{i}" for i in range(1, n)]
    for i, name in enumerate(names):
        held = " ".join(CARD_CODES[k] for k in np.flatnonzero(views["tableaux"][i])) or "-"
        lines.append(f"{name:<8} score {int(views['scores'][i]):>4}  tableau: {held}")
    return "\n".join(lines)


class HumanAgent:
    """Asks a person for every flip (module doc).

    Args:
        input_fn: reads one answer, given a prompt (default: the builtin ``input``).
        output_fn: shows a line of text (default: the builtin ``print``).
        renderer: returns the table as text (e.g. an ``ansi`` env's ``render``); without
            it the table is drawn from the observation.
    """

    def __init__(
        self,
        input_fn: Callable[[str], str] | None = None,
        output_fn: Callable[[str], Any] | None = None,
        renderer: Callable[[], Any] | None = None,
    ) -> None:
        # looked up when called, so that a patched builtins.input is honoured
        self.input_fn = input_fn or (lambda prompt: builtins.input(prompt))
        self.output_fn = output_fn or (lambda text: builtins.print(text))
        self.renderer = renderer

    def reset(self, seed: int | None = None) -> None:
        """Nothing to forget: the person remembers (or not) by themselves."""

    def act(self, observation: Any) -> int:
        legal = action_mask(observation)
        if not legal.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        flat = flat_observation(observation)
        views = encoder_for(num_players_of(flat)).views(flat)
        status = views["status"].argmax(axis=1)
        flip = int(views["flip"].argmax()) + 1
        table = self.renderer() if self.renderer is not None else None
        self.output_fn(str(table) if table is not None else render_observation(observation))
        if self.renderer is not None:
            seen = remembered_cards(observation)
            if seen:
                listed = ", ".join(f"{p}={code}" for p, code in sorted(seen.items()))
                self.output_fn(f"Face-down cards you remember: {listed}")
        while True:
            try:
                answer = self.input_fn(f"Your flip {flip} of 3 (0-27 or 'row col', ? help): ")
            except EOFError:
                raise HumanQuit("end of input") from None
            text = answer.strip().lower()
            if text in ("q", "quit", "exit"):
                raise HumanQuit("quit")
            if text in ("?", "h", "help"):
                self.output_fn(HELP)
                continue
            try:
                pos = parse_position(text)
            except ValueError as exc:
                self.output_fn(f"Not a flip: {exc}.")
                continue
            if not legal[pos]:
                why = _WHY.get(int(status[pos]), "cannot be flipped")
                self.output_fn(f"Position {pos} {why}; pick a face-down card ('##').")
                continue
            return pos
