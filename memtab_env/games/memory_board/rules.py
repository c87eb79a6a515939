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

State (all fixed-shape, sentinels next to the field; n seats, P spaces)::

    layout     int8[P]    picture of card c, the card dealt on space c (never changes)
    status     int8[P]    per space: 0 DOWN (its dealt card, face down), 1 UP (its dealt
                          card, flipped this turn), 2 FREE (card taken, space empty),
                          3 PLACED (a returned card lies face up on it for good)
    holder     int8[P]    per card: the seat that collected it and holds it, -1 otherwise
    placed     int16[P]   per space: card id lying face up on it, -1 unless PLACED
    trunks     int16[n,4] trunks of size 1..4 each seat has received
    supply     int16[4]   trunks of size 1..4 left in the supply
    returning  int16[4]   spaces placed in the current return, in order, -1 unused
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
from memtab_env.games.base import Game, GameInfo, Transition, check_action, check_int_option

DOWN, UP, FREE, PLACED = 0, 1, 2, 3
STATUS_NAMES = ("down", "up", "free", "placed")
CHOOSE, FLIP2, RETURN = 0, 1, 2
PHASE_NAMES = ("choose", "second flip", "returning")
MAIN, FINAL, CHILDREN = 0, 1, 2
STAGE_NAMES = ("main", "final round", "children's returns")
VARIANTS = ("standard", "children")
#: trunk sizes 1..4, as weights for tree heights
TRUNK_SIZES = np.arange(1, MAX_RETURN + 1, dtype=np.int64)
#: the most actions one turn of main play takes (see the module docstring)
MAX_ACTIONS_PER_TURN = 4
DEFAULT_MAX_TURNS = 500
MAX_TURNS_LIMIT = 100_000


