"""Exact known values of Pelmanism, by dynamic programming over what the players know.

With perfect memory, the only thing that matters about a position of the game is how many
kinds are in each *class* ``(r, j)``: ``r`` cards of the kind still on the table, ``j`` of
them already seen (known). The cards not yet seen are a uniformly random arrangement of
what is left (the deal is a uniform permutation and flips reveal nothing else), so which
unseen position a player flips does not change the odds, and the game is a Markov chain
on class counts. For a pack of pairs the classes are ``(2, 0)`` (pairs never touched),
``(2, 1)`` (known singletons) and ``(2, 2)`` (known pairs).

The greedy policy (what :class:`memtab_env.agents.pelmanism_agents.PelmanismGreedyAgent` plays):

1. if a known pair lies on the table, flip one of its cards, then the other;
2. else flip an unseen card; if a card of its kind is known (its *twin*: for quartets,
   any known card of the same kind), flip that card, taking the pair;
3. else flip another unseen card (never a known card while unseen cards remain; if none
   remained a known card would be flipped, but with perfect memory this cannot happen:
   the first card's kind has r - 1 >= 1 more unseen cards).

Values computed here (``exact=True``: :class:`fractions.Fraction`; ``exact=False``: float):

- :func:`solo_greedy_expected_turns`: expected number of turns of a solo greedy player
  (extra turns count: a pack of ``N`` pairs takes at least ``N`` turns);
- :func:`solo_optimal_expected_turns` (pairs): the optimum over every perfect-memory
  strategy that may also flip known cards, to compare the greedy one with;
- :func:`two_player_greedy_outcome`: the probabilities that the first player wins, that
  the game is drawn and that the second player wins when both play greedy;
- :func:`velleman_warrington_asymptote`: ``(3 - 2 ln 2) n + 7/8 - 2 ln 2``, the expected
  number of turns of optimal solo play with ``n`` pairs for large ``n`` (D. J. Velleman and
  G. S. Warrington, "What to expect in a game of memory", Amer. Math. Monthly 120 (2013));
- :func:`solo_random_expected_turns`: ``n**2`` for uniformly random flips with ``n`` pairs
  (a turn with ``m`` pairs left matches with probability ``1/(2m - 1)``, so clearing one
  pair takes ``2m - 1`` turns on average, and the sum over ``m = 1..n`` is ``n**2``).

Findings (``tests/test_pelmanism_values.py`` checks them):

- the greedy solo value equals the optimum exactly (as fractions) for every ``n`` up to
  26: greedy *is* optimal solo play, flipping a known card never helps a solo player;
- it approaches the Velleman-Warrington asymptote, from below for every ``n`` but 3: the gap is
  ``E(n) - asymptote(n) ~ -0.040 / n`` (``n * gap`` = -0.0411, -0.0400, -0.0397 for
  ``n`` = 10, 20, 26), under 0.01 turns from ``n = 5`` on and 0.0015 at ``n = 26``, so
  the asymptote is exact up to an ``O(1/n)`` term;
- two greedy players (pairs): an odd number of pairs cannot end drawn; neither seat has a
  steady edge: ``P(first wins) - P(second wins)`` changes sign irregularly with ``n``
  (1/3 against 2/3 for 2 pairs, 3/5 against 4/15 for 4) and shrinks (0.4663 against
  0.4675, draw 0.0662, for 26 pairs). Between two players greedy is a baseline, not
  optimal (below). Standard deck (13 quartets): 41.70 expected solo turns; two players
  0.4517 / 0.0999 / 0.4484.

Two players, optimal play (pairs; U. Zwick and M. S. Paterson, "The memory game",
Theoretical Computer Science 110 (1993)). A position at the start of a turn is ``(n, k)``:
``n`` pairs, ``k`` known singletons, no known pair (taken at once). A turn is one of four
plans: an unseen first card (matched when its twin is known) then an unseen card (``U``,
greedy's) or a known one (``Uk``: it shows the opponent nothing new); a known first card
then an unseen one; or two known cards, a *pass* (``k >= 2``), which hands the opponent
the same position. With ``W`` the best informative plan, a pass makes the value
``V = max(W, -V)``: where ``W < 0`` both players pass for ever, the remaining pairs are
never taken (a turn limit ends the game, scored as it stands) and ``V = 0``; so ``V =
max(W, 0)`` where a pass is possible. The win version plays for the result (win 1, draw
1/2, loss 0) and keeps the lead in the state; there endless passing ends the game as it
stands, and a position is worth ``W`` when ``W >= 1 - W'`` (``W'``: the opponent's best
informative plan with the lead reversed), else the median of ``W``, that ending and
``1 - W'``.

- :func:`two_player_optimal_value`, :func:`two_player_optimal_move`,
  :func:`two_player_optimal_second`, :func:`two_player_optimal_table`: the margin
  optimum (what ``agents.make("optimal", game="pelmanism")`` plays);
- :func:`two_player_optimal_win_value`: the result optimum, every deck up to 26 pairs
  (exact, about a second);
- :func:`two_player_optimal_stall_probability`,
  :func:`two_player_optimal_against_greedy`.

Findings (``tests/test_pelmanism_two_player_optimum.py``; ``docs/pelmanism_values.md``
tabulates them): an expectimax over explicit positions that tries every legal flip gives
the same values for ``n <= 5``; a known first card is never optimal; ``Uk`` is optimal in
positions from ``(3, 1)`` on, mostly where ``n + k`` is even; a pass from 5 pairs on
(``k = n - 1``, then more ``k`` near ``n``), so two optimal players stall in 38% of games
of 5 pairs and 99.7% of 26; the first player's margin ``V(n, 0)`` alternates in sign from
8 pairs on, about ``1 / (4 n)`` in size (-0.0097 for 26 pairs); the optimum gains more than
a pair per game against greedy over both seats from 8 pairs on (3.69 for 26 pairs).
"""

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


