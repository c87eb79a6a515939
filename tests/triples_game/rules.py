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

State: ``kinds`` int8[P] (the deal; card id = kind id), ``status`` int8[P] (0 DOWN, 1 UP,
2 GONE), ``owner`` int8[P] (-1 or the taker), ``triples`` int16[n] (the scores),
``up`` int8[2] (the positions flipped first and second this turn, -1 before),
``current``, ``flip`` (0..2, the next flip of the turn), ``turns`` (completed), ``over``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.base import Game, GameInfo, Transition, check_int_option

DOWN, UP, GONE = 0, 1, 2
FLIPS_PER_TURN = 3
COPIES = 3
TURN_CAP_PER_POSITION = 100


class TriplesState:
    """Mutable Triples state; see the module docstring for the fields."""

    __slots__ = ("kinds", "status", "owner", "triples", "up", "current", "flip", "turns", "over")

    def __init__(self, kinds: np.ndarray, num_players: int, first_player: int) -> None:
        self.kinds = kinds
        self.status = np.zeros(kinds.size, dtype=np.int8)
        self.owner = np.full(kinds.size, -1, dtype=np.int8)
        self.triples = np.zeros(num_players, dtype=np.int16)
        self.up = np.full(FLIPS_PER_TURN - 1, -1, dtype=np.int8)
        self.current = first_player
        self.flip = 0
        self.turns = 0
        self.over = False

    def copy(self) -> TriplesState:
        new = TriplesState.__new__(TriplesState)
        for f in self.__slots__:
            v = getattr(self, f)
            setattr(new, f, v.copy() if isinstance(v, np.ndarray) and f != "kinds" else v)
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TriplesState):
            return NotImplemented
        return all(np.array_equal(getattr(self, f), getattr(other, f)) for f in self.__slots__)

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

    def __init__(self, num_kinds: int = 4, num_players: int = 2, first_player: int = 0) -> None:
        self.num_kinds = check_int_option("num_kinds", num_kinds, 2, 8)
        self.num_players = check_int_option("num_players", num_players, 1, 4)
        self.first_player = check_int_option("first_player", first_player, 0, self.num_players - 1)
        self.num_positions = COPIES * self.num_kinds
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
        if state.over:
            return np.zeros(self.num_positions, dtype=bool)
        return state.status == DOWN

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
        t = Transition(player=player, action=pos, revealed=[(pos, int(state.kinds[pos]))],
                       next_player=player)
        if state.flip < FLIPS_PER_TURN - 1:
            state.status[pos] = UP
            state.up[state.flip] = pos
            state.flip += 1
            return t
        three = [int(state.up[0]), int(state.up[1]), pos]
        state.up[:] = -1
        state.flip = 0
        state.turns += 1
        t.turn_over = True
        if (state.kinds[three] == state.kinds[pos]).all():  # a triple: taken, play again
            state.status[three] = GONE
            state.owner[three] = player
            state.triples[player] += 1
            t.removed = three
            if (state.status == GONE).all():
                state.over = True
                t.game_over = True
        else:
            state.status[three] = DOWN
            state.current = (player + 1) % self.num_players
        t.next_player = state.current
        return t

    def is_over(self, state: TriplesState) -> bool:
        return state.over

    def current_player(self, state: TriplesState) -> int:
        return state.current

    def scores(self, state: TriplesState) -> np.ndarray:
        return state.triples.astype(np.int64)

    def winners(self, state: TriplesState) -> list[int]:
        return np.flatnonzero(state.triples == state.triples.max()).tolist()

    def face_down(self, state: TriplesState) -> np.ndarray:
        return state.status == DOWN

    def card_code(self, kind: int) -> str:
        return f"T{kind}"

    def layout_codes(self, state: TriplesState) -> list[str]:
        return [self.card_code(k) for k in state.kinds.tolist()]

    def options(self) -> dict[str, Any]:
        return {"num_kinds": self.num_kinds, "num_players": self.num_players,
                "first_player": self.first_player}
