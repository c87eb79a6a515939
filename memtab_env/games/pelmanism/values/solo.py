"""Exact values of solo play and of greedy play between two players (see the package
docstring of :mod:`memtab_env.games.pelmanism.values`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import cache
from typing import NamedTuple

from memtab_env.errors import InvalidOptionError
from memtab_env.games.pelmanism.rules import MAX_PAIRS_KINDS, MAX_QUARTETS_KINDS, parse_deck

Number = Fraction | float
#: a position of the game: (number of kinds in each class, in the order of ``_classes``)
Counts = tuple[int, ...]


class Outcome(NamedTuple):
    """Probabilities of the result of a two-player game (they sum to 1)."""

    first_wins: Number
    draw: Number
    second_wins: Number


def velleman_warrington_asymptote(n: float) -> float:
    """``(3 - 2 ln 2) n + 7/8 - 2 ln 2``: the expected number of turns of optimal solo play
    with ``n`` pairs, up to a term that vanishes as ``n`` grows (Velleman & Warrington 2013)."""
    ln2 = math.log(2.0)
    return (3.0 - 2.0 * ln2) * n + 7.0 / 8.0 - 2.0 * ln2


def solo_random_expected_turns(n: int) -> int:
    """Expected turns of a solo player flipping uniformly random cards, ``n`` pairs: ``n**2``."""
    _check_kinds(n, 2)
    return n * n


def deck_parameters(deck: str) -> tuple[int, int]:
    """``(number of kinds, copies of each kind)`` of a deck spec: what the values depend on
    (``"standard"`` -> (13, 4), ``"colour"`` -> (26, 2), ``"pairs:8"`` -> (8, 2))."""
    d = parse_deck(deck)
    return d.num_kinds, d.copies


# -- the Markov chain of greedy play ----------------------------------------------------------
@cache
def _classes(copies: int) -> tuple[tuple[int, int], ...]:
    """Every class ``(r, j)``: r cards of a kind on the table (copies, copies-2, .., 2),
    j of them known (0..r)."""
    return tuple((r, j) for r in range(copies, 0, -2) for j in range(r + 1))


def _move(counts: Counts, copies: int, frm: tuple[int, int], to: tuple[int, int]) -> Counts:
    """One kind moves from class ``frm`` to class ``to`` (``r = 0``: it leaves the game)."""
    index = {c: i for i, c in enumerate(_classes(copies))}
    out = list(counts)
    out[index[frm]] -= 1
    if to[0] > 0:
        out[index[to]] += 1
    return tuple(out)


@cache
def _greedy_turn(counts: Counts, copies: int) -> tuple[tuple[int, int, bool, Counts], ...]:
    """The outcomes of one greedy turn: ``(numerator, denominator, matched, next counts)``."""
    classes = _classes(copies)
    for (r, j), c in zip(classes, counts, strict=True):
        if c and j >= 2:  # a known pair: take it
            return ((1, 1, True, _move(counts, copies, (r, j), (r - 2, j - 2))),)
    unseen = sum(c * (r - j) for (r, j), c in zip(classes, counts, strict=True))
    out = []
    for (r, j), c in zip(classes, counts, strict=True):
        if not c or r == j:
            continue
        w1 = c * (r - j)  # ways to flip an unseen card of this class first
        if j >= 1:  # its twin is known: flip it, take the pair
            out.append((w1, unseen, True, _move(counts, copies, (r, j), (r - 2, j - 1))))
            continue
        # a kind never seen: flip another unseen card (unseen - 1 >= r - 1 >= 1 of them)
        after = _move(counts, copies, (r, 0), (r, 1))  # X's kind is now known once
        rest = unseen - 1
        # the second card is of X's kind: a match (r - 1 unseen cards of it remain)
        out.append((w1 * (r - 1), unseen * rest, True, _move(after, copies, (r, 1), (r - 2, 0))))
        for (r2, j2), c2 in zip(classes, after, strict=True):
            if (r2, j2) == (r, 1):
                c2 -= 1  # X's own kind was counted above
            if not c2 or r2 == j2:
                continue
            w2 = c2 * (r2 - j2)
            out.append((w1 * w2, unseen * rest, False, _move(after, copies, (r2, j2), (r2, j2 + 1))))
    return tuple(out)


def _start(num_kinds: int, copies: int) -> Counts:
    counts = [0] * len(_classes(copies))
    counts[0] = num_kinds  # class (copies, 0)
    return tuple(counts)


def _check_kinds(num_kinds: int, copies: int) -> None:
    if copies not in (2, 4):
        raise InvalidOptionError(f"copies must be 2 (pairs) or 4 (quartets), got {copies!r}")
    high = MAX_PAIRS_KINDS if copies == 2 else MAX_QUARTETS_KINDS
    if isinstance(num_kinds, bool) or not isinstance(num_kinds, int) or not 1 <= num_kinds <= high:
        raise InvalidOptionError(
            f"the number of kinds must be an integer in [1, {high}] for copies={copies}, "
            f"got {num_kinds!r}"
        )


def _ratio(exact: bool) -> Callable[[int, int], Number]:
    return Fraction if exact else (lambda a, b: a / b)


# -- solo --------------------------------------------------------------------------------------
@cache
def _solo_greedy(counts: Counts, copies: int, exact: bool) -> Number:
    if not any(counts):
        return Fraction(0) if exact else 0.0
    ratio = _ratio(exact)
    total: Number = Fraction(1) if exact else 1.0
    for num, den, _, nxt in _greedy_turn(counts, copies):
        total += ratio(num, den) * _solo_greedy(nxt, copies, exact)
    return total


def solo_greedy_expected_turns(num_kinds: int, copies: int = 2, exact: bool = True) -> Number:
    """Expected number of turns a solo greedy player with perfect memory needs to take
    every card of a pack of ``num_kinds`` kinds, ``copies`` (2 or 4) cards each."""
    _check_kinds(num_kinds, copies)
    return _solo_greedy(_start(num_kinds, copies), copies, exact)


def solo_greedy_table(max_kinds: int = MAX_PAIRS_KINDS, copies: int = 2,
                      exact: bool = True) -> list[Number]:
    """``[E(1), E(2), .., E(max_kinds)]`` of :func:`solo_greedy_expected_turns`."""
    return [solo_greedy_expected_turns(n, copies, exact) for n in range(1, max_kinds + 1)]


@cache
def _solo_optimal(a: int, b: int, exact: bool) -> Number:
    """Optimal expected turns from ``a`` untouched pairs and ``b`` known singletons (pairs
    pack, no known pair on the table: one is always taken at once, which costs the turn any
    strategy spends on it)."""
    u = 2 * a + b  # unseen cards
    if u == 0:
        return Fraction(0) if exact else 0.0
    one: Number = Fraction(1) if exact else 1.0
    r = _ratio(exact)
    options: list[Number] = []

    def pair_then(a2: int, b2: int) -> Number:  # a known pair is taken next turn
        return one + _solo_optimal(a2, b2, exact)

    # (A) first an unseen card; a known twin is taken
    value = one
    if b:
        value += r(b, u) * _solo_optimal(a, b - 1, exact)
    if a:
        # (A1) the second card unseen as well
        rest = u - 1
        a1 = r(1, rest) * _solo_optimal(a - 1, b, exact)
        if b:
            a1 += r(b, rest) * pair_then(a - 1, b)
        if a >= 2:
            a1 += r(2 * (a - 1), rest) * _solo_optimal(a - 2, b + 2, exact)
        best_second = a1
        # (A2) the second card a known singleton: nothing new is learnt from it
        if b:
            best_second = min(best_second, _solo_optimal(a - 1, b + 1, exact))
        value += r(2 * a, u) * best_second
    options.append(value)
    # (B) first a known singleton, then an unseen card
    if b:
        value = one + r(1, u) * _solo_optimal(a, b - 1, exact)
        if b >= 2:
            value += r(b - 1, u) * pair_then(a, b - 1)
        if a:
            value += r(2 * a, u) * _solo_optimal(a - 1, b + 1, exact)
        options.append(value)
    return min(options)


def solo_optimal_expected_turns(num_pairs: int, exact: bool = True) -> Number:
    """Optimal expected number of turns for solo play with ``num_pairs`` pairs and perfect
    memory, over strategies that may flip an unseen or a known card at either flip (a
    known pair, and the known twin of a card just flipped, are always taken at once:
    every pair costs one turn to take, so waiting never helps)."""
    _check_kinds(num_pairs, 2)
    return _solo_optimal(num_pairs, 0, exact)


# -- two players --------------------------------------------------------------------------------
@cache
def _margin(counts: Counts, copies: int, exact: bool) -> dict[int, Number]:
    """Distribution of (pairs the player on turn will still take) - (pairs the other will
    take), both playing greedy from ``counts`` at the start of a turn."""
    if not any(counts):
        return {0: Fraction(1) if exact else 1.0}
    ratio = _ratio(exact)
    out: dict[int, Number] = {}
    for num, den, matched, nxt in _greedy_turn(counts, copies):
        p = ratio(num, den)
        for d, q in _margin(nxt, copies, exact).items():
            # a match: the same player goes on, one pair up; otherwise the roles swap
            key = d + 1 if matched else -d
            out[key] = out.get(key, 0) + p * q
    return out


def two_player_greedy_margin(num_kinds: int, copies: int = 2,
                             exact: bool = True) -> dict[int, Number]:
    """Distribution of the final score margin (first player's pairs minus the second
    player's) when two greedy players with perfect memory play a pack of ``num_kinds``
    kinds of ``copies`` cards each."""
    _check_kinds(num_kinds, copies)
    return dict(sorted(_margin(_start(num_kinds, copies), copies, exact).items()))


def two_player_greedy_outcome(num_kinds: int, copies: int = 2, exact: bool = True) -> Outcome:
    """``Outcome(first_wins, draw, second_wins)`` of two greedy players (see
    :func:`two_player_greedy_margin`)."""
    dist = two_player_greedy_margin(num_kinds, copies, exact)
    zero: Number = Fraction(0) if exact else 0.0
    first = sum((p for d, p in dist.items() if d > 0), zero)
    draw = dist.get(0, zero)
    second = sum((p for d, p in dist.items() if d < 0), zero)
    return Outcome(first, draw, second)


def two_player_greedy_expected_margin(num_kinds: int, copies: int = 2,
                                      exact: bool = True) -> Number:
    """Expected final margin (first player's pairs minus the second player's)."""
    dist = two_player_greedy_margin(num_kinds, copies, exact)
    zero: Number = Fraction(0) if exact else 0.0
    return sum((d * p for d, p in dist.items()), zero)