# -- two players, optimal play (pairs) ------------------------------------------------------------
#: the two kinds of flip of the optimal two-player strategy: a card never seen, or a card
#: seen before (a known singleton, whose twin is unseen)
UNSEEN, KNOWN = "unseen", "known"


class TwoPlayerMove(NamedTuple):
    """The optimal plan of a turn from ``(n, k)`` (see :func:`two_player_optimal_move`).

    Attributes:
        first: the first flip, ``"unseen"`` or ``"known"`` (a known singleton).
        second: the second flip when the first card does not complete a pair (an unseen
            first card whose twin is known is always matched): ``"unseen"`` or
            ``"known"`` (a known singleton of another kind, which shows nothing new).
        value: the mover's optimal expected margin from ``(n, k)``
            (:func:`two_player_optimal_value`).
    """

    first: str
    second: str
    value: Number

    @property
    def passes(self) -> bool:
        """Whether the plan is a pass: two known non-matching cards, nothing shown."""
        return self.first == KNOWN and self.second == KNOWN


def _check_position(n: int, k: int) -> None:
    _check_kinds(n, 2)
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= n:
        raise InvalidOptionError(
            f"the number of known singletons k must be an integer in [0, n] = [0, {n}], got {k!r}")


@cache
def _2p_options(n: int, k: int) -> dict[str, Fraction]:
    """The exact values of every non-pass plan from ``(n, k)`` (``n >= 1``): ``"U"`` (first
    flip unseen, unseen second after a new kind), ``"Uk"`` (first unseen, then a known
    card), ``"KU"`` (a known card first, then an unseen one). A plan not available in the
    position is absent."""
    u = 2 * n - k  # unseen cards: the k twins of the known singletons, 2 (n - k) others
    out: dict[str, Fraction] = {}
    # an unseen first card: the twin of a known singleton (taken) or a new kind
    twin = Fraction(k, u) * (1 + _2p_value(n - 1, k - 1)) if k else Fraction(0)
    new = Fraction(2 * (n - k), u)
    if n > k:
        rest = u - 1
        uu = Fraction(1, rest) * (1 + _2p_value(n - 1, k))  # its own twin
        # a known singleton's twin: a known pair, which the opponent takes first
        uu -= Fraction(k, rest) * (1 + _2p_value(n - 1, k))
        if n - k >= 2:  # another new kind: two more singletons for the opponent
            uu -= Fraction(2 * (n - k - 1), rest) * _2p_value(n, k + 2)
        out["U"] = twin + new * uu
        if k:
            out["Uk"] = twin - new * _2p_value(n, k + 1)
    else:  # every unseen card is a known singleton's twin: a sure match
        out["U"] = twin
    if k:  # a known singleton first, then an unseen card
        ku = Fraction(1, u) * (1 + _2p_value(n - 1, k - 1))
        ku -= Fraction(k - 1, u) * (1 + _2p_value(n - 1, k - 1))
        if n > k:
            ku -= new * _2p_value(n, k + 1)
        out["KU"] = ku
    return out


