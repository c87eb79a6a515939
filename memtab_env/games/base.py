"""The engine contract every game follows, and the declarative info block.

An engine is pure Python + numpy, free of gymnasium and pettingzoo. It is an object that
holds a validated *configuration* (number of players, deck, ...) and operates on *state*
objects that it creates. Verbs (in the spirit of pgx ``Game`` and OpenSpiel ``State``):

- ``new_game(rng)``: deal a new game from an explicit ``np.random.Generator``;
  the deal is the only randomness, everything afterwards is deterministic.
- ``from_layout(layout)``: the same game for a given deal (replays, scripted tests).
- ``legal_mask(state)``: bool array over the action ids.
- ``apply(state, action)``: pure transition, returns ``(new_state, transition)``.
- ``apply_inplace(state, action)``: the same transition, mutating ``state`` (what the
  envs use; ``apply`` is a copy followed by this, so the rules exist once).
- ``is_over``, ``current_player``, ``scores``, ``winners``, ``face_down``.

The env layer (:mod:`memtab_env.aec`) is written once against this contract.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from memtab_env.errors import InvalidOptionError


@dataclass(frozen=True)
class GameInfo:
    """Declarative facts about a game configuration, checked by the tests.

    Attributes:
        name: short game name used in records (``"memtab"``).
        num_actions: size of the discrete action space.
        num_positions: number of card positions (the part of the action space that flips).
        num_kinds: number of distinct card kinds.
        max_game_length: the most actions a legal game can take (all players together).
        max_turns: the most turns a legal game can take.
        min_players / max_players: allowed player counts.
        score_bounds: lowest and highest final score a player can have.
    """

    name: str
    num_actions: int
    num_positions: int
    num_kinds: int
    max_game_length: int
    max_turns: int
    min_players: int
    max_players: int
    score_bounds: tuple[float, float]


class Transition:
    """What one action did: the facts records, memory models and renderers need.

    Attributes:
        player: seat that acted.
        action: the action id.
        revealed: ``(position, kind)`` pairs that became visible to everybody.
        removed: positions whose cards left the table or a tableau because of a pair.
        turn_over: whether the action ended the acting player's turn.
        next_player: the seat on turn after the action (equal to ``player`` on an extra
            turn; unchanged when the game is over).
        game_over: whether the game ended with this action.
        extra: game-specific fields, copied into the action's record entry.
    """

    __slots__ = ("player", "action", "revealed", "removed", "turn_over", "next_player",
                 "game_over", "extra")

    def __init__(
        self,
        player: int,
        action: int,
        revealed: list[tuple[int, int]] | None = None,
        removed: list[int] | None = None,
        turn_over: bool = False,
        next_player: int = 0,
        game_over: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.player = player
        self.action = action
        self.revealed = revealed if revealed is not None else []
        self.removed = removed if removed is not None else []
        self.turn_over = turn_over
        self.next_player = next_player
        self.game_over = game_over
        self.extra = extra if extra is not None else {}

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"Transition({fields})"


class Game(abc.ABC):
    """Abstract engine. Subclasses validate their options in ``__init__``."""

    #: short name used in records and registries
    name: ClassVar[str]
    #: the options accepted by ``__init__`` with their defaults (documentation + records)
    default_options: ClassVar[dict[str, Any]]

    #: the seat counts the rules allow (every game so far can be played solo)
    MIN_PLAYERS: ClassVar[int] = 1
    MAX_PLAYERS: ClassVar[int]

    num_players: int
    first_player: int
    info: GameInfo

    @classmethod
    def _bind_kernels(cls, direct: Callable[[str], Any], **entries: str) -> None:
        """Set each class attribute ``attr`` of ``entries`` (``attr="kernel name"``) to the
        rules kernel's compiled entry ``direct(name)`` (the game's ``rules_kernels.direct``)
        if it is still None: the first instance binds them; class attributes, so instances
        pickle and copy as plain data."""
        for attr, name in entries.items():
            if getattr(cls, attr) is None:
                setattr(cls, attr, direct(name))

    def _set_seats(self, num_players: int, first_player: int) -> None:
        """Check and set ``num_players`` (``MIN_PLAYERS`` .. ``MAX_PLAYERS``) and
        ``first_player`` (a seat, ``0 .. num_players - 1``)."""
        self.num_players = check_int_option("num_players", num_players, self.MIN_PLAYERS, self.MAX_PLAYERS)
        self.first_player = check_int_option("first_player", first_player, 0, self.num_players - 1)

    # -- construction ---------------------------------------------------------------
    @abc.abstractmethod
    def new_game(self, rng: np.random.Generator) -> Any:
        """Deal a new game with ``rng`` (the only randomness of a game)."""

    @abc.abstractmethod
    def from_layout(self, layout: Any) -> Any:
        """A new game whose deal is ``layout`` (card codes or kind ids)."""

    @abc.abstractmethod
    def dealt_kinds(self, state: Any) -> np.ndarray:
        """The kind (what matches) of the card dealt at every position: ints in
        ``[0, info.num_kinds)``, shape ``(info.num_positions,)``; never changes in a game."""

    # -- rules ------------------------------------------------------------------------
    @abc.abstractmethod
    def legal_mask(self, state: Any) -> np.ndarray:
        """Bool array of shape ``(num_actions,)``: the legal actions of the player on turn
        (all False once the game is over)."""

    @abc.abstractmethod
    def apply_inplace(self, state: Any, action: int) -> Transition:
        """Apply ``action`` to ``state`` in place. Raises before changing anything if the
        action is illegal or the game is over."""

    def apply(self, state: Any, action: int) -> tuple[Any, Transition]:
        """Pure transition: ``state`` is left unchanged."""
        new_state = state.copy()
        transition = self.apply_inplace(new_state, action)
        return new_state, transition

    def is_over(self, state: Any) -> bool:
        """Whether the game is over: the state's ``over`` (every game's state row has one;
        an engine whose state does not overrides this)."""
        return state.over

    def current_player(self, state: Any) -> int:
        """The seat on turn: the state's ``current`` (as ``is_over``)."""
        return state.current

    @abc.abstractmethod
    def scores(self, state: Any) -> np.ndarray:
        """Score of every seat now (final scores once the game is over)."""

    @abc.abstractmethod
    def winners(self, state: Any) -> list[int]:
        """Seats that win (several for a shared win). Only meaningful once over."""

    @abc.abstractmethod
    def face_down(self, state: Any) -> np.ndarray:
        """Bool mask over positions: cards face down on the table, whose identity an
        observer knows only through memory."""

    @abc.abstractmethod
    def card_code(self, kind: int) -> str:
        """Human-readable code of a card kind (``"R5"``)."""

    @abc.abstractmethod
    def layout_codes(self, state: Any) -> list[str]:
        """The deal as card codes, ``layout[i]`` being the card dealt at position ``i``."""

    def instant_win(self, state: Any) -> bool:
        """Whether a special rule ended the game (MemTab's two pairs in one turn)."""
        return False

    def options(self) -> dict[str, Any]:
        """The engine options of this configuration, as a plain dict (for records)."""
        return {"num_players": self.num_players, "first_player": self.first_player}

    def action_name(self, action: int) -> str:
        """Human-readable name of an action id."""
        return f"flip {action}"


