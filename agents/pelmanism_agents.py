"""Pelmanism baselines: ``random``, ``greedy``, ``nomemory`` and ``optimal``.

Every agent follows the protocol of :mod:`agents`: ``reset(seed=None)`` at the start of a
game and ``act(observation) -> int`` with the AEC observation dict of the acting player,
``{"observation": int8 vector (see
:class:`memtab_env.games.pelmanism.observation.PelmanismEncoder`), "action_mask": int8 vector,
"remembered_mask": int8 vector}``.

Which game the observations come from: pass ``deck=`` (and optionally ``num_players=``)
with the env's options, e.g. ``PelmanismGreedyAgent(deck="pairs:8", num_players=2)``. If
left out, they are inferred from the first observation (the action mask gives the number
of positions ``P``; the vector length ``P (3 + K) + 2 n + 2`` then leaves one deck and
player count), and an observation that fits no deck raises an error asking for
``deck=``. Decks that match alike give the same observations and are played alike
(``standard`` / ``quartets:13``, ``colour`` / ``pairs:26``). The one true ambiguity is
4 cards: ``pairs:2`` with n players looks like ``quartets:1`` with n + 2; it is read as
``pairs:2``, which is harmless because in ``quartets:1`` every flip matches. The random
agents need no knowledge of the deck.

The greedy rule, exactly (deterministic; the values of
:mod:`memtab_env.games.pelmanism.values` are computed for it). A card is *known* when it is
face down and the observation shows its kind (under the ``perfect`` memory model: every
card ever revealed; see :mod:`memtab_env.memory` for the others). Positions are compared
by number; "lowest" is the smallest position.

first flip of a turn (no card face up)
    if some kind has two or more known cards, the lowest position among all such cards
    (a known pair: its other card follows at the second flip); else the lowest face-down
    unknown position; else (every face-down card known) the lowest face-down position.
second flip (one card face up)
    the lowest known card of the face-up card's kind (its twin: for quartets any card of
    that kind); else the lowest face-down unknown position (never a known card while
    unknown cards remain); else the lowest face-down position.

By default (``own_memory=True``) the greedy agent also keeps, for as long as the card is
on the table, every kind that one of its own observations ever showed (as the MemTab
agents do): it is the *perfect-memory* greedy player whatever the env's memory model, and
memory models that forget only limit what it learns between its actions. Under the
``perfect`` model this changes nothing. With ``own_memory=False`` it plays from the
observation alone, so the env's memory model decides what it knows (under ``none`` two
such players can repeat the same two misses forever: the "lowest unknown card" is the
same every turn).

Because the deal is a uniform permutation, which unknown card is flipped does not change
the odds, so "lowest" costs nothing.

The optimal two-player rule (``optimal``; decks of pairs, two players): the plans of
:func:`memtab_env.games.pelmanism.values.two_player_optimal_move`, which maximise the
expected margin when both players remember everything. From what it knows, ``n`` pairs
on the table and ``k`` known singletons (kinds with one card known):

first flip
    a card of a known pair if there is one (the lowest); else the plan's first flip from
    ``(n, k)``: the lowest unknown card, or the lowest known singleton (a known first
    card is never optimal up to 26 pairs, but the rule follows the plan).
second flip
    the face-up card's known twin if there is one (a match); else the plan's second flip
    after that first card (:func:`~memtab_env.games.pelmanism.values.two_player_optimal_second`,
    from the ``(n, k)`` before the first flip): the lowest unknown card, or the lowest
    known card of another kind (it shows the opponent nothing new; after a known first
    card this is a *pass*). Whether the first card was known before it was flipped is
    what the agent knew when it chose it (a first card it did not choose counts as new).

Unlike greedy it flips a known card second where showing a second new card would help
the opponent more than it helps itself (mostly where ``n + k`` is even, below the passing positions), and it
passes where every informative turn loses on average (``k = n - 1`` from 5 pairs on, and
more positions near ``k = n`` for larger decks): against another optimal player such a
position is a *stall* that lasts until a turn limit ends the game (the values count the
remaining pairs as never taken), which almost every game between two optimal players
reaches (99.7% with 26 pairs). Its knowledge is that of greedy (own memory by default).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.errors import InvalidOptionError
from memtab_env.games.pelmanism.observation import PelmanismEncoder
from memtab_env.games.pelmanism.rules import (
    MAX_PAIRS_KINDS,
    MAX_QUARTETS_KINDS,
    Pelmanism,
    parse_deck,
)
from memtab_env.games.pelmanism.values import (
    KNOWN,
    UNSEEN,
    two_player_optimal_move,
    two_player_optimal_second,
)

_DOWN, _UP, _GONE = 0, 1, 2  # status one-hot columns


def _mask(observation: Any, key: str = "action_mask") -> np.ndarray:
    if isinstance(observation, dict):
        return np.asarray(observation[key]).astype(bool)
    raise TypeError(
        f"a Pelmanism agent acts on the AEC observation dict with 'observation' and "
        f"'action_mask', got {type(observation).__name__}"
    )


def candidate_decks(num_positions: int) -> list[str]:
    """Deck specs whose table has ``num_positions`` cards."""
    out = []
    if num_positions == 52:
        out += ["standard", "colour"]
    if num_positions % 2 == 0 and 1 <= num_positions // 2 <= MAX_PAIRS_KINDS:
        out.append(f"pairs:{num_positions // 2}")
    if num_positions % 4 == 0 and 1 <= num_positions // 4 <= MAX_QUARTETS_KINDS:
        out.append(f"quartets:{num_positions // 4}")
    return out


def infer_game(obs_size: int, num_positions: int) -> tuple[str, int]:
    """``(deck, num_players)`` of the env that makes observations of ``obs_size`` values
    with ``num_positions`` flips; raises :class:`InvalidOptionError` when none or several
    fit. Decks that match alike give the same observations and are not told apart:
    ``"standard"`` stands for ``"quartets:13"`` too, ``"colour"`` for ``"pairs:26"``."""
    fits: list[tuple[str, int]] = []
    seen_kinds: set[int] = set()
    for deck in candidate_decks(num_positions):
        game = Pelmanism(deck, 1)
        if game.num_kinds in seen_kinds:
            continue  # same observations as a deck listed before: played alike
        seen_kinds.add(game.num_kinds)
        rest = obs_size - num_positions * (3 + game.num_kinds) - 2
        if rest % 2 == 0 and Pelmanism.MIN_PLAYERS <= rest // 2 <= Pelmanism.MAX_PLAYERS:
            fits.append((deck, rest // 2))
    if len(fits) > 1:
        # quartets:1 (4 cards of one kind) is the only deck that can share its sizes with
        # another (pairs:2 with two players fewer); every flip of it matches, so any legal
        # flip plays it as well as greedy does: prefer the other reading
        fits = [f for f in fits if f[0] != "quartets:1"]
    if len(fits) != 1:
        what = "no Pelmanism deck" if not fits else f"several configurations {fits}"
        raise InvalidOptionError(
            f"an observation of {obs_size} values with {num_positions} actions fits {what}; "
            f"pass deck= (and num_players=) with the env's options"
        )
    return fits[0]


class PelmanismRandomAgent:
    """Uniform over the legal flips (the observation's ``action_mask``).

    Args:
        seed: seeds the agent's own generator; ``reset(seed)`` reseeds it.
        **game_options: accepted for a uniform construction (``deck=``, ``num_players=``)
            and ignored: a random flip needs no knowledge of the deck.
    """

    def __init__(self, seed: int | None = None, **game_options: Any) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Any) -> int:
        legal = np.flatnonzero(_mask(observation))
        if legal.size == 0:
            raise ValueError("no legal flip: the action_mask is all zeros")
        return int(legal[self.rng.integers(legal.size)])  # = rng.choice(legal), 3x faster


class PelmanismNoMemoryAgent(PelmanismRandomAgent):
    """The no-memory baseline: a player who remembers nothing and only sees the cards face
    up right now.

    In Pelmanism that player can only flip blindly: at the first flip nothing is face up,
    and at the second the only face-up card is the first one, whose twin (if any is left)
    lies face down where this player cannot tell it from any other card. So it flips a
    uniformly random face-down card at both flips, whatever the memory model shows; its
    choices are those of :class:`PelmanismRandomAgent` with the same seed. Its known
    value: a solo game of ``pairs:n`` takes ``n**2`` turns on average
    (:func:`memtab_env.games.pelmanism.values.solo_random_expected_turns`).
    """


class PelmanismGreedyAgent:
    """The greedy pair finder with the exact rule of the module docstring.

    Args:
        deck: the env's deck (``"standard"``, ``"colour"``, ``"pairs:N"``,
            ``"quartets:N"``); ``None`` infers it from the first observation.
        num_players: the env's number of players; ``None`` infers it.
        own_memory: also remember every kind shown by an earlier observation (default;
            see the module docstring); False: play from the observation alone.
        seed: unused (the agent is deterministic); accepted for a uniform protocol.
    """

    def __init__(
        self,
        deck: str | None = None,
        num_players: int | None = None,
        own_memory: bool = True,
        seed: int | None = None,
    ) -> None:
        self._check_game(deck, num_players)
        self.deck_option = deck
        self.players_option = num_players
        self.own_memory = bool(own_memory)
        self.encoder: PelmanismEncoder | None = None
        if deck is not None:  # validates the options now
            self.encoder = PelmanismEncoder(Pelmanism(deck, num_players or 1))
        self._seen: np.ndarray | None = None

    def reset(self, seed: int | None = None) -> None:
        self._seen = None

    def _encoder_for(self, obs_size: int, num_positions: int) -> PelmanismEncoder:
        """The encoder of the env that made an observation of these sizes."""
        enc = self.encoder
        if enc is not None and enc.size == obs_size and enc.num_positions == num_positions:
            return enc
        if self.deck_option is None:
            deck, n = infer_game(obs_size, num_positions)
        else:
            deck = self.deck_option
            game = Pelmanism(deck, 1)
            rest = obs_size - num_positions * (3 + game.num_kinds) - 2
            n = rest // 2 if rest % 2 == 0 else -1
            if game.num_positions != num_positions or not (
                Pelmanism.MIN_PLAYERS <= n <= Pelmanism.MAX_PLAYERS
            ):
                raise InvalidOptionError(
                    f"this greedy agent plays deck {deck!r} ({game.num_positions} positions), "
                    f"but got an observation of {obs_size} values with {num_positions} actions, "
                    f"which no player count of that deck makes; pass the env's deck="
                )
        if self.players_option is not None and n != self.players_option:
            raise InvalidOptionError(
                f"the observation fits deck {deck!r} with {n} player(s), but this agent was "
                f"given num_players={self.players_option}; pass the env's num_players="
            )
        self._check_game(deck, n)
        self.encoder = PelmanismEncoder(Pelmanism(deck, n))
        return self.encoder

    @staticmethod
    def _check_game(deck: str | None, num_players: int | None) -> None:
        """Raise :class:`InvalidOptionError` for a game this agent does not play (greedy
        plays every one; ``deck`` and ``num_players`` may be ``None``: not given yet)."""

    def _knowledge(self, observation: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """``(kind, up, legal, views)`` of an observation: the kind of each position's card
        as this player knows it (-1 unknown; own memory included), the face-up mask, the
        legal flips and the encoder's views."""
        legal = _mask(observation)
        if not legal.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        obs = np.asarray(observation["observation"])
        views = self._encoder_for(obs.size, legal.size).views(obs)
        status = views["status"]
        shown = views["card"]
        kind = np.where(shown.any(axis=1), shown.argmax(axis=1), -1)
        if self.own_memory:
            if self._seen is None or self._seen.size != kind.size:
                self._seen = np.full(kind.size, -1, dtype=np.int64)
            self._seen = np.where(kind >= 0, kind, self._seen)
            self._seen[status[:, _GONE] == 1] = -1  # taken cards are never flipped again
            kind = np.where(status[:, _DOWN] == 1, self._seen, kind)
        return kind, status[:, _UP] == 1, legal, views

    def act(self, observation: Any) -> int:
        kind, up, legal, _ = self._knowledge(observation)
        return greedy_flip(kind, up, legal)