@cache
def _2p_value(n: int, k: int) -> Fraction:
    """Exact :func:`two_player_optimal_value` (no argument checks)."""
    if n == 0:
        return Fraction(0)
    informative = max(_2p_options(n, k).values())
    # a pass (k >= 2) gives the opponent the same position: V = max(W, -V), whose value
    # under endless passing (nothing more is scored) is max(W, 0)
    return max(informative, Fraction(0)) if k >= 2 else informative


def two_player_optimal_value(n: int, k: int = 0, exact: bool = True) -> Number:
    """The mover's optimal expected margin in two-player Pelmanism with ``n`` pairs.

    At the start of a turn with ``n`` pairs on the table, ``k`` of them known singletons
    (one card seen, its twin not) and no known pair (a known pair is taken at once), both
    players with perfect memory and playing optimally: the expected number of pairs the
    player on turn will still take minus those the opponent will take. A position where
    every informative plan has a negative value and a pass is possible (``k >= 2``) is
    worth 0: both players pass for ever, and the remaining pairs are never scored (the
    turn cap ends such a game, scored as it stands). ``exact``: a :class:`Fraction`, else
    a float.
    """
    _check_position(n, k)
    value = _2p_value(n, k)
    return value if exact else float(value)


def two_player_optimal_second(n: int, k: int, first: str) -> str:
    """The optimal second flip from ``(n, k)`` after a first card of kind ``first``
    (``"unseen"``: a new kind; ``"known"``: a known singleton) that does not complete a
    pair: ``"unseen"`` or ``"known"`` (after a known first card: a pass). Ties go to
    ``"unseen"`` (greedy's flip)."""
    _check_position(n, k)
    if first not in (UNSEEN, KNOWN):
        raise InvalidOptionError(f"first must be {UNSEEN!r} or {KNOWN!r}, got {first!r}")
    if n == 0 or n == k:
        raise InvalidOptionError(f"from (n, k) = ({n}, {k}) no first card leaves a second choice "
                                 "(every unseen card completes a pair)")
    if first == UNSEEN:
        if k == 0:
            return UNSEEN
        # compare the continuations of a new first card: the unseen-second part of "U"
        # against "Uk" (they share the twin term)
        return KNOWN if _2p_options(n, k)["Uk"] > _2p_options(n, k)["U"] else UNSEEN
    if k == 0:
        raise InvalidOptionError(f"from (n, k) = ({n}, 0) no card is known: the first flip is unseen")
    if k == 1:
        return UNSEEN  # no other known card to pass with
    return KNOWN if -_2p_value(n, k) > _2p_options(n, k)["KU"] else UNSEEN


def two_player_optimal_move(n: int, k: int = 0, exact: bool = True) -> TwoPlayerMove:
    """The optimal plan of a turn from ``(n, k)`` (``n >= 1``; see
    :func:`two_player_optimal_value`), with deterministic tie-breaks: the first flip is
    unseen unless a known first card is strictly better, the second unseen unless a known
    card is strictly better, and a pass only when every informative plan loses (``W <
    0``); a known pair is taken before any plan, and an unseen first card whose twin is
    known is matched."""
    _check_position(n, k)
    if n == 0:
        raise InvalidOptionError("no move from (0, 0): the game is over")
    options = _2p_options(n, k)
    value = _2p_value(n, k)
    out = value if exact else float(value)
    if k >= 2 and max(options.values()) < 0:
        return TwoPlayerMove(KNOWN, KNOWN, out)
    first = KNOWN if options.get("KU", value - 1) > max(options["U"], options.get("Uk", options["U"])) \
        else UNSEEN
    if n == k:
        return TwoPlayerMove(first, UNSEEN, out)
    return TwoPlayerMove(first, two_player_optimal_second(n, k, first), out)