def row_int_field(key: Any, doc: str) -> property:
    """A state's field as a Python int: ``self.data[key]``, for states that are named views
    into a rules row (``key`` an index, or ``(0, index)`` into a one-row matrix)."""

    def get(self: Any) -> int:
        return int(self.data[key])

    def set_(self: Any, value: int) -> None:
        self.data[key] = value

    return property(get, set_, doc=doc)


def row_bool_field(key: Any, doc: str) -> property:
    """As :func:`row_int_field`, a flag read as a bool and stored as 0 or 1."""

    def get(self: Any) -> bool:
        return bool(self.data[key])

    def set_(self: Any, value: bool) -> None:
        self.data[key] = bool(value)

    return property(get, set_, doc=doc)


def row_array_field(view: Any, doc: str) -> property:
    """A state's array field: ``view(self)``, a view into its rules row; assigning to it
    writes the values into the row."""

    def set_(self: Any, value: Any) -> None:
        view(self)[:] = value

    return property(view, set_, doc=doc)


def check_int_option(name: str, value: Any, low: int, high: int) -> int:
    """Validate an integer option, raising :class:`InvalidOptionError` with the allowed range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidOptionError(
            f"{name} must be an integer in [{low}, {high}], got {value!r} ({type(value).__name__})"
        )
    if not low <= int(value) <= high:
        raise InvalidOptionError(f"{name} must be in [{low}, {high}], got {value}")
    return int(value)


def layout_ids(items: Sequence[Any], codes: Sequence[str], what: str) -> np.ndarray:
    """The ids (int8) of a layout's ``items``, each a code of ``codes`` (its index) or an id
    in ``[0, len(codes))``; an unknown code fails as ``layout[i] = 'X' is not {what}``."""
    ids = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            if item not in codes:
                raise InvalidOptionError(f"layout[{i}] = {item!r} is not {what}; cards are {list(codes)}")
            ids.append(codes.index(item))
        else:
            ids.append(check_int_option(f"layout[{i}]", item, 0, len(codes) - 1))
    return np.array(ids, dtype=np.int8)


def check_action(action: Any, num_actions: int) -> int:
    """Validate the *type and range* of an action id; raises IllegalActionError."""
    from memtab_env.errors import IllegalActionError

    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = int(action)
        else:
            raise IllegalActionError(
                f"action must be an integer in [0, {num_actions - 1}], "
                f"got {action!r} ({type(action).__name__})"
            )
    action = int(action)
    if not 0 <= action < num_actions:
        raise IllegalActionError(
            f"action {action} is out of range: actions are integers in [0, {num_actions - 1}]"
        )
    return action