def greedy_flip(kind: np.ndarray, up: np.ndarray, legal: np.ndarray) -> int:
    """The greedy rule on what a player knows.

    Args:
        kind: kind of each position's card when known (face down and shown, or face up),
            -1 when unknown.
        up: bool mask of the card face up now (the first flip of this turn), if any.
        legal: bool mask of the face-down positions that may be flipped.
    """
    known = legal & (kind >= 0)
    unknown = legal & (kind < 0)
    face_up = np.flatnonzero(up)
    if face_up.size:  # second flip: the twin of the face-up card
        target = known & (kind == kind[face_up[0]])
    else:  # first flip: a card of a known pair
        counts = np.bincount(kind[known], minlength=max(int(kind.max()), 0) + 1)
        target = known & (counts[np.maximum(kind, 0)] >= 2)
    return _lowest(target, unknown, legal)


class PelmanismOptimalAgent(PelmanismGreedyAgent):
    """The optimal two-player player of decks of pairs (the rule of the module docstring).

    Args:
        deck: the env's deck, a deck of pairs (``"pairs:N"``, or ``"colour"``, which is
            played as ``"pairs:26"``); ``None`` infers it from the first observation.
        num_players: 2 (or ``None``: inferred, and then checked to be 2).
        own_memory: as :class:`PelmanismGreedyAgent`.
        seed: unused (the agent is deterministic).

    Raises :class:`InvalidOptionError` for another deck or player count (at construction
    when given, at the first observation when inferred).
    """

    #: the first flip this agent chose this turn: (position, "unseen" or "known", n, k)
    _first: tuple[int, str, int, int] | None = None

    @staticmethod
    def _check_game(deck: str | None, num_players: int | None) -> None:
        copies = 2 if deck is None else parse_deck(deck).copies
        if copies != 2 or num_players not in (None, 2):
            raise InvalidOptionError(
                f"the optimal Pelmanism agent plays two players on a deck of pairs ('pairs:N', "
                f"1 <= N <= {MAX_PAIRS_KINDS}, or 'colour'); got deck {deck or 'pairs:N'!r} with "
                f"{num_players} player(s)")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._first = None

    def act(self, observation: Any) -> int:
        kind, up, legal, _ = self._knowledge(observation)
        known = legal & (kind >= 0)
        unknown = legal & (kind < 0)
        counts = np.bincount(kind[known], minlength=max(int(kind.max()), 0) + 1)
        face_up = np.flatnonzero(up)
        if face_up.size == 0:
            pair = known & (counts[np.maximum(kind, 0)] >= 2)
            n, k = int(legal.sum()) // 2, int((counts == 1).sum())
            if pair.any() or not unknown.any():
                return _lowest(pair, known, legal)
            first = two_player_optimal_move(n, k).first if k < n else UNSEEN
            single = known & (counts[np.maximum(kind, 0)] == 1)
            pos = _lowest(single if first == KNOWN else unknown, unknown, legal)
            self._first = (pos, KNOWN if kind[pos] >= 0 else UNSEEN, n, k)
            return pos
        f = int(face_up[0])
        twin = known & (kind == kind[f])
        if twin.any():
            return _lowest(twin)
        if self._first is not None and self._first[0] == f:
            _, first, n, k = self._first
        else:  # a first card this agent did not choose: new to it
            first, n, k = UNSEEN, (int(legal.sum()) + 1) // 2, int((counts == 1).sum())
        second = _second(n, k, first)
        other = known & (kind != kind[f])
        return _lowest(other if second == KNOWN else unknown, unknown, legal)


def _second(n: int, k: int, first: str) -> str:
    """The plan's second flip, or ``"unseen"`` where the plan has none (the agent's
    knowledge is not what the plan assumed: a first card thought known turned out not to
    be, or no known card to pass with)."""
    if n == k or (first == KNOWN and k == 0) or n == 0:
        return UNSEEN
    return two_player_optimal_second(n, k, first)


def _lowest(*masks: np.ndarray) -> int:
    """The lowest position of the first non-empty mask."""
    for mask in masks:
        hits = np.flatnonzero(mask)
        if hits.size:
            return int(hits[0])
    raise ValueError("no legal flip: the action_mask is all zeros")


__all__ = [
    "PelmanismGreedyAgent",
    "PelmanismOptimalAgent",
    "PelmanismNoMemoryAgent",
    "PelmanismRandomAgent",
    "candidate_decks",
    "greedy_flip",
    "infer_game",
]