def two_player_optimal_table(max_pairs: int = MAX_PAIRS_KINDS, exact: bool = True) -> list[Number]:
    """``[V(1, 0), .., V(max_pairs, 0)]``: the first player's optimal expected margin for
    every deck ``pairs:n`` (:func:`two_player_optimal_value` at the start of a game)."""
    return [two_player_optimal_value(n, 0, exact) for n in range(1, max_pairs + 1)]


@cache
def _2p_stall(n: int, k: int) -> Fraction:
    """Probability that optimal play from ``(n, k)`` reaches a position where both pass."""
    if n == 0:
        return Fraction(0)
    move = two_player_optimal_move(n, k)
    if move.passes:
        return Fraction(1)
    u = 2 * n - k
    p = Fraction(0)
    if move.first == KNOWN:  # never optimal up to 26 pairs; kept for completeness
        if k >= 1:
            p += Fraction(k, u) * _2p_stall(n - 1, k - 1)  # its twin, or a pair the other takes
        if n > k:
            p += Fraction(2 * (n - k), u) * _2p_stall(n, k + 1)
        return p
    p += Fraction(k, u) * _2p_stall(n - 1, k - 1) if k else Fraction(0)
    if n > k:
        new = Fraction(2 * (n - k), u)
        if move.second == KNOWN:
            p += new * _2p_stall(n, k + 1)
        else:
            rest = u - 1
            after = Fraction(1 + k, rest) * _2p_stall(n - 1, k)
            if n - k >= 2:
                after += Fraction(2 * (n - k - 1), rest) * _2p_stall(n, k + 2)
            p += new * after
    return p


def two_player_optimal_stall_probability(n: int, exact: bool = True) -> Number:
    """Probability that a game of ``pairs:n`` between two optimal players (the plans of
    :func:`two_player_optimal_move`) reaches a position where both pass for ever."""
    _check_kinds(n, 2)
    p = _2p_stall(n, 0)
    return p if exact else float(p)


# -- two players, the optimum for the result (win 1, draw 1/2, loss 0) ----------------------------
def _result(lead: int) -> Fraction:
    """The mover's result of a game that ends with the mover ``lead`` pairs ahead."""
    return Fraction(1) if lead > 0 else Fraction(1, 2) if lead == 0 else Fraction(0)


@cache
def _2p_win_informative(n: int, k: int, lead: int) -> Fraction:
    """The best informative (non-pass) plan's expected result from ``(n, k)`` with the
    mover ``lead`` pairs ahead (the plans of :func:`_2p_options`)."""
    u = 2 * n - k
    win = _2p_win_value

    def other(n2: int, k2: int, lead2: int) -> Fraction:  # the opponent moves next
        return 1 - win(n2, k2, -lead2)

    twin = Fraction(k, u) * win(n - 1, k - 1, lead + 1) if k else Fraction(0)
    new = Fraction(2 * (n - k), u)
    plans = []
    if n > k:
        rest = u - 1
        uu = Fraction(1, rest) * win(n - 1, k, lead + 1)
        uu += Fraction(k, rest) * other(n - 1, k, lead - 1)  # it takes the known pair
        if n - k >= 2:
            uu += Fraction(2 * (n - k - 1), rest) * other(n, k + 2, lead)
        plans.append(twin + new * uu)
        if k:
            plans.append(twin + new * other(n, k + 1, lead))
    else:
        plans.append(twin)
    if k:
        ku = Fraction(1, u) * win(n - 1, k - 1, lead + 1)
        ku += Fraction(k - 1, u) * other(n - 1, k - 1, lead - 1)
        if n > k:
            ku += new * other(n, k + 1, lead)
        plans.append(ku)
    return max(plans)


