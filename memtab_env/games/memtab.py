"""MemTab rules engine: 28 red/black cards, three flips a turn, a tableau, instant win.

Rules: ``shared/seeds/000_bb99b56034cd6a7f.txt`` with ``shared/RULINGS.md`` (MemTab 1-10);
the project's own rules page is ``docs/rules/memtab.md``.

Glossary: a *position* (0..27) is a place on the table and also the action id that flips
the card there; a *card* is what lies at a position; its *kind* (0..13) is colour and
value (``R2``..``R8`` are kinds 0..6, ``B2``..``B8`` kinds 7..13); two cards *match* when
they have the same kind (a *pair*). A *turn* is three *flips* by the player on turn.

State (all fixed-shape, sentinels next to the field)::

    layout  int8[28]  kind dealt at each position (never changes)
    status  int8[28]  0 DOWN (face down on the table), 1 UP (flipped this turn, still on
                      the table), 2 GONE (left the game in a pair), 3 TABLEAU
    owner   int8[28]  -1, or the seat whose tableau holds the card
    turn_flips int8[3] positions flipped so far this turn, -1 for not yet
    current, flip (0, 1, 2 within the turn), pairs (pairs removed this turn), turn (turns
    started, 1-based), over, instant_win, winner (-1 unless an instant win)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.base import Game, GameInfo, Transition, check_action, check_int_option

NUM_POSITIONS = 28
NUM_KINDS = 14
VALUES = tuple(range(2, 9))  # card values 2..8
COLOURS = ("R", "B")  # red scores +value, black -value
CARD_CODES = tuple(f"{c}{v}" for c in COLOURS for v in VALUES)  # kind id -> code
CODE_TO_KIND = {code: kind for kind, code in enumerate(CARD_CODES)}
#: signed points of each kind: red +value, black -value
KIND_POINTS = np.array([v for v in VALUES] + [-v for v in VALUES], dtype=np.int16)
#: the deck: every kind twice, in kind order (the deal permutes it)
DECK = np.repeat(np.arange(NUM_KINDS, dtype=np.int8), 2)

DOWN, UP, GONE, TABLEAU = 0, 1, 2, 3
STATUS_NAMES = ("down", "up", "gone", "tableau")
FLIPS_PER_TURN = 3
#: every turn removes at least one card from the table (flip 3 always leaves it), and a
#: turn starts only with >= 3 face-down cards, so a game has at most 28 - 2 = 26 turns.
MAX_TURNS = NUM_POSITIONS - 2


class MemTabState:
    """Mutable MemTab state; see the module docstring for the fields."""

    __slots__ = (
        "layout",
        "status",
        "owner",
        "turn_flips",
        "current",
        "flip",
        "pairs",
        "turn",
        "over",
        "instant_win",
        "winner",
    )

    def __init__(self, layout: np.ndarray, first_player: int) -> None:
        self.layout = layout
        self.status = np.zeros(NUM_POSITIONS, dtype=np.int8)
        self.owner = np.full(NUM_POSITIONS, -1, dtype=np.int8)
        self.turn_flips = np.full(FLIPS_PER_TURN, -1, dtype=np.int8)
        self.current = first_player
        self.flip = 0
        self.pairs = 0
        self.turn = 1
        self.over = False
        self.instant_win = False
        self.winner = -1

    def copy(self) -> MemTabState:
        new = MemTabState.__new__(MemTabState)
        new.layout = self.layout  # never mutated: shared
        new.status = self.status.copy()
        new.owner = self.owner.copy()
        new.turn_flips = self.turn_flips.copy()
        new.current = self.current
        new.flip = self.flip
        new.pairs = self.pairs
        new.turn = self.turn
        new.over = self.over
        new.instant_win = self.instant_win
        new.winner = self.winner
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemTabState):
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
            f"MemTabState(turn={self.turn}, current={self.current}, flip={self.flip}, "
            f"over={self.over}, status={self.status.tolist()})"
        )


def parse_layout(layout: Any) -> np.ndarray:
    """Kind ids (int8[28]) from card codes (``"R5"``) or kind ids; checks the deck."""
    items = list(layout)
    if len(items) != NUM_POSITIONS:
        raise InvalidOptionError(
            f"a MemTab layout has {NUM_POSITIONS} cards, got {len(items)}"
        )
    kinds = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            if item not in CODE_TO_KIND:
                raise InvalidOptionError(
                    f"layout[{i}] = {item!r} is not a MemTab card; cards are {list(CARD_CODES)}"
                )
            kinds.append(CODE_TO_KIND[item])
        else:
            kinds.append(check_int_option(f"layout[{i}]", item, 0, NUM_KINDS - 1))
    arr = np.array(kinds, dtype=np.int8)
    counts = np.bincount(arr, minlength=NUM_KINDS)
    if not (counts == 2).all():
        bad = [CARD_CODES[k] for k in range(NUM_KINDS) if counts[k] != 2]
        raise InvalidOptionError(
            f"a MemTab layout holds every card kind exactly twice; wrong counts for {bad}"
        )
    return arr


class MemTab(Game):
    """The MemTab engine for one configuration.

    Args:
        num_players: 1 to 6 (1 is the solo score-attack variant).
        first_player: seat that starts, 0 <= first_player < num_players.
    """

    name: ClassVar[str] = "memtab"
    default_options: ClassVar[dict[str, Any]] = {"num_players": 2, "first_player": 0}
    MIN_PLAYERS: ClassVar[int] = 1
    MAX_PLAYERS: ClassVar[int] = 6

    def __init__(self, num_players: int = 2, first_player: int = 0) -> None:
        self.num_players = check_int_option(
            "num_players", num_players, self.MIN_PLAYERS, self.MAX_PLAYERS
        )
        self.first_player = check_int_option(
            "first_player", first_player, 0, self.num_players - 1
        )
        self.info = GameInfo(
            name=self.name,
            num_actions=NUM_POSITIONS,
            num_positions=NUM_POSITIONS,
            num_kinds=NUM_KINDS,
            # 26 turns of 3 flips: a tight bound (each turn ends with flip 3)
            max_game_length=MAX_TURNS * FLIPS_PER_TURN,
            max_turns=MAX_TURNS,
            min_players=self.MIN_PLAYERS,
            max_players=self.MAX_PLAYERS,
            score_bounds=(float(-sum(VALUES)), float(sum(VALUES))),
        )

    # -- construction -------------------------------------------------------------------
    def new_game(self, rng: np.random.Generator) -> MemTabState:
        """Deal: a uniform permutation of the 28 cards drawn from ``rng``."""
        return MemTabState(rng.permutation(DECK), self.first_player)

    def from_layout(self, layout: Any) -> MemTabState:
        return MemTabState(parse_layout(layout), self.first_player)

    # -- queries ------------------------------------------------------------------------
    def legal_mask(self, state: MemTabState) -> np.ndarray:
        if state.over:
            return np.zeros(NUM_POSITIONS, dtype=bool)
        return state.status == DOWN

    def is_over(self, state: MemTabState) -> bool:
        return state.over

    def current_player(self, state: MemTabState) -> int:
        return state.current

    def face_down(self, state: MemTabState) -> np.ndarray:
        return state.status == DOWN

    def tableau(self, state: MemTabState, player: int) -> np.ndarray:
        """Positions of the cards in ``player``'s tableau, in position order."""
        return np.flatnonzero((state.status == TABLEAU) & (state.owner == player))

    def scores(self, state: MemTabState) -> np.ndarray:
        """Red values minus black values in each tableau (int array, one per seat)."""
        in_tab = state.status == TABLEAU
        points = KIND_POINTS[state.layout[in_tab]]
        return np.bincount(
            state.owner[in_tab], weights=points, minlength=self.num_players
        ).astype(np.int64)

    def winners(self, state: MemTabState) -> list[int]:
        if state.instant_win:
            return [state.winner]
        scores = self.scores(state)
        return np.flatnonzero(scores == scores.max()).tolist()

    def instant_win(self, state: MemTabState) -> bool:
        return state.instant_win

    def card_code(self, kind: int) -> str:
        return CARD_CODES[kind]

    def layout_codes(self, state: MemTabState) -> list[str]:
        return [CARD_CODES[k] for k in state.layout.tolist()]

    def action_name(self, action: int) -> str:
        return f"flip position {action} (row {action // 7}, column {action % 7})"

    # -- the transition -----------------------------------------------------------------
    def apply_inplace(self, state: MemTabState, action: int) -> Transition:
        if state.over:
            raise GameOverError("the game is over: no flip is legal; call reset() to start again")
        pos = check_action(action, NUM_POSITIONS)
        status = state.status
        if status[pos] != DOWN:
            legal = np.flatnonzero(status == DOWN).tolist()
            why = {
                UP: "was already flipped this turn",
                GONE: "has left the game",
                TABLEAU: "is in a tableau",
            }[int(status[pos])]
            raise IllegalActionError(
                f"cannot flip position {pos}: its card {why}; "
                f"face-down positions that may be flipped: {legal}"
            )

        player = state.current
        kind = int(state.layout[pos])
        t = Transition(player=player, action=pos, revealed=[(pos, kind)])
        flip = state.flip
        state.turn_flips[flip] = pos
        if flip == 0:
            status[pos] = UP
            state.flip = 1
        elif flip == 1:
            first = int(state.turn_flips[0])
            if state.layout[first] == kind:  # flips 1 and 2 match: both leave the game
                status[first] = GONE
                status[pos] = GONE
                t.removed += [first, pos]
                state.pairs += 1
            else:  # they stay face up until the end of the turn
                status[pos] = UP
            state.flip = 2
        else:
            # flip 3 goes into the flipper's tableau; its twin there pairs it off
            twin = np.flatnonzero(
                (status == TABLEAU) & (state.owner == player) & (state.layout == kind)
            )
            if twin.size:
                other = int(twin[0])
                status[other] = GONE
                state.owner[other] = -1
                status[pos] = GONE
                t.removed += [other, pos]
                state.pairs += 1
            else:
                status[pos] = TABLEAU
                state.owner[pos] = player
            self._end_turn(state, t)
        t.next_player = state.current
        return t

    def _end_turn(self, state: MemTabState, t: Transition) -> None:
        status = state.status
        status[status == UP] = DOWN  # unmatched flips 1 and 2 go back face down
        t.turn_over = True
        player = state.current
        if state.pairs >= 2:  # two pairs in one turn: instant win
            state.over = True
            state.instant_win = True
            state.winner = player
            t.game_over = True
            return
        if state.pairs == 0:
            state.current = (player + 1) % self.num_players
        state.pairs = 0
        state.flip = 0
        state.turn_flips[:] = -1
        state.turn += 1
        # the end check at the start of every turn, extra turns included
        if int(np.count_nonzero(status == DOWN)) <= 2:
            state.over = True
            t.game_over = True
