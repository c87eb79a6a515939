"""Triples: Pelmanism with three of a kind, a small game that lives in the tests only.

It proves that a game is one folder and one registry row: this folder's engine, encoder,
renderer, AEC module, row kernels and the thin batched classes get the AEC env, the
Gymnasium view, the batched vector env and the SB3 adapter from the shared layer, with
no file of the package changed (``tests/test_fourth_game.py``; ``docs/adding_a_game.md``
walks through it).

Rules: ``K`` kinds (``num_kinds``, 2 to 8), three identical cards of each, lie face down
(``P = 3 K`` positions). On a turn the player on turn flips three face-down cards, one at
a time (each flip is one action); the first two stay face up. If the three match, the
player takes them (one *triple*, one point) and plays again; otherwise they are turned
face down again and the next seat plays. The game ends when every card is taken; every
top scorer wins. No rule bounds a game's length (as Pelmanism): ``GameInfo.max_turns``
is a practical cap, ``TURN_CAP_PER_POSITION * P`` turns, at which the env layer
truncates.

State: one int32 row (layout in :mod:`tests.triples_game.rules_kernels`, whose kernels
are the transition and the legal actions, shared with the batched engine), with named
views: ``kinds`` [P] (the deal; card id = kind id), ``status`` [P] (0 DOWN, 1 UP,
2 GONE), ``owner`` [P] (-1 or the taker), ``triples`` [n] (the scores), ``up`` [2] (the
positions flipped first and second this turn, -1 before), ``current``, ``flip`` (0..2,
the next flip of the turn), ``turns`` (completed), ``over``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.base import (
    Game,
    GameInfo,
    Transition,
    check_int_option,
    row_array_field,
    row_bool_field,
    row_int_field,
)
from tests.triples_game import rules_kernels as K

DOWN, UP, GONE = K.DOWN, K.UP, K.GONE
FLIPS_PER_TURN = K.FLIPS_PER_TURN
COPIES = 3
TURN_CAP_PER_POSITION = 100


class TriplesState:
    """A Triples state: the one-row int32 matrix ``data`` with named views."""

    __slots__ = ("data", "num_players")

    def __init__(self, kinds: np.ndarray, num_players: int, first_player: int) -> None:
        data = np.zeros((1, K.state_size(kinds.size)), dtype=np.int32)
        data[0, K.HEAD : K.HEAD + kinds.size] = kinds
        K.reset(data, 0, kinds.size, first_player)
        self.data, self.num_players = data, num_players

    def _block(self, b: int) -> np.ndarray:
        p = (self.data.shape[1] - K.HEAD) // 3
        return self.data[0, K.HEAD + b * p : K.HEAD + (b + 1) * p]

    kinds = row_array_field(lambda self: self._block(0), "[P] the deal (kind ids)")
    status = row_array_field(lambda self: self._block(1), "[P] 0 DOWN, 1 UP, 2 GONE")
    owner = row_array_field(lambda self: self._block(2), "[P] -1 or the seat that took the card")
    triples = row_array_field(lambda self: self.data[0, K.SCORES : K.SCORES + self.num_players],
                              "[n] triples taken by each seat")
    up = row_array_field(lambda self: self.data[0, K.UP0 : K.UP0 + 2],
                         "[2] positions flipped first and second this turn, -1")
    current = row_int_field((0, K.CURRENT), "seat on turn")
    flip = row_int_field((0, K.FLIP), "0..2: the next flip of the turn")
    turns = row_int_field((0, K.TURNS), "turns completed")
    over = row_bool_field((0, K.OVER), "whether every card is taken")

    def copy(self) -> TriplesState:
        new = TriplesState.__new__(TriplesState)
        new.data, new.num_players = self.data.copy(), self.num_players
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TriplesState):
            return NotImplemented
        return self.num_players == other.num_players and bool(np.array_equal(self.data, other.data))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"TriplesState(turns={self.turns}, current={self.current}, flip={self.flip}, "
                f"over={self.over}, triples={self.triples.tolist()})")


class Triples(Game):
    """The Triples engine for one configuration.

    Args:
        num_kinds: 2 to 8 kinds of three cards each.
        num_players: 1 to 4.
        first_player: seat that starts.
    """

    name: ClassVar[str] = "triples"
    default_options: ClassVar[dict[str, Any]] = {"num_kinds": 4, "num_players": 2, "first_player": 0}

    #: the rules kernels' compiled entries, set by the first instance
    _flip: ClassVar[Any] = None
    _legal: ClassVar[Any] = None
    _no_counts = np.zeros((1, 0), dtype=np.int32)

    def __init__(self, num_kinds: int = 4, num_players: int = 2, first_player: int = 0) -> None:
        if Triples._flip is None:
            Triples._flip, Triples._legal = K.direct("flip"), K.direct("legal")
        self.num_kinds = check_int_option("num_kinds", num_kinds, 2, 8)
        self.num_players = check_int_option("num_players", num_players, 1, 4)
        self.first_player = check_int_option("first_player", first_player, 0, self.num_players - 1)
        self.num_positions = COPIES * self.num_kinds
        #: the rules kernels' constants ``(P, K, n, first_player)``
        self.kernel_constants = (self.num_positions, self.num_kinds, self.num_players,
                                 self.first_player)
        #: the deck in kind order: what a deal permutes
        self.cards = np.repeat(np.arange(self.num_kinds, dtype=np.int8), COPIES)
        max_turns = TURN_CAP_PER_POSITION * self.num_positions
        self.info = GameInfo(
            name=self.name, num_actions=self.num_positions, num_positions=self.num_positions,
            num_kinds=self.num_kinds, max_game_length=max_turns * FLIPS_PER_TURN,
            max_turns=max_turns, min_players=1, max_players=4,
            score_bounds=(0.0, float(self.num_kinds)),
        )

    def new_game(self, rng: np.random.Generator) -> TriplesState:
        """Deal: a uniform permutation of the deck drawn from ``rng``."""
        return TriplesState(rng.permutation(self.cards), self.num_players, self.first_player)

    def parse_layout(self, layout: Any) -> np.ndarray:
        """Kind ids (int8[P]) of a deal; every kind exactly three times."""
        if isinstance(layout, str):
            raise InvalidOptionError("a layout is a sequence of card codes or kind ids, not a string")
        items = list(layout)
        if len(items) != self.num_positions:
            raise InvalidOptionError(
                f"a Triples layout has {self.num_positions} cards, got {len(items)}")
        codes = [self.card_code(k) for k in range(self.num_kinds)]
        ids = [codes.index(x) if isinstance(x, str) and x in codes
               else check_int_option(f"layout[{i}]", x, 0, self.num_kinds - 1)
               for i, x in enumerate(items)]
        arr = np.array(ids, dtype=np.int8)
        if not (np.bincount(arr, minlength=self.num_kinds) == COPIES).all():
            raise InvalidOptionError(f"a Triples layout holds every kind {COPIES} times, got {ids}")
        return arr

    def from_layout(self, layout: Any) -> TriplesState:
        return TriplesState(self.parse_layout(layout), self.num_players, self.first_player)

    def dealt_kinds(self, state: TriplesState) -> np.ndarray:
        return state.kinds

    def legal_mask(self, state: TriplesState) -> np.ndarray:
        out = np.empty((1, self.num_positions), dtype=bool)
        self._legal(state.data, self._no_counts, 0, out, self.kernel_constants)
        return out[0]

    def apply_inplace(self, state: TriplesState, action: int) -> Transition:
        if state.over:
            raise GameOverError("the game is over: no flip is legal; call reset() to start again")
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not (
                0 <= int(action) < self.num_positions):
            raise IllegalActionError(
                f"action must be a position in [0, {self.num_positions - 1}], got {action!r}")
        pos = int(action)
        if state.status[pos] != DOWN:
            raise IllegalActionError(
                f"cannot flip position {pos}: it is not face down; face-down positions that may "
                f"be flipped: {np.flatnonzero(state.status == DOWN).tolist()}")
        player = state.current
        three = [int(state.up[0]), int(state.up[1]), pos]
        t = Transition(player=player, action=pos, revealed=[(pos, int(state.kinds[pos]))])
        t.turn_over = self._flip(state.data, self._no_counts, 0, pos, self.kernel_constants)
        if t.turn_over and state.status[pos] == GONE:  # a triple: taken
            t.removed = three
        t.game_over = state.over
        t.next_player = state.current
        return t

    def is_over(self, state: TriplesState) -> bool:
        return state.over

    def current_player(self, state: TriplesState) -> int:
        return state.current

    def scores(self, state: TriplesState) -> np.ndarray:
        return state.triples.astype(np.int64)

    def winners(self, state: TriplesState) -> list[int]:
        bits = K.winner_bits(state.data, 0, self.num_players)
        return [seat for seat in range(self.num_players) if bits >> (1 + seat) & 1]

    def face_down(self, state: TriplesState) -> np.ndarray:
        return state.status == DOWN

    def card_code(self, kind: int) -> str:
        return f"T{kind}"

    def layout_codes(self, state: TriplesState) -> list[str]:
        return [self.card_code(k) for k in state.kinds.tolist()]

    def options(self) -> dict[str, Any]:
        return {"num_kinds": self.num_kinds, "num_players": self.num_players,
                "first_player": self.first_player}