@cache
def _2p_win_value(n: int, k: int, lead: int) -> Fraction:
    """Exact :func:`two_player_optimal_win_value` (no argument checks)."""
    if n == 0 or abs(lead) > n:  # over, or decided whatever is still taken
        return _result(lead)
    mine = _2p_win_informative(n, k, lead)
    if k < 2:
        return mine
    # a pass hands the opponent the same position with the lead reversed: x = max(W, 1 - y),
    # y = max(W', 1 - x), and endless passing ends the game as it stands. If W >= 1 - W',
    # the mover gains nothing by waiting (x = W); otherwise each would rather the other
    # moved, and the value is what endless passing gives, held between W (the mover can
    # move) and 1 - W' (the opponent can)
    theirs = _2p_win_informative(n, k, -lead)
    if mine >= 1 - theirs:
        return mine
    return sorted((mine, _result(lead), 1 - theirs))[1]


def two_player_optimal_win_value(n: int, k: int = 0, lead: int = 0, exact: bool = True) -> Number:
    """The mover's optimal expected result (win 1, draw 1/2, loss 0: the benchmark's win
    share) at the start of a turn from ``(n, k)`` (as :func:`two_player_optimal_value`)
    with the mover ``lead`` pairs ahead, when both players play to win rather than for the
    margin. A position where both would rather pass ends as it stands. ``lead = 0, k = 0``:
    the first player's chance of winning a game of ``pairs:n`` (a draw counting half)."""
    _check_position(n, k)
    if isinstance(lead, bool) or not isinstance(lead, int) or abs(lead) > MAX_PAIRS_KINDS:
        raise InvalidOptionError(
            f"lead must be an integer in [-{MAX_PAIRS_KINDS}, {MAX_PAIRS_KINDS}], got {lead!r}")
    value = _2p_win_value(n, k, lead)
    return value if exact else float(value)


@cache
def _2p_against_greedy(n: int, k: int, optimal_moves: bool) -> Fraction:
    """Expected (optimal player's pairs - greedy player's pairs) still to come from
    ``(n, k)``, with the optimal player (the plans of :func:`two_player_optimal_move`) or
    the greedy one on turn."""
    if n == 0:
        return Fraction(0)
    sign = 1 if optimal_moves else -1
    u = 2 * n - k

    def miss(n2: int, k2: int, pair: bool) -> Fraction:  # the other player moves next
        after = _2p_against_greedy(n2, k2, not optimal_moves)
        return after - sign if pair else after  # a known pair: the other takes it first

    if optimal_moves:
        move = two_player_optimal_move(n, k)
        if move.passes:  # greedy never passes: it moves from the same position
            return _2p_against_greedy(n, k, False)
        first, second = move.first, move.second
    else:
        first, second = UNSEEN, UNSEEN
    match = sign + _2p_against_greedy(n - 1, k - 1, optimal_moves) if k else Fraction(0)
    new = Fraction(2 * (n - k), u)
    if first == KNOWN:  # never optimal up to 26 pairs
        value = Fraction(1, u) * match + Fraction(k - 1, u) * miss(n - 1, k - 1, True)
        return value + (new * miss(n, k + 1, False) if n > k else 0)
    value = Fraction(k, u) * match
    if n > k:
        if second == KNOWN:
            value += new * miss(n, k + 1, False)
        else:
            rest = u - 1
            after = Fraction(1, rest) * (sign + _2p_against_greedy(n - 1, k, optimal_moves))
            after += Fraction(k, rest) * miss(n - 1, k, True)
            if n - k >= 2:
                after += Fraction(2 * (n - k - 1), rest) * miss(n, k + 2, False)
            value += new * after
    return value


def two_player_optimal_against_greedy(n: int, exact: bool = True) -> tuple[Number, Number]:
    """``(first, second)``: the optimal player's expected margin (its pairs minus the
    greedy player's) in a game of ``pairs:n`` against the greedy player (the rule of
    :class:`memtab_env.agents.pelmanism_agents.PelmanismGreedyAgent`), when it moves first
    and when it moves second. Greedy never passes, so these games never stall. Optimal play
    guarantees at least :func:`two_player_optimal_value` against any opponent: ``first >=
    V(n, 0)`` and ``second >= -V(n, 0)``."""
    _check_kinds(n, 2)
    first, second = _2p_against_greedy(n, 0, True), _2p_against_greedy(n, 0, False)
    return (first, second) if exact else (float(first), float(second))
