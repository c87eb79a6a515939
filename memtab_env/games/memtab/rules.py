"""MemTab rules engine: 28 red/black cards, three flips a turn, a tableau, instant win.

Rules: ``docs/sources/000_bb99b56034cd6a7f.txt`` with ``docs/rulings.md`` (MemTab 1-10);
the project's own rules page is ``docs/rules/memtab.md``.

Glossary: a *position* (0..27) is a place on the table and also the action id that flips
the card there; a *card* is what lies at a position; its *kind* (0..13) is colour and
value (``R2``..``R8`` are kinds 0..6, ``B2``..``B8`` kinds 7..13); two cards *match* when
they have the same kind (a *pair*). A *turn* is three *flips* by the player on turn.

State: one int8 row (:class:`MemTabState` ``.data``) whose fields and sentinels are
listed in :mod:`memtab_env.games.memtab.rules_kernels`, which holds the transition itself as
numba kernels shared with the batched engine. This module is the Python face of the rules:
validation with clear errors, the deal, records, scores and winners.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.base import (
    Game,
    GameInfo,
    Transition,
    check_action,
    layout_ids,
    row_bool_field,
    row_int_field,
)
from memtab_env.games.memtab import rules_kernels as K
from memtab_env.games.memtab.rules_kernels import (
    GAME_OVER,
    KIND_SHIFT,
    NEXT_SHIFT,
    PARTNER_SHIFT,
    PLAYER_SHIFT,
    TURN_OVER,
)

NUM_POSITIONS = K.NUM_POSITIONS
NUM_KINDS = K.NUM_KINDS
VALUES = tuple(range(2, 9))  # card values 2..8
COLOURS = ("R", "B")  # red scores +value, black -value
CARD_CODES = tuple(f"{c}{v}" for c in COLOURS for v in VALUES)  # kind id -> code
CODE_TO_KIND = {code: kind for kind, code in enumerate(CARD_CODES)}
#: signed points of each kind: red +value, black -value
KIND_POINTS = K.KIND_POINTS
#: the deck: every kind twice, in kind order (the deal permutes it)
DECK = np.repeat(np.arange(NUM_KINDS, dtype=np.int8), 2)

DOWN, UP, GONE, TABLEAU = K.DOWN, K.UP, K.GONE, K.TABLEAU
STATUS_NAMES = ("down", "up", "gone", "tableau")
FLIPS_PER_TURN = K.FLIPS_PER_TURN
#: every turn removes at least one card from the table (flip 3 always leaves it), and a
#: turn starts only with >= 3 face-down cards, so a game has at most 28 - 2 = 26 turns.
MAX_TURNS = NUM_POSITIONS - 2


class MemTabState:
    """A MemTab state: one int8 row ``data`` (layout in
    :mod:`~memtab_env.games.memtab.rules_kernels`), with named views. Array fields are
    views into ``data`` (writes go through); scalar fields are properties."""

    __slots__ = ("data",)

    def __init__(self, layout: np.ndarray, first_player: int) -> None:
        self.data = K.new_state(layout, first_player)

    # read-only views into ``data`` (their entries can be written)
    layout = property(lambda self: self.data[K.LAYOUT : K.STATUS],
                      doc="Kind dealt at each position (int8[28], never changes).")
    status = property(lambda self: self.data[K.STATUS : K.OWNER],
                      doc="int8[28]: 0 DOWN, 1 UP, 2 GONE, 3 TABLEAU.")
    owner = property(lambda self: self.data[K.OWNER : K.TURN_FLIPS],
                     doc="int8[28]: seat whose tableau holds the card, -1 otherwise.")
    turn_flips = property(lambda self: self.data[K.TURN_FLIPS : K.CURRENT],
                          doc="int8[3]: positions flipped so far this turn, -1 for not yet.")

    current = row_int_field(K.CURRENT, "seat on turn")
    flip = row_int_field(K.FLIP, "index of the next flip within the turn (0, 1, 2)")
    pairs = row_int_field(K.PAIRS, "pairs removed so far this turn")
    turn = row_int_field(K.TURN, "turns started, 1-based")
    over = row_bool_field(K.OVER, "whether the game is over")
    instant_win = row_bool_field(K.INSTANT, "whether two pairs in one turn ended the game")
    winner = row_int_field(K.WINNER, "the instant winner, -1 otherwise")

    def copy(self) -> MemTabState:
        new = MemTabState.__new__(MemTabState)
        new.data = self.data.copy()
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemTabState):
            return NotImplemented
        return bool(np.array_equal(self.data, other.data))

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
    arr = layout_ids(items, CARD_CODES, "a MemTab card")
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
    MAX_PLAYERS: ClassVar[int] = 6

    _step: ClassVar[Any] = None  # the rules kernel's compiled entry (Game._bind_kernels)

    def __init__(self, num_players: int = 2, first_player: int = 0) -> None:
        MemTab._bind_kernels(K.direct, _step="step")
        self._set_seats(num_players, first_player)
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
        data = state.data
        if data[K.OVER]:
            return np.zeros(NUM_POSITIONS, dtype=bool)
        return data[K.STATUS : K.OWNER] == DOWN

    def dealt_kinds(self, state: MemTabState) -> np.ndarray:
        return state.layout

    def face_down(self, state: MemTabState) -> np.ndarray:
        return state.data[K.STATUS : K.OWNER] == DOWN

    def tableau(self, state: MemTabState, player: int) -> np.ndarray:
        """Positions of the cards in ``player``'s tableau, in position order."""
        return np.flatnonzero((state.status == TABLEAU) & (state.owner == player))

    def scores(self, state: MemTabState) -> np.ndarray:
        """Red values minus black values in each tableau (int array, one per seat)."""
        out = np.zeros(self.num_players, dtype=np.int64)
        K.scores(state.data, self.num_players, out)
        return out

    def winners(self, state: MemTabState) -> list[int]:
        out = np.empty(self.num_players, dtype=np.int64)
        k = K.winners(state.data, self.num_players, out)
        return out[:k].tolist()

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
        in_range = type(action) is int and 0 <= action < NUM_POSITIONS
        pos = action if in_range else check_action(action, NUM_POSITIONS)
        code = self._step(state.data, pos, self.num_players)
        if code < 0:
            self._raise_illegal(state, pos, code)
        # everything from the result code (module globals: no attribute lookups)
        return Transition((code >> PLAYER_SHIFT) & 7, pos, [(pos, (code >> KIND_SHIFT) & 15)],
                          [(code >> PARTNER_SHIFT) & 31, pos] if code & 3 else None,
                          (code & TURN_OVER) != 0, (code >> NEXT_SHIFT) & 7, (code & GAME_OVER) != 0)

    def _raise_illegal(self, state: MemTabState, pos: int, code: int) -> None:
        if code == K.ERR_OVER:
            raise GameOverError("the game is over: no flip is legal; call reset() to start again")
        if code == K.ERR_RANGE:
            check_action(pos, NUM_POSITIONS)  # raises with the allowed range
        why = {UP: "was already flipped this turn", GONE: "has left the game",
               TABLEAU: "is in a tableau"}[int(state.data[K.STATUS + pos])]
        legal = np.flatnonzero(state.status == DOWN).tolist()
        raise IllegalActionError(
            f"cannot flip position {pos}: its card {why}; face-down positions that may be flipped: {legal}"
        )
