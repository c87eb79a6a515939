"""The exact two-player optimum with perfect memory on decks of pairs: values, plans,
the probability of winning, the stall probability and the margin against greedy (see
the package docstring of :mod:`memtab_env.games.pelmanism.values`)."""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from typing import NamedTuple

from memtab_env.errors import InvalidOptionError
from memtab_env.games.pelmanism.rules import MAX_PAIRS_KINDS
from memtab_env.games.pelmanism.values.solo import Number, _check_kinds

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