class MemoryBoardState:
    """Mutable state of one game; see the module docstring for the fields."""

    __slots__ = (
        "layout",
        "status",
        "holder",
        "placed",
        "trunks",
        "supply",
        "returning",
        "first_flip",
        "current",
        "phase",
        "stage",
        "num_placed",
        "final_left",
        "last_pair",
        "turn",
        "over",
        "capped",
    )

    def __init__(self, layout: np.ndarray, num_players: int, first_player: int, board: Board):
        p = board.num_spaces
        self.layout = layout
        self.status = np.zeros(p, dtype=np.int8)
        self.holder = np.full(p, -1, dtype=np.int8)
        self.placed = np.full(p, -1, dtype=np.int16)
        self.trunks = np.zeros((num_players, MAX_RETURN), dtype=np.int16)
        self.supply = np.array(board.trunks, dtype=np.int16)
        self.returning = np.full(MAX_RETURN, -1, dtype=np.int16)
        self.first_flip = -1
        self.current = first_player
        self.phase = CHOOSE
        self.stage = MAIN
        self.num_placed = 0
        self.final_left = 0
        self.last_pair = -1
        self.turn = 1
        self.over = False
        self.capped = False

    def copy(self) -> MemoryBoardState:
        new = MemoryBoardState.__new__(MemoryBoardState)
        new.layout = self.layout  # never mutated: shared
        for f in ("status", "holder", "placed", "trunks", "supply", "returning"):
            setattr(new, f, getattr(self, f).copy())
        for f in (
            "first_flip",
            "current",
            "phase",
            "stage",
            "num_placed",
            "final_left",
            "last_pair",
            "turn",
            "over",
            "capped",
        ):
            setattr(new, f, getattr(self, f))
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryBoardState):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, f), getattr(other, f))
            if isinstance(getattr(self, f), np.ndarray)
            else getattr(self, f) == getattr(other, f)
            for f in self.__slots__
        )

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
    MIN_PLAYERS: ClassVar[int] = 1
    MAX_PLAYERS: ClassVar[int] = 4

    def __init__(
        self,
        num_players: int = 2,
        first_player: int = 0,
        board: str | os.PathLike[str] | Mapping[str, Any] | Board | None = None,
        variant: str = "standard",
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        self.num_players = check_int_option("num_players", num_players, self.MIN_PLAYERS, self.MAX_PLAYERS)
        self.first_player = check_int_option("first_player", first_player, 0, self.num_players - 1)
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
        kinds = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                if item not in codes:
                    raise InvalidOptionError(
                        f"layout[{i}] = {item!r} is not a card of this board; cards are {list(codes)}"
                    )
                kinds.append(codes.index(item))
            else:
                kinds.append(check_int_option(f"layout[{i}]", item, 0, self.num_kinds - 1))
        arr = np.array(kinds, dtype=np.int8)
        counts = np.bincount(arr, minlength=self.num_kinds)
        if not (counts == 2).all():
            bad = [codes[k] for k in range(self.num_kinds) if counts[k] != 2]
            raise InvalidOptionError(f"a layout holds every picture exactly twice; wrong counts for {bad}")
        return arr

    # -- queries ------------------------------------------------------------------------
    def is_over(self, state: MemoryBoardState) -> bool:
        return state.over

    def current_player(self, state: MemoryBoardState) -> int:
        return state.current

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
        trees = self.trees(state)
        best = np.flatnonzero(trees == trees.max())
        cards = np.bincount(state.holder[state.holder >= 0], minlength=self.num_players)[best]
        return best[cards == cards.max()].tolist()

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
    def _placeable(self, state: MemoryBoardState) -> np.ndarray:
        """Bool[P]: spaces where the player on turn may place a card now (if placing is
        allowed in this phase)."""
        player = state.current
        mine = state.holder == player
        colours = np.zeros(self.num_landscapes, dtype=bool)
        colours[self.kind_landscape[state.layout[mine]]] = True
        ok = (state.status == FREE) & colours[self.space_landscape]
        if state.phase == RETURN:
            ok &= self.adjacency[state.returning[: state.num_placed]].any(axis=0)
        return ok

    def legal_mask(self, state: MemoryBoardState) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=bool)
        if state.over:
            return mask
        p = self.num_spaces
        if state.phase == FLIP2:
            mask[:p] = state.status == DOWN
            return mask
        mask[p : 2 * p] = self._placeable(state)
        if state.phase == RETURN:
            mask[self.end_action] = True
        elif state.stage == MAIN:
            mask[:p] = state.status == DOWN
        elif state.stage == FINAL:
            mask[self.pass_action] = True
        return mask

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
            why = {
                UP: "was already flipped this turn",
                FREE: "was taken (the space is free)",
                PLACED: "is a returned card, which can never be flipped",
            }[status]
            return f"the card on {self._space_name(s)} {why}"
        return None

    def _why_not_place(self, state: MemoryBoardState, s: int) -> str | None:
        if state.phase == FLIP2:
            return "one card is face up: the turn is a flip turn and needs its second flip"
        status = int(state.status[s])
        if status != FREE:
            what = {
                DOWN: "still holds its face-down card",
                UP: "holds a card flipped this turn",
                PLACED: "is already covered by a returned card",
            }[status]
            return f"{self._space_name(s)} is not free: it {what}"
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
        p = self.num_spaces
        if a < p:
            why = self._why_not_flip(state, a)
            if why is not None:
                raise IllegalActionError(
                    f"cannot flip {self._space_name(a)}: {why}; " + self._legal_summary(state)
                )
            return self._flip(state, a)
        if a < 2 * p:
            s = a - p
            why = self._why_not_place(state, s)
            if why is not None:
                raise IllegalActionError(
                    f"cannot place a card on {self._space_name(s)}: {why}; " + self._legal_summary(state)
                )
            return self._place(state, s, a)
        if a == self.end_action:
            if state.phase != RETURN:
                raise IllegalActionError(
                    "cannot end a return: no return is under way (a return ends after 1 to "
                    f"{MAX_RETURN} placements); " + self._legal_summary(state)
                )
            t = Transition(player=state.current, action=a)
            t.extra = {"kind": "end_return"}
            self._finish_return(state, t)
            return t
        # pass
        if not (state.stage == FINAL and state.phase == CHOOSE):
            if state.phase == RETURN:
                why = "a return is under way; end it instead"
            elif self.variant == "children" and state.stage == CHILDREN:
                why = "the children's variant has no passing: every seat with cards returns"
            else:
                why = "passing is only allowed at the start of a turn of the final round"
            raise IllegalActionError(f"cannot pass: {why}; " + self._legal_summary(state))
        t = Transition(player=state.current, action=a, extra={"kind": "pass"})
        self._end_turn(state, t, again=False)
        return t

    def _flip(self, state: MemoryBoardState, s: int) -> Transition:
        player = state.current
        kind = int(state.layout[s])
        t = Transition(player=player, action=s, revealed=[(s, kind)])
        if state.phase == CHOOSE:
            state.status[s] = UP
            state.first_flip = s
            state.phase = FLIP2
            t.next_player = player
            return t
        first = state.first_flip
        state.first_flip = -1
        if int(state.layout[first]) == kind:  # a pair: the player collects both
            state.status[first] = FREE
            state.status[s] = FREE
            state.holder[first] = player
            state.holder[s] = player
            t.removed = [first, s]
            if not (state.status == DOWN).any():
                state.last_pair = player
                self._start_endgame(state, t)
            else:
                self._end_turn(state, t, again=True)
        else:
            state.status[first] = DOWN
            self._end_turn(state, t, again=False)
        return t

    def _place(self, state: MemoryBoardState, s: int, action: int) -> Transition:
        player = state.current
        land = int(self.space_landscape[s])
        mine = np.flatnonzero(state.holder == player)
        card = int(mine[self.kind_landscape[state.layout[mine]] == land][0])  # lowest id
        state.holder[card] = -1
        state.placed[s] = card
        state.status[s] = PLACED
        state.returning[state.num_placed] = s
        state.num_placed += 1
        state.phase = RETURN
        t = Transition(player=player, action=action)
        t.extra = {
            "kind": "place",
            "space": s,
            "card": self.board.kind_codes[int(state.layout[card])],
            "card_id": card,
            "placed": state.num_placed,
        }
        if state.num_placed == MAX_RETURN:
            self._finish_return(state, t)
        else:
            t.next_player = player
        return t

    def _finish_return(self, state: MemoryBoardState, t: Transition) -> None:
        k = state.num_placed
        size = 0
        for candidate in range(k, 0, -1):  # a k-trunk, else the next smaller one left
            if state.supply[candidate - 1] > 0:
                size = candidate
                break
        if size:
            state.supply[size - 1] -= 1
            state.trunks[state.current, size - 1] += 1
        t.extra["returned"] = k
        t.extra["trunk"] = size
        state.returning[:] = -1
        state.num_placed = 0
        self._end_turn(state, t, again=False)

    def _start_endgame(self, state: MemoryBoardState, t: Transition) -> None:
        """The last face-down pair was just taken by the player on turn."""
        t.turn_over = True
        state.phase = CHOOSE
        state.turn += 1
        if self.variant == "standard":
            state.stage = FINAL
            state.final_left = self.num_players
        else:
            state.stage = CHILDREN  # the taker holds >= 2 cards: it returns first
        t.next_player = state.current

    def _end_turn(self, state: MemoryBoardState, t: Transition, again: bool) -> None:
        """End the current turn; ``again``: the same seat takes another turn (a pair)."""
        t.turn_over = True
        state.phase = CHOOSE
        n = self.num_players
        if state.stage == MAIN:
            if state.turn >= self.max_turns:  # the turn limit: scored as it stands
                state.over = True
                state.capped = True
                t.game_over = True
            else:
                if not again:
                    state.current = (state.current + 1) % n
                state.turn += 1
        elif state.stage == FINAL:
            state.final_left -= 1
            if state.final_left == 0:
                state.over = True
                t.game_over = True
            else:
                state.current = (state.current + 1) % n
                state.turn += 1
        else:  # children's returns: the next seat in order that still holds cards
            held = np.bincount(state.holder[state.holder >= 0], minlength=n)
            for step in range(1, n + 1):
                seat = (state.current + step) % n
                if held[seat]:
                    state.current = seat
                    state.turn += 1
                    break
            else:  # nobody holds a card: every space is covered again
                state.over = True
                t.game_over = True
        t.next_player = state.current
