"""Memory: The Board Game rules engine: find pairs, return them to the board, grow a tree.

Rules: ``docs/sources/004_c6aa3965ef94550f.txt`` with ``docs/rulings.md`` (board game
1-8). The board is data (:mod:`memtab_env.boards`, ``docs/boards.md``); the default is
6 x 10 spaces, five landscapes of 12 spaces, 30 picture pairs, 6 per landscape.

Glossary: a *space* (0 .. P-1, row by row) is a square of the board; it is also the
*position* of the card dealt on it, and the action id that flips that card. A *card* is
identified by its *card id*, the space it was dealt on (card ids never change, even when
the card is later returned to another space). Its *kind* is its *picture* (0 .. K-1);
every picture exists twice (a *pair*) and has one background colour, its *landscape*.
Cards a player took are *collected* (in front of the player, face down, everybody saw
them). A *return* places collected cards face up on *free* spaces (spaces whose card
was taken) of their own landscape; it earns a *trunk*; the trunks of a player make its
*tree*, whose height (sum of trunk sizes) is the score. A *turn* is either action A
(two flips) or action B (one return); after a pair, the same player takes another turn.

Actions (``P`` = number of spaces; the default board: P = 60, 122 actions)::

    ==============  ===============================================================
    id              action
    ==============  ===============================================================
    0 .. P-1        flip the face-down card on space p
    P .. 2P-1       place a collected card on space s = id - P; the card is the
                    player's collected card of the landscape of s with the lowest
                    card id (cards of one landscape are interchangeable when placing)
    2P              end the return (after 1 to 3 placements)
    2P+1            pass: make no final return (final round only)
    ==============  ===============================================================

Turn structure and legal actions:

- *Turn start* (main play, face-down cards left): flip any face-down space (action A),
  or place a first card (action B) on a free space whose landscape matches a collected
  card. A player who has collected nothing, or whose colours have no free space, can
  only flip; there are always at least two face-down cards before the end (cards leave
  the table only in pairs), so the mask is never empty.
- *Second flip*: flip another face-down space; no return in between (a turn is A or B).
  Same picture: the player collects both and takes another turn (flip or return).
  Otherwise both go back face down and the next seat plays.
- *Returning*: place the next card on a free space of a matching landscape that shares a
  side with a space placed earlier in this return, or end the return. The return ends
  by itself with the fourth placement. A return may mix landscapes where they border
  (each card on its own colour; the rules only ask that the cards touch). When no
  further placement fits, only "end the return" is legal.
- *Trunk*: a return of k cards earns a k-trunk; if none is left, the largest smaller
  size still in the supply; if no trunk of size <= k is left, nothing.

End of the game, standard variant: when the last face-down pair has been taken, a final
round starts with the seat that took it and goes once round the table in seat order;
every seat gets exactly one final turn, in which it makes one return or passes (a seat
with no collected cards can only pass; passing is always allowed). Then the highest tree
wins; a tie goes to more collected cards still in front; a further tie is a shared win.

Children's variant (``variant="children"``): after the last pair, seats keep returning in
turn, starting with the seat that took it; passing is not allowed; a seat with no
collected cards is skipped; the game ends when no seat holds cards, which is exactly when
every space is covered again (each landscape has as many spaces as cards). Winners as above.

Turn limit: flipping unmatched pairs can go on for ever, so the engine has an option
``max_turns`` (default 500; every turn counts, extra turns after a pair included). When a
turn of main play would start after ``max_turns`` turns, the game ends at once, without a
final round, and is scored as it stands (``state.capped`` is set). The final round or the
children's returns are never cut: they end by themselves. Hence
``info.max_game_length = 4 * max_turns + endgame``, where a main-play turn takes at most 4
actions (2 flips, or a return of 3 placements + end, or 4 placements) and the endgame at
most ``4 * num_players`` actions (standard) or ``2 * P`` (children's: every return places
at least one card and takes at most one more action to end).

Card codes: landscape letter + 1-based picture number within the landscape (``Y1`` ..
``Y6``, ``B1`` .., see :mod:`memtab_env.boards`); picture ids run landscape by landscape.

State: one row of an int32 matrix (:class:`MemoryBoardState` ``.data``; layout in
:mod:`memtab_env.games.memory_board.rules_kernels`, which holds the transition and the
legal actions as numba kernels shared with the batched engine; this module is the Python
face of the rules: validation with clear errors, the deal, records, scores and winners).
Its fields, all views into the row, with their sentinels (n seats, P spaces)::

    layout     int[P]     picture of card c, the card dealt on space c (never changes)
    status     int[P]     per space: 0 DOWN (its dealt card, face down), 1 UP (its dealt
                          card, flipped this turn), 2 FREE (card taken, space empty),
                          3 PLACED (a returned card lies face up on it for good)
    holder     int[P]     per card: the seat that collected it and holds it, -1 otherwise
    placed     int[P]     per space: card id lying face up on it, -1 unless PLACED
    trunks     int[n,4]   trunks of size 1..4 each seat has received
    supply     int[4]     trunks of size 1..4 left in the supply
    returning  int[4]     spaces placed in the current return, in order, -1 unused
    first_flip int         space flipped first this turn, -1 for none
    current, phase (0 CHOOSE: turn start, 1 FLIP2: second flip, 2 RETURN: returning),
    stage (0 MAIN, 1 FINAL: final round, 2 CHILDREN: children's returns),
    num_placed (cards placed in the current return), final_left (final turns still to
    be taken, the current one included), last_pair (seat that took the last pair, -1),
    turn (turns started, 1-based), over, capped (ended by ``max_turns``)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from memtab_env.boards import MAX_RETURN, Board, default_board, load_board
from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.base import (
    Game,
    GameInfo,
    Transition,
    check_action,
    check_int_option,
    layout_ids,
    row_array_field,
    row_bool_field,
    row_int_field,
)
from memtab_env.games.memory_board import rules_kernels as K

DOWN, UP, FREE, PLACED = K.DOWN, K.UP, K.FREE, K.PLACED
STATUS_NAMES = ("down", "up", "free", "placed")
#: why the card on a space of each status but DOWN cannot be flipped (illegal-action errors)
_NOT_FLIPPABLE = {
    UP: "was already flipped this turn",
    FREE: "was taken (the space is free)",
    PLACED: "is a returned card, which can never be flipped",
}
#: why a space of each status but FREE cannot take a returned card (illegal-action errors)
_NOT_FREE = {
    DOWN: "still holds its face-down card",
    UP: "holds a card flipped this turn",
    PLACED: "is already covered by a returned card",
}
CHOOSE, FLIP2, RETURN = K.CHOOSE, K.FLIP2, K.RETURN
PHASE_NAMES = ("choose", "second flip", "returning")
MAIN, FINAL, CHILDREN = K.MAIN, K.FINAL, K.CHILDREN
STAGE_NAMES = ("main", "final round", "children's returns")
VARIANTS = ("standard", "children")
#: trunk sizes 1..4, as weights for tree heights
TRUNK_SIZES = np.arange(1, MAX_RETURN + 1, dtype=np.int64)
#: the most actions one turn of main play takes (see the module docstring)
MAX_ACTIONS_PER_TURN = 4
DEFAULT_MAX_TURNS = 500
MAX_TURNS_LIMIT = 100_000


class MemoryBoardState:
    """A state of one game: the one-row int32 matrix ``data`` whose layout is in
    :mod:`~memtab_env.games.memory_board.rules_kernels`, with named views (see the module
    docstring for the fields). Array fields are views into ``data`` (writes go through,
    and assigning a field writes its values into the row); scalar fields are
    properties."""

    __slots__ = ("data", "num_players", "_blocks")

    def __init__(self, layout: np.ndarray, num_players: int, first_player: int, board: Board):
        self._bind(K.new_state(layout, first_player, np.asarray(board.trunks, dtype=np.int64)),
                   num_players)

    @classmethod
    def from_row(cls, data: np.ndarray, num_players: int) -> MemoryBoardState:
        """The state whose one-row matrix is ``data`` (not copied)."""
        state = cls.__new__(cls)
        state._bind(data, num_players)
        return state

    def _bind(self, data: np.ndarray, num_players: int) -> None:
        """Set the row and the views of its per-space blocks (made once: the encoder reads
        them many times a step)."""
        self.data = data
        self.num_players = num_players
        p = (data.shape[1] - K.HEAD) // 4
        self._blocks = tuple(data[0, K.HEAD + b * p : K.HEAD + (b + 1) * p] for b in range(4))

    def _block(self, b: int) -> np.ndarray:
        return self._blocks[b]

    def __getstate__(self) -> tuple[np.ndarray, int]:
        return self.data, self.num_players  # the views are rebuilt, never pickled

    def __setstate__(self, state: tuple[np.ndarray, int]) -> None:
        self._bind(*state)

    layout = row_array_field(lambda self: self._block(0),
                          "int32[P]: picture of card c, the card dealt on space c")
    status = row_array_field(lambda self: self._block(1),
                          "int32[P]: per space 0 DOWN, 1 UP, 2 FREE, 3 PLACED")
    holder = row_array_field(lambda self: self._block(2),
                          "int32[P]: per card the seat that holds it, -1")
    placed = row_array_field(lambda self: self._block(3),
                          "int32[P]: per space the card id lying face up on it, -1")
    trunks = row_array_field(
        lambda self: self.data[0, K.TRUNKS : K.TRUNKS + MAX_RETURN * self.num_players].reshape(
            self.num_players, MAX_RETURN),
        "int32[n, 4]: trunks of size 1..4 of each seat")
    supply = row_array_field(lambda self: self.data[0, K.SUPPLY : K.SUPPLY + MAX_RETURN],
                          "int32[4]: trunks of size 1..4 left in the supply")
    returning = row_array_field(lambda self: self.data[0, K.RETURNING : K.RETURNING + MAX_RETURN],
                             "int32[4]: spaces placed in the current return, -1 unused")
    first_flip = row_int_field((0, K.FIRST), "space flipped first this turn, -1")
    current = row_int_field((0, K.CURRENT), "seat on turn")
    phase = row_int_field((0, K.PHASE), "0 CHOOSE, 1 FLIP2, 2 RETURN")
    stage = row_int_field((0, K.STAGE), "0 MAIN, 1 FINAL, 2 CHILDREN")
    num_placed = row_int_field((0, K.NPLACED), "cards placed in the current return")
    final_left = row_int_field((0, K.FINAL_LEFT), "final turns still to be taken, the current one included")
    last_pair = row_int_field((0, K.LAST_PAIR), "seat that took the last pair, -1")
    turn = row_int_field((0, K.TURN), "turns started, 1-based")
    over = row_bool_field((0, K.OVER), "whether the game is over")
    capped = row_bool_field((0, K.CAPPED), "whether the max_turns limit ended the game")

    def copy(self) -> MemoryBoardState:
        return MemoryBoardState.from_row(self.data.copy(), self.num_players)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryBoardState):
            return NotImplemented
        return self.num_players == other.num_players and bool(np.array_equal(self.data, other.data))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"MemoryBoardState(turn={self.turn}, current={self.current}, "
            f"phase={PHASE_NAMES[self.phase]!r}, stage={STAGE_NAMES[self.stage]!r}, "
            f"over={self.over}, trees={(self.trunks @ TRUNK_SIZES).tolist()})"
        )


class MemoryBoard(Game):
    """The Memory: The Board Game engine for one configuration.

    Args:
        num_players: 1 to 4 (four trees in the box; 1 is the solo variant).
        first_player: seat that starts, 0 <= first_player < num_players.
        board: ``None``/``"default"`` (the shipped board), a path to a JSON board file,
            a dict in the board format, or a :class:`memtab_env.boards.Board`.
        variant: ``"standard"`` (one final round) or ``"children"`` (keep returning until
            the board is full again).
        max_turns: turn limit of main play (see the module docstring), 1 .. 100000.
    """

    name: ClassVar[str] = "memory_board"
    default_options: ClassVar[dict[str, Any]] = {
        "num_players": 2,
        "first_player": 0,
        "board": None,
        "variant": "standard",
        "max_turns": DEFAULT_MAX_TURNS,
    }
    MAX_PLAYERS: ClassVar[int] = K.MAX_PLAYERS

    # the rules kernels' compiled entries (Game._bind_kernels)
    _apply: ClassVar[Any] = None
    _legal: ClassVar[Any] = None

    def __init__(
        self,
        num_players: int = 2,
        first_player: int = 0,
        board: str | os.PathLike[str] | Mapping[str, Any] | Board | None = None,
        variant: str = "standard",
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        MemoryBoard._bind_kernels(K.direct, _apply="apply", _legal="legal")
        self._set_seats(num_players, first_player)
        if variant not in VARIANTS:
            raise InvalidOptionError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")
        self.variant = variant
        self.max_turns = check_int_option("max_turns", max_turns, 1, MAX_TURNS_LIMIT)
        self._board_option = board
        self.board = load_board(board)
        b = self.board
        p = b.num_spaces
        self.num_spaces = p
        self.num_kinds = b.num_kinds
        self.num_landscapes = b.num_landscapes
        self.place_offset = p
        self.end_action = 2 * p
        self.pass_action = 2 * p + 1
        self.num_actions = 2 * p + 2
        #: landscape of every space / of every picture
        self.space_landscape = b.landscape
        self.kind_landscape = b.kind_landscape
        self.adjacency = b.adjacency
        # the rules kernels' views of the board (``rules_kernels.direct``'s types)
        self._land = np.ascontiguousarray(b.landscape, dtype=np.int64)
        self._kland = np.ascontiguousarray(b.kind_landscape, dtype=np.int64)
        self._adj = np.ascontiguousarray(b.adjacency, dtype=np.int8)
        self.deck = np.repeat(np.arange(b.num_kinds, dtype=np.int8), 2)
        if self.variant == "standard":
            endgame_turns = self.num_players
            endgame_actions = MAX_ACTIONS_PER_TURN * self.num_players
        else:
            endgame_turns = p
            endgame_actions = 2 * p
        self.info = GameInfo(
            name=self.name,
            num_actions=self.num_actions,
            num_positions=p,
            num_kinds=b.num_kinds,
            max_game_length=MAX_ACTIONS_PER_TURN * self.max_turns + endgame_actions,
            max_turns=self.max_turns + endgame_turns,
            min_players=self.MIN_PLAYERS,
            max_players=self.MAX_PLAYERS,
            score_bounds=(0.0, float(b.trunk_height)),
        )

    def options(self) -> dict[str, Any]:
        """Engine options as a JSON-ready dict; a non-default board is written out in full."""
        board = None if self.board == default_board() else self.board.to_dict()
        return {
            "num_players": self.num_players,
            "first_player": self.first_player,
            "board": board,
            "variant": self.variant,
            "max_turns": self.max_turns,
        }

    # -- construction -------------------------------------------------------------------
    def new_game(self, rng: np.random.Generator) -> MemoryBoardState:
        """Deal: a uniform permutation of the cards, one face down on every space."""
        return MemoryBoardState(rng.permutation(self.deck), self.num_players, self.first_player, self.board)

    def from_layout(self, layout: Any) -> MemoryBoardState:
        """A new game whose deal is ``layout``: card codes (``"Y3"``) or picture ids."""
        return MemoryBoardState(self.parse_layout(layout), self.num_players, self.first_player, self.board)

    def parse_layout(self, layout: Any) -> np.ndarray:
        """Picture ids (int8[P]) from card codes or picture ids; checks every pair."""
        codes = self.board.kind_codes
        items = list(layout)
        if len(items) != self.num_spaces:
            raise InvalidOptionError(f"a layout of this board has {self.num_spaces} cards, got {len(items)}")
        arr = layout_ids(items, codes, "a card of this board")
        counts = np.bincount(arr, minlength=self.num_kinds)
        if not (counts == 2).all():
            bad = [codes[k] for k in range(self.num_kinds) if counts[k] != 2]
            raise InvalidOptionError(f"a layout holds every picture exactly twice; wrong counts for {bad}")
        return arr

    # -- queries ------------------------------------------------------------------------
    def dealt_kinds(self, state: MemoryBoardState) -> np.ndarray:
        return state.layout

    def face_down(self, state: MemoryBoardState) -> np.ndarray:
        return state.status == DOWN

    def card_landscape(self, state: MemoryBoardState) -> np.ndarray:
        """Landscape of every card (by card id)."""
        return self.kind_landscape[state.layout]

    def collected(self, state: MemoryBoardState, player: int) -> np.ndarray:
        """Card ids the seat holds in front of it, in id order."""
        return np.flatnonzero(state.holder == player)

    def collected_counts(self, state: MemoryBoardState) -> np.ndarray:
        """int64[n, L]: collected cards of each landscape in front of every seat."""
        held = state.holder >= 0
        idx = (
            state.holder[held].astype(np.int64) * self.num_landscapes
            + self.kind_landscape[state.layout[held]]
        )
        return np.bincount(idx, minlength=self.num_players * self.num_landscapes).reshape(
            self.num_players, self.num_landscapes
        )

    def trees(self, state: MemoryBoardState) -> np.ndarray:
        """Tree height (sum of trunk sizes) of every seat."""
        return state.trunks.astype(np.int64) @ TRUNK_SIZES

    def scores(self, state: MemoryBoardState) -> np.ndarray:
        """Tree heights (int array, one per seat)."""
        return self.trees(state)

    def winners(self, state: MemoryBoardState) -> list[int]:
        """Highest tree; tie: more collected cards in front; further tie: shared win."""
        bits = K.winner_bits(state.data, 0, self.num_spaces, self.num_players)
        return [seat for seat in range(self.num_players) if bits >> (1 + seat) & 1]

    def card_code(self, kind: int) -> str:
        return self.board.kind_codes[kind]

    def layout_codes(self, state: MemoryBoardState) -> list[str]:
        codes = self.board.kind_codes
        return [codes[k] for k in state.layout.tolist()]

    def _space_name(self, s: int) -> str:
        r, c = divmod(s, self.board.cols)
        return f"space {s} (row {r}, column {c})"

    def _landscape_name(self, i: int) -> str:
        return f"{self.board.names[i]} ({self.board.letters[i]})"

    def action_name(self, action: int) -> str:
        a = check_action(action, self.num_actions)
        if a < self.place_offset:
            return f"flip {self._space_name(a)}"
        if a < self.end_action:
            s = a - self.place_offset
            land = self._landscape_name(int(self.space_landscape[s]))
            return f"place a collected {land} card on {self._space_name(s)}"
        if a == self.end_action:
            return "end the return"
        return "pass (make no final return)"

    # -- legality -----------------------------------------------------------------------
    def legal_mask(self, state: MemoryBoardState) -> np.ndarray:
        mask = np.empty((1, self.num_actions), dtype=np.int8)
        self._legal(state.data, 0, mask, self.num_spaces, self._land, self._kland, self._adj,
                    self.num_landscapes)
        return mask[0].view(bool)

    def _legal_summary(self, state: MemoryBoardState) -> str:
        mask = self.legal_mask(state)
        p = self.num_spaces
        parts = []
        flips = np.flatnonzero(mask[:p]).tolist()
        if flips:
            parts.append(f"flip one of the face-down spaces {flips} (action = space)")
        places = np.flatnonzero(mask[p : 2 * p]).tolist()
        if places:
            parts.append(f"place a card on one of the spaces {places} (action = {p} + space)")
        if mask[self.end_action]:
            parts.append(f"end the return (action {self.end_action})")
        if mask[self.pass_action]:
            parts.append(f"pass (action {self.pass_action})")
        return "legal now: " + "; ".join(parts)

    def _why_not_flip(self, state: MemoryBoardState, s: int) -> str | None:
        if state.phase == RETURN:
            return "a return is under way (a turn is either two flips or one return)"
        if state.stage != MAIN:
            return (
                "no face-down card is left: the game is in its "
                f"{STAGE_NAMES[state.stage]}, where only returns are made"
            )
        status = int(state.status[s])
        if status != DOWN:
            return f"the card on {self._space_name(s)} {_NOT_FLIPPABLE[status]}"
        return None

    def _why_not_place(self, state: MemoryBoardState, s: int) -> str | None:
        if state.phase == FLIP2:
            return "one card is face up: the turn is a flip turn and needs its second flip"
        status = int(state.status[s])
        if status != FREE:
            return f"{self._space_name(s)} is not free: it {_NOT_FREE[status]}"
        land = int(self.space_landscape[s])
        mine = state.holder == state.current
        if not (self.kind_landscape[state.layout[mine]] == land).any():
            counts = self.collected_counts(state)[state.current]
            held = {self.board.letters[i]: int(c) for i, c in enumerate(counts) if c}
            return (
                f"{self._space_name(s)} is {self._landscape_name(land)} land and player "
                f"{state.current} holds no card of that colour (collected: {held or 'none'})"
            )
        if state.phase == RETURN:
            if state.num_placed >= MAX_RETURN:  # pragma: no cover - the 4th ends a return
                return f"a return places at most {MAX_RETURN} cards"
            placed = state.returning[: state.num_placed]
            if not self.adjacency[placed, s].any():
                return (
                    f"{self._space_name(s)} does not share a side with a space placed "
                    f"earlier in this return ({placed.tolist()}); the cards of one return "
                    f"must form one connected group"
                )
        return None

    # -- the transition -----------------------------------------------------------------
    def apply_inplace(self, state: MemoryBoardState, action: int) -> Transition:
        if state.over:
            raise GameOverError("the game is over: no action is legal; call reset() to start again")
        a = check_action(action, self.num_actions)
        if not self.legal_mask(state)[a]:
            self._raise_illegal(state, a)
        code = self._apply(state.data, 0, a, self.num_spaces, self.num_players, self._land,
                           self._kland, self.variant == "children", self.max_turns)
        t = Transition((code >> K.PLAYER_SHIFT) & 7, a, turn_over=(code & K.TURN_OVER) != 0,
                       next_player=(code >> K.NEXT_SHIFT) & 7,
                       game_over=(code & K.GAME_OVER) != 0)
        p = self.num_spaces
        if a < p:
            t.revealed = [(a, (code >> K.KIND_SHIFT) & 127)]
            if code & K.PAIR:
                t.removed = [(code >> K.PARTNER_SHIFT) & 127, a]
            return t
        if a < 2 * p:
            card = (code >> K.PARTNER_SHIFT) & 127
            t.extra = {"kind": "place", "space": a - p,
                       "card": self.board.kind_codes[int(state.layout[card])],
                       "card_id": card, "placed": (code >> K.PLACED_SHIFT) & 7}
        elif a == self.end_action:
            t.extra = {"kind": "end_return"}
        else:
            t.extra = {"kind": "pass"}
        if code & K.RETURN_DONE:
            t.extra["returned"] = (code >> K.RETURNED_SHIFT) & 7
            t.extra["trunk"] = (code >> K.TRUNK_SHIFT) & 7
        return t

    def _raise_illegal(self, state: MemoryBoardState, a: int) -> None:
        """Say why action ``a`` is not legal now, and what is."""
        p = self.num_spaces
        summary = self._legal_summary(state)
        if a < p:
            why = self._why_not_flip(state, a) or "it is not legal now"
            raise IllegalActionError(f"cannot flip {self._space_name(a)}: {why}; " + summary)
        if a < 2 * p:
            s = a - p
            why = self._why_not_place(state, s) or "it is not legal now"
            raise IllegalActionError(f"cannot place a card on {self._space_name(s)}: {why}; " + summary)
        if a == self.end_action:
            raise IllegalActionError(
                "cannot end a return: no return is under way (a return ends after 1 to "
                f"{MAX_RETURN} placements); " + summary
            )
        if state.phase == RETURN:
            why = "a return is under way; end it instead"
        elif self.variant == "children" and state.stage == CHILDREN:
            why = "the children's variant has no passing: every seat with cards returns"
        else:
            why = "passing is only allowed at the start of a turn of the final round"
        raise IllegalActionError(f"cannot pass: {why}; " + summary)
