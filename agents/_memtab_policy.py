"""The hand-written MemTab policy kernel shared by ``expert`` and the ``search`` rollouts.

MemTab is a race. Between sensible players nearly every game ends with an instant win
(a pair from flips 1 and 2, then a third card that pairs off a card of the own tableau),
long before the scores matter: in expert self-play about 99 % of games, most of them by a
player who holds a *match* (a known face-down card whose twin is in its own tableau) and
whose first flip hits the twin of a known card. The policy therefore values a table by
who is likely to win that race, and plays a one-turn expectimax over its own remaining
flips against that valuation. Points only break ties.

Knowledge is given as arrays (numba): ``kind[pos]`` the kind of every card the player
knows (``-1`` for a face-down card it does not know; gone positions are ignored),
``status``/``owner`` the table (engine encoding), and ``pool[k]`` the expected number of
kind ``k`` among the ``U`` unknown face-down cards.

Valuation of the table left at the end of the turn (:func:`_value`) for player ``me``:

- ``P(X)`` (:func:`_p_turn_win`): the chance that player ``X``, starting a turn on this
  table and knowing every card known now, wins instantly before its turn passes. With
  ``m`` known matches of its tableau, ``pairs`` known pairs on the table, ``p0`` the
  chance to make a pair from unknown flips (the first flip hitting the twin of a known
  card, or two unknown flips matching) and ``h`` the chance that an unknown third card
  pairs off its tableau: 1 with a pair and a match; ``1 - (1 - p0)^m`` with matches only
  (a failed attempt spends a match on an extra turn while another one is left); with
  pairs only, ``h`` once per pair (each pair is an extra turn) and then one more turn.
- the race (:func:`race_value`): from the player who moves next (``me`` again if a pair
  left the game this turn), players take turns, each winning its turn with probability
  ``eps + (1 - eps) P``; the value is the chance that ``me`` is the first to win
  (``eps``, the weight ``base_rate``, stands for everything the known cards do not show
  yet).
- plus ``live`` times (live kinds of ``me`` - live kinds of the next player), a *live*
  kind being one in the tableau whose twin is still on the table (a future match), and
  ``points`` times the own score.
- one player (the solo score attack): the score alone.

Decisions (:func:`policy_values`, :func:`policy_choose`):

flip 1 (index 0)
    a known pair: flip it (an extra turn for sure, and an instant win when a match is
    known). Else the best of "an unknown card" and "each known card" by expectimax
    over what the card turns out to be, with flips 2 and 3 played as below (``fast``
    mode, used in the search rollouts: an unknown card).
flip 2 (index 1)
    the twin of flip 1 when known. Else the best of "an unknown card" (it may be the
    twin, and it reveals a card to everyone) and "each known card" (it reveals nothing),
    by expectimax over flip 3.
flip 3 (index 2)
    the candidate (each known face-down card, or "an unknown card" valued over the pool)
    with the highest value of the table it leaves: pairing off the tableau after flips 1
    and 2 matched is an instant win, played at once; pairing off without it is an extra
    turn (worth it for a black card, +v, or when other matches remain); taking one card
    of a known pair breaks it (and leaves the other as a match of the own tableau);
    taking a card that matches the next player's tableau denies it; a red card scores.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from memtab_env.games.memtab.rules import KIND_POINTS, NUM_KINDS, NUM_POSITIONS

DOWN, UP, GONE, TABLEAU = 0, 1, 2, 3

#: weights of the valuation, in this order
WEIGHT_NAMES = (
    "base_rate",  # eps: chance of a win on any later turn, beyond the known cards
    "live",  # per live kind of mine minus per live kind of the next player
    "points",  # per point of own score
)
DEFAULT_WEIGHTS = np.array([0.3, 0.01, 0.002], dtype=np.float64)

_POINTS = KIND_POINTS.astype(np.float64)
_NK = NUM_KINDS
_NP = NUM_POSITIONS
_WIN = 2.0  # value of an instant win now (above every other value)


@njit(cache=True)
def _p_turn_win(kd, pool, U, tab, X):
    """Chance that ``X``, starting a turn now, wins instantly before its turn passes.

    ``m`` known cards matching its tableau, ``pairs`` known pairs, ``p0`` the chance to
    make a pair from unknown flips (flip 1 hitting the twin of a known card, or flips 1
    and 2 matching), ``h`` the chance that an unknown third card matches its tableau:
    with a pair and a match it wins; each known pair is an extra turn with a chance
    ``h``, then one more turn; with no pair each match is one attempt at ``p0`` (a
    failed attempt spends a match on an extra turn while another is left); with neither,
    ``p0 h``.
    """
    pairs = 0
    m = 0
    live = 0.0
    single = 0.0
    both = 0.0
    for k in range(_NK):
        c = kd[k]
        if c >= 2:
            pairs += 1
        if tab[X, k]:
            m += c
            live += pool[k]
        if c == 1:
            single += pool[k]
        elif c == 0 and pool[k] > 1.0:
            both += pool[k] * (pool[k] - 1.0)
    if pairs > 0 and m > 0:
        return 1.0
    if U <= 0:
        return 0.0
    p0 = single / U
    if U > 1:
        p0 += both / (U * (U - 1.0))
    p0 = min(p0, 1.0)
    if m > 0:
        return 1.0 - (1.0 - p0) ** m
    last = p0 * min(1.0, live / max(U - 2.0, 1.0))
    if pairs > 0:
        h = min(1.0, live / U)
        return 1.0 - (1.0 - h) ** pairs * (1.0 - last)
    return last


@njit(cache=True)
def _value(kd, pool, U, tab, me, n, cont, pts, w):
    """Value for ``me`` of the table at the end of the turn (module doc)."""
    if n == 1:
        return pts * w[2]
    nxt = (me + 1) % n
    live = 0.0
    for k in range(_NK):
        on_table = kd[k] >= 1 or pool[k] > 1e-9
        if on_table:
            if tab[me, k]:
                live += 1.0
            if tab[nxt, k]:
                live -= 1.0
    extra = w[1] * live + w[2] * pts
    return race_value(kd, pool, U, tab, me, me if cont else nxt, n, w) + extra


@njit(cache=True)
def race_value(kd, pool, U, tab, me, start, n, w):
    """The race: players take turns from ``start`` on, each winning its turn with
    probability eps + (1 - eps) P; the chance that the first winner is ``me``."""
    none_yet = 1.0
    mine = 0.0
    for i in range(n):
        x = (start + i) % n
        p = w[0] + (1.0 - w[0]) * _p_turn_win(kd, pool, U, tab, x)
        if x == me:
            mine = none_yet * p
        none_yet *= 1.0 - p
    return mine / max(1.0 - none_yet, 1e-9)


@njit(cache=True)
def _take(k, kd, pool, U, tab, me, n, pairs_done, pts, w):
    """Value of taking a card of kind ``k`` as flip 3 (kd/pool/U already without it)."""
    if tab[me, k]:
        if pairs_done > 0 and n > 1:
            return _WIN
        tab[me, k] = False
        v = _value(kd, pool, U, tab, me, n, True, pts - _POINTS[k], w)
        tab[me, k] = True
        return v
    tab[me, k] = True
    v = _value(kd, pool, U, tab, me, n, pairs_done > 0, pts + _POINTS[k], w)
    tab[me, k] = False
    return v


@njit(cache=True)
def _best_flip3(kd_down, kd, pool, U, tab, me, n, pairs_done, pts, w, vals):
    """Best flip-3 value; ``vals[k]`` gets the value of taking a known card of kind k
    (-inf when none is face down) and ``vals[_NK]`` that of an unknown card.

    kd_down: known face-down cards (the candidates) per kind; kd: known cards that will
    be face down after the turn (kd_down plus the cards face up now)."""
    best = -np.inf
    for k in range(_NK):
        vals[k] = -np.inf
        if kd_down[k] >= 1:
            kd[k] -= 1
            v = _take(k, kd, pool, U, tab, me, n, pairs_done, pts, w)
            kd[k] += 1
            vals[k] = v
            if v > best:
                best = v
    vals[_NK] = -np.inf
    if U >= 1:
        total = 0.0
        acc = 0.0
        for k in range(_NK):
            q = pool[k]
            if q <= 1e-9:
                continue
            pool[k] = max(q - 1.0, 0.0)
            acc += q * _take(k, kd, pool, U - 1, tab, me, n, pairs_done, pts, w)
            pool[k] = q
            total += q
        v = acc / total if total > 0 else -np.inf
        vals[_NK] = v
        if v > best:
            best = v
    return best


@njit(cache=True)
def _flip2_options(x, kd_down, kd, pool, U, tab, me, n, pts, w, vals, opt):
    """Values of flip 2 after a flip 1 of kind ``x`` (face up now, twin not known face
    down): ``opt[k]`` for flipping a known card of kind k, ``opt[_NK]`` for an unknown
    card. Returns the best."""
    best = -np.inf
    # flipping a known card of kind k only takes that card away from the flip-3
    # candidates (it goes back face down, still known): the flip-3 values of the other
    # candidates do not change, so one valuation serves every k
    _best_flip3(kd_down, kd, pool, U, tab, me, n, 0, pts, w, vals)
    for k in range(_NK):
        opt[k] = -np.inf
        if kd_down[k] >= 1:
            v = -np.inf
            for j in range(_NK + 1):
                if (j != k or kd_down[k] >= 2) and vals[j] > v:
                    v = vals[j]
            opt[k] = v
            if v > best:
                best = v
    opt[_NK] = -np.inf
    if U >= 1:
        total = 0.0
        acc = 0.0
        for k in range(_NK):
            q = pool[k]
            if q <= 1e-9:
                continue
            pool[k] = max(q - 1.0, 0.0)
            if k == x:  # the twin: both leave the game
                kd[x] -= 1
                v = _best_flip3(kd_down, kd, pool, U - 1, tab, me, n, 1, pts, w, vals)
                kd[x] += 1
            else:  # face up now, known face down after the turn
                kd[k] += 1
                v = _best_flip3(kd_down, kd, pool, U - 1, tab, me, n, 0, pts, w, vals)
                kd[k] -= 1
            pool[k] = q
            acc += q * v
            total += q
        v = acc / total if total > 0 else -np.inf
        opt[_NK] = v
        if v > best:
            best = v
    return best


@njit(cache=True)
def _flip1_options(kd_down, kd, pool, U, tab, me, n, pts, w, vals, opt, opt2):
    """Values of flip 1 when no known pair is on the table: ``opt[k]`` for a known card
    of kind k, ``opt[_NK]`` for an unknown card. Returns the best."""
    best = -np.inf
    for k in range(_NK):
        opt[k] = -np.inf
        if kd_down[k] >= 1:
            kd_down[k] -= 1
            v = _flip2_options(k, kd_down, kd, pool, U, tab, me, n, pts, w, vals, opt2)
            kd_down[k] += 1
            opt[k] = v
            if v > best:
                best = v
    opt[_NK] = -np.inf
    if U >= 1:
        total = 0.0
        acc = 0.0
        for k in range(_NK):
            q = pool[k]
            if q <= 1e-9:
                continue
            pool[k] = max(q - 1.0, 0.0)
            if kd_down[k] >= 1:  # its twin is known: flip 2 takes the pair
                kd_down[k] -= 1
                kd[k] -= 1
                v = _best_flip3(kd_down, kd, pool, U - 1, tab, me, n, 1, pts, w, vals)
                kd_down[k] += 1
                kd[k] += 1
            else:
                kd[k] += 1
                v = _flip2_options(k, kd_down, kd, pool, U - 1, tab, me, n, pts, w, vals, opt2)
                kd[k] -= 1
            pool[k] = q
            acc += q * v
            total += q
        v = acc / total if total > 0 else -np.inf
        opt[_NK] = v
        if v > best:
            best = v
    return best


@njit(cache=True)
def policy_values(kind, status, owner, me, n, flip, pool, w, fast, values):
    """The flip (a position) of the player ``me`` on turn; see the module docstring.

    kind: int8[28] known kinds (-1 unknown); status, owner: the table; flip: 0, 1, 2;
    pool: float64[14] expected kinds among the unknown face-down cards; w: weights;
    fast: flip 1 without the expectimax (a known pair, else an unknown card), as in the
    search rollouts. ``values`` (float64[15]) receives the value of flipping a known card
    of each kind (index = kind) and of an unknown card (index 14) when the decision was
    valued, -inf for options that do not exist or were not valued.
    """
    for k in range(_NK + 1):
        values[k] = -np.inf
    tab = np.zeros((n, _NK), dtype=np.bool_)
    kd_down = np.zeros(_NK, dtype=np.int64)
    kd = np.zeros(_NK, dtype=np.int64)
    first_pos = np.full(_NK, -1, dtype=np.int64)
    pts = 0.0
    U = 0
    first_unknown = -1
    first_down = -1
    up_kind = -1
    n_up = 0
    for p in range(_NP):
        s = status[p]
        k = kind[p]
        if s == TABLEAU:
            tab[owner[p], k] = True
            if owner[p] == me:
                pts += _POINTS[k]
        elif s == UP:
            kd[k] += 1
            up_kind = k
            n_up += 1
        elif s == DOWN:
            if first_down < 0:
                first_down = p
            if k >= 0:
                kd_down[k] += 1
                kd[k] += 1
                if first_pos[k] < 0:
                    first_pos[k] = p
            else:
                U += 1
                if first_unknown < 0:
                    first_unknown = p
    pool = pool.copy()
    vals = np.empty(_NK + 1, dtype=np.float64)
    opt2 = np.empty(_NK + 1, dtype=np.float64)
    if flip == 0:
        best = -1
        for k in range(_NK):
            if kd_down[k] >= 2 and (best < 0 or first_pos[k] < best):
                best = first_pos[k]
        if best >= 0:
            return best
        if fast and first_unknown >= 0:
            return first_unknown
        _flip1_options(kd_down, kd, pool, U, tab, me, n, pts, w, vals, values, opt2)
    elif flip == 1:
        if up_kind >= 0 and kd_down[up_kind] >= 1:
            return first_pos[up_kind]
        _flip2_options(up_kind, kd_down, kd, pool, U, tab, me, n, pts, w, vals, values)
    else:
        pairs_done = 1 if n_up == 0 else 0
        _best_flip3(kd_down, kd, pool, U, tab, me, n, pairs_done, pts, w, values)
    pick = -1
    for k in range(_NK + 1):
        if values[k] > -np.inf and (pick < 0 or values[k] > values[pick]):
            pick = k
    if pick == _NK:
        return first_unknown
    if pick >= 0:
        return first_pos[pick]
    return first_down


@njit(cache=True)
def policy_choose(kind, status, owner, me, n, flip, pool, w, fast):
    """:func:`policy_values` without the values."""
    values = np.empty(_NK + 1, dtype=np.float64)
    return policy_values(kind, status, owner, me, n, flip, pool, w, fast, values)
