"""Pelmanism (Concentration, Memory, Shinkei-suijaku) rules engine.

Rules: ``docs/sources/003_aca21a63258bacff.txt`` with ``docs/rulings.md`` (Pelmanism
1-4, "For all three games"). Every card lies face down; on a turn the player on turn
flips two face-down cards, one at a time (each flip is one action). If they match, the
player takes them (one point, one *pair*) and takes another turn; otherwise both are
turned face down again in place and the next seat plays. The game ends when every card
has been taken; the score is the number of pairs taken and every top scorer wins.

Glossary: a *position* (0..P-1) is a place on the table and also the action id that flips
the card there; a *card* is what lies at a position; its *kind* is what matching looks
at; two cards *match* when they have the same kind (a *pair*).

Decks (option ``deck``)
-----------------------
=================  ===========  =====================================  ==================
deck               cards (P)    kinds (matching)                       card codes
=================  ===========  =====================================  ==================
``"standard"``     52           13 ranks, 4 cards each (quartets):     ``AS`` .. ``KC``
                                a six matches any six                  (rank + suit)
``"colour"``       52           26 = rank and colour, 2 cards each:    ``AS`` .. ``KC``
                                ``6H`` matches ``6D`` only
``"pairs:N"``      2 N          N kinds, 2 identical cards each        ``K00`` .. ``K25``
``"quartets:N"``   4 N          N kinds, 4 identical cards each        ``K00`` .. ``K12``
=================  ===========  =====================================  ==================

- Ranks ``A 2 3 4 5 6 7 8 9 10 J Q K``, suits ``S H D C`` (spades, hearts, diamonds,
  clubs); hearts and diamonds are red, spades and clubs black. A 52-card deck's *card id*
  is ``suit * 13 + rank`` (``AS`` = 0, ``KC`` = 51).
- Kind ids: ``standard`` kind = rank index (``A`` = 0 .. ``K`` = 12), kind codes ``A``,
  ``2``, .., ``K``; ``colour`` kind = ``colour * 13 + rank`` with red first (as MemTab),
  kind codes ``RA`` .. ``RK`` (0..12) and ``BA`` .. ``BK`` (13..25).
- Special packs (``pairs:N``, 1 <= N <= 26; ``quartets:N``, 1 <= N <= 13): the copies of a
  kind are identical (the rule text's "two identical cards of each type"), so card id =
  kind id and the code of card and kind is ``K`` + the two-digit kind id (``K00``). The
  upper bounds keep every deck within 52 cards, the size of a standard pack.

State: an int8 row and an int32 row (:class:`PelmanismState` ``.data`` and ``.counts``;
layout in :mod:`memtab_env.games.pelmanism.rules_kernels`, which holds the transition and
the legal actions as numba kernels shared with the batched engine; this module is the
Python face of the rules: the options, the deal, clear errors, records, scores and
winners). Its fields, all views into the rows, with their sentinels::

    layout  int8[P]   card id dealt at each position (never changes; what records show)
    kinds   int8[P]   kind of the card at each position (never changes; what matches)
    status  int8[P]   0 DOWN (face down on the table), 1 UP (flipped first this turn),
                      2 GONE (taken in a pair)
    owner   int8[P]   -1, or the seat that took the card
    pairs   int8[n]   pairs taken by each seat (= score)
    first   position flipped first this turn, -1 before the first flip
    last    int8[2]   the two positions flipped in the previous turn (-1 before any turn;
                      display only: renderers show the pair that was just turned back)
    current seat on turn; flip: 0 or 1 (next flip within the turn)
    turns   turns completed so far, extra turns included (solo: the measure of the game)
    over    True once every card has been taken (or the ``max_turns`` house rule ended it)

Game length: no rule bounds it. A player may flip the same non-matching cards for ever.
By default (``max_turns=None``, the rules as written) :attr:`GameInfo.max_turns` and
``max_game_length`` are therefore a *practical cap*, not a rule:
``TURN_CAP_PER_POSITION * P`` turns (5200 for 52 cards), which play that is not trying to
stall does not reach (uniformly random flips average ``N**2`` turns for ``pairs:N``,
676 for N = 26 with a standard deviation near 150; the cap is 30 of them away). The
engine never ends such a game at the cap; the env layer may truncate there. The house
rule ``max_turns=T`` (an integer) ends the game when ``T`` turns have been completed
(extra turns included), scored as it stands; ``info.max_turns`` is then ``T``, a true
bound, and :meth:`Pelmanism.stopped_by_turn_limit` tells such an ending apart.

Solo (``num_players=1``): the measure is the number of turns taken to clear the table,
:meth:`Pelmanism.turns_taken`. ``scores`` is still the number of pairs taken (all of them
once the table is cleared) and ``winners`` is ``[0]``: a solo game cannot be lost, only played in
fewer turns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.base import (
    Game,
    GameInfo,
    Transition,
    check_action,
    check_int_option,
    row_array_field,
    row_bool_field,
    row_int_field,
)
from memtab_env.games.pelmanism import rules_kernels as K

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
#: colour of each suit: 0 red (hearts, diamonds), 1 black (spades, clubs)
SUIT_COLOUR = (1, 0, 0, 1)
COLOURS = ("R", "B")
NUM_RANKS = len(RANKS)
#: largest special packs: at most 52 cards, like a standard pack
MAX_PAIRS_KINDS = 26
MAX_QUARTETS_KINDS = 13
DECK_SPECS = ("standard", "colour", "pairs:N", "quartets:N")
_ALLOWED_DECKS = (
    "'standard' (52 cards, match by rank), 'colour' (52 cards, match rank and colour), "
    f"'pairs:N' (1 <= N <= {MAX_PAIRS_KINDS}) or 'quartets:N' (1 <= N <= {MAX_QUARTETS_KINDS})"
)

DOWN, UP, GONE = K.DOWN, K.UP, K.GONE
STATUS_NAMES = ("down", "up", "gone")
FLIPS_PER_TURN = K.FLIPS_PER_TURN
#: practical cap on the number of turns, per position (see the module docstring)
TURN_CAP_PER_POSITION = 100

#: the 52 codes of a standard pack, card id = suit * 13 + rank
STANDARD_CARD_CODES = tuple(f"{r}{s}" for s in SUITS for r in RANKS)


@dataclass(frozen=True)
class Deck:
    """A parsed deck: its cards, their codes and the kind each card matches by.

    Attributes:
        spec: canonical spec string (``"standard"``, ``"colour"``, ``"pairs:8"``, ...).
        card_codes: code of each card id.
        card_kind: int8 array, the kind of each card id.
        kind_codes: code of each kind id.
        cards: int8 array, one entry per physical card (card ids, in id order; the deal
            permutes it). Identical cards of a special pack repeat their id.
        copies: cards of each kind (2 or 4).
    """

    spec: str
    card_codes: tuple[str, ...]
    card_kind: np.ndarray
    kind_codes: tuple[str, ...]
    cards: np.ndarray
    copies: int

    @property
    def num_cards(self) -> int:
        return int(self.cards.size)

    @property
    def num_kinds(self) -> int:
        return len(self.kind_codes)

    @property
    def num_pairs(self) -> int:
        return self.num_cards // 2

    def card_id(self, code: str) -> int:
        """Card id of a card code; raises :class:`InvalidOptionError`."""
        try:
            return self.card_codes.index(code)
        except ValueError:
            raise InvalidOptionError(
                f"{code!r} is not a card of the {self.spec!r} deck; cards are "
                f"{_code_range(self.card_codes)}"
            ) from None


def _code_range(codes: tuple[str, ...]) -> str:
    if len(codes) <= 8:
        return str(list(codes))
    return f"{codes[0]!r} .. {codes[-1]!r} ({len(codes)} codes)"


def parse_deck(spec: Any) -> Deck:
    """Parse a ``deck`` option; raise :class:`InvalidOptionError` naming what is allowed."""
    if not isinstance(spec, str):
        raise InvalidOptionError(f"deck must be a string, one of {_ALLOWED_DECKS}; got {spec!r}")
    name, sep, arg = spec.partition(":")
    if name == "standard" and not sep:
        kinds = np.array([i % NUM_RANKS for i in range(52)], dtype=np.int8)
        return Deck("standard", STANDARD_CARD_CODES, kinds, RANKS, np.arange(52, dtype=np.int8), 4)
    if name == "colour" and not sep:
        kinds = np.array(
            [SUIT_COLOUR[i // NUM_RANKS] * NUM_RANKS + i % NUM_RANKS for i in range(52)],
            dtype=np.int8,
        )
        kind_codes = tuple(f"{c}{r}" for c in COLOURS for r in RANKS)
        return Deck("colour", STANDARD_CARD_CODES, kinds, kind_codes, np.arange(52, dtype=np.int8), 2)
    if name in ("pairs", "quartets") and sep:
        high = MAX_PAIRS_KINDS if name == "pairs" else MAX_QUARTETS_KINDS
        copies = 2 if name == "pairs" else 4
        try:
            n = int(arg)
        except ValueError:
            raise InvalidOptionError(
                f"deck {spec!r}: {name}:N needs an integer number of kinds N in [1, {high}]; "
                f"allowed: {_ALLOWED_DECKS}"
            ) from None
        if not 1 <= n <= high:
            raise InvalidOptionError(
                f"deck {spec!r}: the number of kinds must be in [1, {high}] "
                f"(at most 52 cards); allowed: {_ALLOWED_DECKS}"
            )
        codes = tuple(f"K{k:02d}" for k in range(n))
        ids = np.arange(n, dtype=np.int8)
        return Deck(f"{name}:{n}", codes, ids, codes, np.repeat(ids, copies), copies)
    raise InvalidOptionError(f"unknown deck {spec!r}; allowed: {_ALLOWED_DECKS}")


def grid_shape(num_positions: int) -> tuple[int, int]:
    """Rows and columns of the drawn table: 4 x 13 for 52 cards; otherwise about the same
    proportions (13 : 4), preferring full rows. Positions are numbered row-major."""
    target = math.ceil(math.sqrt(num_positions * NUM_RANKS / 4))
    candidates = [c for c in range(max(1, target - 3), target + 5) if num_positions % c == 0]
    if candidates:
        cols = min(candidates, key=lambda c: (abs(c - target), c))
        return num_positions // cols, cols
    rows = math.ceil(num_positions / target)
    return rows, math.ceil(num_positions / rows)


class PelmanismState:
    """A Pelmanism state: the one-row int8 matrix ``data`` and the one-row int32 matrix
    ``counts`` whose layout is in :mod:`~memtab_env.games.pelmanism.rules_kernels`, with
    named views (see the module docstring for the fields). Array fields are views into
    ``data`` (writes go through, and assigning a field writes its values into the row);
    scalar fields are properties."""

    __slots__ = ("data", "counts", "num_players", "_blocks")

    def __init__(self, layout: np.ndarray, kinds: np.ndarray, num_players: int,
                 first_player: int) -> None:
        P = layout.size
        data = np.zeros((1, K.state_size(P)), dtype=np.int8)
        counts = np.zeros((1, K.COUNTS_SIZE), dtype=np.int32)
        data[0, K.HEAD : K.HEAD + P] = layout
        data[0, K.HEAD + P : K.HEAD + 2 * P] = kinds
        K.reset(data, counts, 0, P, num_players, first_player)
        self._bind(data, counts, num_players)

    @classmethod
    def from_rows(cls, data: np.ndarray, counts: np.ndarray, num_players: int) -> PelmanismState:
        """The state whose one-row matrices are ``data`` and ``counts`` (not copied)."""
        state = cls.__new__(cls)
        state._bind(data, counts, num_players)
        return state

    def _bind(self, data: np.ndarray, counts: np.ndarray, num_players: int) -> None:
        """Set the rows and the views of the per-position blocks (made once)."""
        self.data = data
        self.counts = counts
        self.num_players = num_players
        p = (data.shape[1] - K.HEAD) // 4
        self._blocks = tuple(data[0, K.HEAD + b * p : K.HEAD + (b + 1) * p] for b in range(4))

    def __getstate__(self) -> tuple[np.ndarray, np.ndarray, int]:
        return self.data, self.counts, self.num_players  # the views are rebuilt

    def __setstate__(self, state: tuple[np.ndarray, np.ndarray, int]) -> None:
        self._bind(*state)

    layout = row_array_field(lambda self: self._blocks[0],
                             "int8[P]: card id dealt at each position (never changes)")
    kinds = row_array_field(lambda self: self._blocks[1],
                            "int8[P]: kind of the card at each position (never changes)")
    status = row_array_field(lambda self: self._blocks[2], "int8[P]: 0 DOWN, 1 UP, 2 GONE")
    owner = row_array_field(lambda self: self._blocks[3],
                            "int8[P]: -1, or the seat that took the card")
    pairs = row_array_field(lambda self: self.data[0, K.PAIRS : K.PAIRS + self.num_players],
                            "int8[n]: pairs taken by each seat")
    last = row_array_field(lambda self: self.data[0, K.LAST : K.LAST + FLIPS_PER_TURN],
                           "int8[2]: the two positions flipped in the previous turn, -1")
    current = row_int_field((0, K.CURRENT), "seat on turn")
    flip = row_int_field((0, K.FLIP), "0 or 1: the next flip within the turn")
    first = row_int_field((0, K.FIRST), "position flipped first this turn, -1 before it")
    over = row_bool_field((0, K.OVER), "whether the game is over (every card taken, or "
                          "the max_turns house rule)")

    @property
    def turns(self) -> int:
        """Turns completed, extra turns included."""
        return int(self.counts[0, K.TURNS])

    @turns.setter
    def turns(self, value: int) -> None:
        self.counts[0, K.TURNS] = value
    def copy(self) -> PelmanismState:
        return PelmanismState.from_rows(self.data.copy(), self.counts.copy(), self.num_players)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PelmanismState):
            return NotImplemented
        return (self.num_players == other.num_players
                and bool(np.array_equal(self.data, other.data))
                and bool(np.array_equal(self.counts, other.counts)))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"PelmanismState(turns={self.turns}, current={self.current}, flip={self.flip}, "
            f"over={self.over}, pairs={self.pairs.tolist()}, status={self.status.tolist()})"
        )


class Pelmanism(Game):
    """The Pelmanism engine for one configuration.

    Args:
        deck: ``"standard"`` (default), ``"colour"``, ``"pairs:N"`` or ``"quartets:N"``
            (see the module docstring).
        num_players: 1 to 6 (1 is solo: fewest turns is best).
        first_player: seat that starts, 0 <= first_player < num_players.
        max_turns: ``None`` (default: play until every card is taken, as the rules say) or
            a house-rule turn limit in [1, 1_000_000]: the game ends, scored as it stands,
            once that many turns have been completed.
    """

    name: ClassVar[str] = "pelmanism"
    default_options: ClassVar[dict[str, Any]] = {
        "deck": "standard",
        "num_players": 2,
        "first_player": 0,
        "max_turns": None,
    }
    MAX_PLAYERS: ClassVar[int] = K.MAX_PLAYERS

    # the rules kernels' compiled entries (Game._bind_kernels)
    _flip: ClassVar[Any] = None
    _legal: ClassVar[Any] = None

    def __init__(
        self,
        deck: str = "standard",
        num_players: int = 2,
        first_player: int = 0,
        max_turns: int | None = None,
    ) -> None:
        Pelmanism._bind_kernels(K.direct, _flip="flip", _legal="legal")
        self.deck = parse_deck(deck)
        self._set_seats(num_players, first_player)
        self.num_positions = self.deck.num_cards
        self.num_kinds = self.deck.num_kinds
        self.num_pairs = self.deck.num_pairs
        self.max_turns = (
            None if max_turns is None else check_int_option("max_turns", max_turns, 1, 1_000_000)
        )
        #: the rules kernels' constants ``(P, K, n, first_player, max_turns)``, 0 for none
        self.kernel_constants = (self.num_positions, self.num_kinds, self.num_players,
                                 self.first_player, self.max_turns or 0)
        self.rows, self.cols = grid_shape(self.num_positions)
        if self.max_turns is None:  # no rule bounds a game: a practical cap (module docstring)
            max_turns = TURN_CAP_PER_POSITION * self.num_positions
        else:
            max_turns = self.max_turns
        self.info = GameInfo(
            name=self.name,
            num_actions=self.num_positions,
            num_positions=self.num_positions,
            num_kinds=self.num_kinds,
            max_game_length=max_turns * FLIPS_PER_TURN,  # two flips a turn
            max_turns=max_turns,
            min_players=self.MIN_PLAYERS,
            max_players=self.MAX_PLAYERS,
            score_bounds=(0.0, float(self.num_pairs)),
        )

    # -- construction -------------------------------------------------------------------
    def new_game(self, rng: np.random.Generator) -> PelmanismState:
        """Deal: a uniform permutation of the deck's cards drawn from ``rng``."""
        layout = rng.permutation(self.deck.cards)
        return self._state(layout)

    def from_layout(self, layout: Any) -> PelmanismState:
        """A new game whose deal is ``layout``: card codes (``"QH"``, ``"K07"``) or card ids
        (for ``pairs:N`` / ``quartets:N`` card id = kind id). Every card of the deck must
        appear exactly as often as in the deck."""
        return self._state(self.parse_layout(layout))

    def _state(self, layout: np.ndarray) -> PelmanismState:
        kinds = self.deck.card_kind[layout]
        return PelmanismState(layout, kinds, self.num_players, self.first_player)

    def parse_layout(self, layout: Any) -> np.ndarray:
        """Card ids (int8[P]) from card codes or card ids; checks the deck."""
        deck = self.deck
        if isinstance(layout, str):
            raise InvalidOptionError("a layout is a sequence of card codes or ids, not a string")
        items = list(layout)
        if len(items) != deck.num_cards:
            raise InvalidOptionError(
                f"a Pelmanism layout for deck {deck.spec!r} has {deck.num_cards} cards, "
                f"got {len(items)}"
            )
        ids = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                try:
                    ids.append(deck.card_id(item))
                except InvalidOptionError as exc:
                    raise InvalidOptionError(f"layout[{i}]: {exc}") from None
            else:
                ids.append(check_int_option(f"layout[{i}]", item, 0, len(deck.card_codes) - 1))
        arr = np.array(ids, dtype=np.int8)
        counts = np.bincount(arr, minlength=len(deck.card_codes))
        want = np.bincount(deck.cards, minlength=len(deck.card_codes))
        if not np.array_equal(counts, want):
            bad = [deck.card_codes[c] for c in np.flatnonzero(counts != want)]
            raise InvalidOptionError(
                f"a {deck.spec!r} layout holds every card of the deck "
                f"{'once' if want.max() == 1 else f'{deck.copies} times'}; "
                f"wrong counts for {bad}"
            )
        return arr

    # -- queries ------------------------------------------------------------------------
    def legal_mask(self, state: PelmanismState) -> np.ndarray:
        out = np.empty((1, self.num_positions), dtype=bool)
        self._legal(state.data, state.counts, 0, out, self.kernel_constants)
        return out[0]

    def dealt_kinds(self, state: PelmanismState) -> np.ndarray:
        return state.kinds

    def face_down(self, state: PelmanismState) -> np.ndarray:
        return state.status == DOWN

    def scores(self, state: PelmanismState) -> np.ndarray:
        """Pairs taken by each seat (int array, one per seat)."""
        return state.pairs.astype(np.int64)

    def winners(self, state: PelmanismState) -> list[int]:
        """Every seat with the most pairs (a shared win when several tie); solo: ``[0]``."""
        bits = K.winner_bits(state.data, 0, self.num_players)
        return [seat for seat in range(self.num_players) if bits >> (1 + seat) & 1]

    def turns_taken(self, state: PelmanismState) -> int:
        """Turns completed so far by all players, extra turns included. In a solo game this
        is the game's measure (fewer is better); a turn in progress is not counted."""
        return state.turns

    def stopped_by_turn_limit(self, state: PelmanismState) -> bool:
        """Whether the ``max_turns`` house rule ended the game with cards still down."""
        return state.over and bool((state.status == DOWN).any())

    def taken(self, state: PelmanismState, player: int) -> np.ndarray:
        """Positions of the cards ``player`` has taken, in position order."""
        return np.flatnonzero((state.status == GONE) & (state.owner == player))

    def card_code(self, kind: int) -> str:
        """Code of a *kind* (what matching looks at): ``"Q"`` for the standard deck,
        ``"RQ"`` for the colour deck, ``"K07"`` for a special pack."""
        return self.deck.kind_codes[kind]

    def position_code(self, state: PelmanismState, position: int) -> str:
        """Code of the *card* dealt at ``position`` (``"QH"``), suit included."""
        return self.deck.card_codes[int(state.layout[position])]

    def layout_codes(self, state: PelmanismState) -> list[str]:
        codes = self.deck.card_codes
        return [codes[c] for c in state.layout.tolist()]

    def options(self) -> dict[str, Any]:
        return {
            "deck": self.deck.spec,
            "num_players": self.num_players,
            "first_player": self.first_player,
            "max_turns": self.max_turns,
        }

    def action_name(self, action: int) -> str:
        return (
            f"flip position {action} (row {action // self.cols}, column {action % self.cols})"
        )

    # -- the transition -----------------------------------------------------------------
    def apply_inplace(self, state: PelmanismState, action: int) -> Transition:
        if state.over:
            raise GameOverError("the game is over: no flip is legal; call reset() to start again")
        pos = check_action(action, self.num_positions)
        status = state.status
        if status[pos] != DOWN:
            legal = np.flatnonzero(status == DOWN).tolist()
            why = (
                "was already flipped this turn"
                if status[pos] == UP
                else f"has been taken by player {int(state.owner[pos])}"
            )
            raise IllegalActionError(
                f"cannot flip position {pos}: its card {why}; "
                f"face-down positions that may be flipped: {legal}"
            )

        player = state.current
        first = state.first
        t = Transition(player=player, action=pos, revealed=[(pos, int(state.kinds[pos]))])
        t.turn_over = self._flip(state.data, state.counts, 0, pos, self.kernel_constants)
        if t.turn_over and status[pos] == GONE:  # a match: the pair was taken
            t.removed += [first, pos]
        t.game_over = state.over
        t.next_player = state.current
        return t
