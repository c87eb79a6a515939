"""Numba kernels of the batched Memory: The Board Game: B games as rows of int32 matrices.

The rules are the scalar engine's own kernels (:mod:`memtab_env.games.memory_board.rules_kernels`),
called on row ``i`` of the state matrix, whose first columns are the rules' state row;
this module adds what a batch keeps beside it: the memory models' clocks and bits, the
deal from each slot's seed stream, the action cap, the observation and the ``random`` and
``greedy`` opponents. :func:`encode_row` re-expresses ``MemoryBoardEncoder.encode`` and
:func:`greedy_action` ``MemoryBoardGreedyAgent``; ``tests/test_batched_equals_scalar.py``
and ``tests/test_batched_engine_equals_scalar.py`` hold them equal to the scalar view
step for step. The deal, the generator streams and the forgetting streams are those of
every game (:mod:`memtab_env.vector.batch_kernels`, the same columns of the generator
matrix; the memory models of :mod:`memtab_env.vector.memory_kernels`), and the loops of
the engine and the single-agent view are every game's (:mod:`memtab_env.vector.row_loops`,
compiled over this module's row kernels as :data:`loops`).

The board is data: its arrays are kernel arguments (``land``: landscape of every space,
``kland``: landscape of every picture, ``adj``: int8 side adjacency, ``nbr``: side
neighbours, ``supply0``: the trunks of size 1..4 at the start). ``P`` spaces, ``K``
pictures, ``L`` landscapes, ``n`` seats; actions ``0..P-1`` flip, ``P..2P-1`` place,
``2P`` end a return, ``2P+1`` pass (:mod:`memtab_env.games.memory_board.rules`).

State matrix ``st`` (int32, one row per game)::

    [0, HEAD + 4P)     the rules' state row (``rules_kernels``); in the batch OVER is 0
                       live, 1 over by the rules, 2 truncated at the AEC env's
                       ``max_game_length``
    SEAT               (the rules' spare column) the learner's seat (single-agent view)
    [HEAD + 4P, +nP)   decay memory only: remembered bit of each (observer, space)
    then [+nP)         greedy memory: the picture seat s's observations showed at each
                       space, -1 unknown (``MemoryBoardGreedyAgent.seen``)

Time matrix ``tm`` (int32, one row per game)::

    CLOCK              flips (= reveals) so far (``Memory.time``)
    ACTIONS            actions so far (the AEC env's transitions)
    [LASTACT, +4)      CLOCK before each seat's latest action (``none``'s threshold)
    [RTIME, +P)        CLOCK of space s's latest reveal (1-based), 0 never
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from memtab_env.boards import MAX_RETURN
from memtab_env.games.memory_board import rules_kernels as rk
from memtab_env.games.memory_board.rules_kernels import (
    CURRENT,
    FINAL_LEFT,
    HEAD,
    LAST_PAIR,
    MAX_PLAYERS,
    NPLACED,
    OVER,
    PHASE,
    RETURNING,
    STAGE,
    SUPPLY,
    TURN,
    TURN_OVER,
)
from memtab_env.vector import batch_kernels as bt
from memtab_env.vector import memory_kernels as mm
from memtab_env.vector import rng as rn
from memtab_env.vector.numba_cache import invalidate_stale_cache
from memtab_env.vector.row_loops import column_row_kernels, compile_row_loops, counter_row_kernels

#: the scalar engine's rules kernels themselves, compiled for inlining into the batched
#: loops (numba then drops the reference counting of the row view that a call would pay)
_rules_apply = njit(inline="always")(rk.apply.py_func)
_rules_reset = njit(inline="always")(rk.reset.py_func)
_rules_legal = njit(inline="always")(rk.legal.py_func)
_rules_tree = njit(inline="always")(rk.tree.py_func)
_winner_bits = njit(inline="always")(rk.winner_bits.py_func)

SEAT = rk.SPARE
OVER_RULES = 1
OVER_TRUNCATED = 2
# -- time matrix (int32) columns ---------------------------------------------------------
CLOCK = 0
ACTIONS = 1
LASTACT = 2
RTIME = LASTACT + MAX_PLAYERS
#: observation blocks after the per-space ones: phase one-hot and stage one-hot sizes
NUM_PHASES = 2 + (MAX_RETURN - 1)
NUM_STAGES = 3


def state_width(num_spaces: int, num_players: int, decay: bool) -> int:
    """Columns of the state matrix."""
    return rk.state_size(num_spaces) + num_spaces * num_players * (2 if decay else 1)


def time_width(num_spaces: int) -> int:
    """Columns of the time matrix."""
    return RTIME + num_spaces


@njit(cache=True)
def decay_col(observer: int, P: int) -> int:
    return HEAD + 4 * P + P * observer


@njit(cache=True)
def seen_col(seat: int, P: int, n: int, decay: bool) -> int:
    return HEAD + 4 * P + (P * n if decay else 0) + P * seat


# =====================================================================================
# one game: row i
# =====================================================================================
@njit(cache=True)
def clear_game(st: np.ndarray, tm: np.ndarray, i: int, P: int, n: int, first: int,
               supply0: np.ndarray, decay: bool) -> None:
    """Everything but the layout as a fresh ``MemoryBoardState`` (``rules_kernels.reset``),
    and fresh memories."""
    _rules_reset(st, i, P, first, supply0)
    for j in range(tm.shape[1]):
        tm[i, j] = 0
    seen = seen_col(0, P, n, decay)
    for j in range(HEAD + 4 * P, seen):
        st[i, j] = 0
    for j in range(seen, seen + P * n):
        st[i, j] = -1


@njit(cache=True)
def new_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, game_seed: np.uint64,
             P: int, n: int, first: int, supply0: np.ndarray, p_forget: float | None) -> None:
    """The game with seed ``game_seed`` in slot ``i``: ``default_rng(game_seed)
    .permutation(deck)`` (``MemoryBoard.new_game``), forgetting streams as the AEC env's."""
    for k in range(P // 2):  # the deck: every picture twice, in picture order
        st[i, HEAD + 2 * k] = k
        st[i, HEAD + 2 * k + 1] = k
    bt.deal(st, rg, i, game_seed, HEAD, P)
    clear_game(st, tm, i, P, n, first, supply0, p_forget is not None)
    bt.seed_memories(rg, i, game_seed, n, p_forget)


@njit(cache=True)
def next_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, P: int, n: int,
              first: int, supply0: np.ndarray, p_forget: float | None) -> None:
    """The slot's next game: its seed is the next draw of the seed stream."""
    rg[i, bt.R_GAMES] += np.uint64(1)
    new_game(st, tm, rg, i, rn.next_seed(rg, i, bt.R_SEEDS), P, n, first, supply0, p_forget)


@njit(cache=True, inline="always")
def tree(st: np.ndarray, i: int, seat: int) -> int:
    """Tree height of ``seat`` (``rules_kernels.tree``)."""
    return _rules_tree(st, i, seat)


@njit(cache=True)
def apply(st: np.ndarray, tm: np.ndarray, i: int, a: int, P: int, n: int, land: np.ndarray,
          kland: np.ndarray, children: bool, max_turns: int, max_len: int) -> int:
    """Action ``a`` (legal: the caller checked) for the seat on turn with the rules'
    ``apply`` and the AEC env's truncation at ``max_len`` actions. Returns the result
    bits."""
    code = _rules_apply(st, i, a, P, n, land, kland, children, max_turns)
    actions = tm[i, ACTIONS] + 1
    tm[i, ACTIONS] = actions
    if st[i, OVER] == 0 and actions >= max_len:
        st[i, OVER] = OVER_TRUNCATED
    return code


@njit(cache=True)
def remember(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, a: int, actor: int, P: int,
             n: int, p_forget: float | None) -> None:
    """The memory bookkeeping of the AEC env after seat ``actor``'s action ``a``
    (``Memory.on_action``: a flip reveals its card; the other actions reveal nothing)."""
    tm[i, LASTACT + actor] = tm[i, CLOCK]
    if a < P:
        mm.remember_reveal(st, rg, i, HEAD + 4 * P, a, P, n, p_forget, bt.R_MEM)
        clock = tm[i, CLOCK] + 1
        tm[i, CLOCK] = clock
        tm[i, RTIME + a] = clock


@njit(cache=True, inline="always")
def legal_row(st: np.ndarray, i: int, out: np.ndarray, P: int, land: np.ndarray,
              kland: np.ndarray, adj: np.ndarray, L: int) -> int:
    """``rules_kernels.legal`` of game ``i`` into ``out[i]``; returns the number of legal
    actions."""
    return _rules_legal(st, i, out, P, land, kland, adj, L)


@njit(cache=True, inline="always")
def memory_threshold(tm: np.ndarray, i: int, observer: int, mem: int, window: int) -> int:
    """:func:`~memtab_env.vector.memory_kernels.threshold` of ``observer`` in game ``i``."""
    return mm.threshold(mem, window, tm[i, CLOCK], tm[i, LASTACT + observer])


@njit(cache=True, inline="always")
def visible_picture(st: np.ndarray, tm: np.ndarray, i: int, p: int, P: int, thr: int,
                    decay: bool, dcol: int) -> int:
    """The picture the observer sees at space ``p`` (face up, or face down and
    remembered), -1 if none."""
    s = st[i, HEAD + P + p]
    if s == rk.UP:
        return st[i, HEAD + p]
    if s == rk.DOWN:
        rem = tm[i, RTIME + p] > thr
        if decay:
            rem = rem or st[i, dcol + p] != 0
        if rem:
            return st[i, HEAD + p]
    return -1


@njit(cache=True)
def encode_row(st: np.ndarray, tm: np.ndarray, i: int, observer: int, out: np.ndarray, P: int,
               K: int,
               n: int, land: np.ndarray, kland: np.ndarray, L: int, mem: int,
               window: int) -> None:
    """``MemoryBoardEncoder.encode(state, observer, remembered)`` into ``out[i]`` (the
    index table is the encoder's docstring)."""
    for j in range(out.shape[1]):
        out[i, j] = 0
    pic = 4 * P
    taken = pic + P * K
    lcol = taken + K
    ret = lcol + P * L
    col = ret + P
    trees = col + n * L
    sup = trees + n
    phase = sup + MAX_RETURN
    stage = phase + NUM_PHASES
    fdone = stage + NUM_STAGES
    turn = fdone + n
    thr = memory_threshold(tm, i, observer, mem, window)
    decay = mem == mm.MEM_DECAY
    dcol = decay_col(observer, P)
    for p in range(P):
        s = st[i, HEAD + P + p]
        out[i, 4 * p + s] = 1
        k = visible_picture(st, tm, i, p, P, thr, decay, dcol)
        if k >= 0:
            out[i, pic + p * K + k] = 1
        if s == rk.FREE or s == rk.PLACED:
            out[i, taken + st[i, HEAD + p]] = 1
        out[i, lcol + p * L + land[p]] = 1
        h = st[i, HEAD + 2 * P + p]
        if h >= 0:
            rel = (h - observer + n) % n
            out[i, col + rel * L + kland[st[i, HEAD + p]]] += 1
    for j in range(st[i, NPLACED]):
        out[i, ret + st[i, RETURNING + j]] = 1
    for j in range(n):
        out[i, trees + (j - observer + n) % n] = tree(st, i, j)
    for j in range(MAX_RETURN):
        out[i, sup + j] = st[i, SUPPLY + j]
    if st[i, OVER] == 0:
        ph = st[i, PHASE]
        if ph == rk.CHOOSE:
            out[i, phase] = 1
        elif ph == rk.FLIP2:
            out[i, phase + 1] = 1
        else:
            out[i, phase + 1 + st[i, NPLACED]] = 1
        out[i, turn + (st[i, CURRENT] - observer + n) % n] = 1
    out[i, stage + st[i, STAGE]] = 1
    if st[i, STAGE] == rk.FINAL:
        for k in range(n - st[i, FINAL_LEFT]):
            seat = (st[i, LAST_PAIR] + k) % n
            out[i, fdone + (seat - observer + n) % n] = 1


@njit(cache=True)
def random_action(st: np.ndarray, rg: np.ndarray, i: int, scratch: np.ndarray, P: int,
                  land: np.ndarray, kland: np.ndarray, adj: np.ndarray, L: int, o: int) -> int:
    """``MemoryBoardRandomAgent.act``: ``legal[rng.integers(len(legal))]`` from the stream at
    column ``o`` (the mask is written into ``scratch[i]``)."""
    count = legal_row(st, i, scratch, P, land, kland, adj, L)
    j = rn.integers_small(rg, i, o, count)
    for a in range(2 * P + 2):
        if scratch[i, a]:
            if j == 0:
                return a
            j -= 1
    return -1


@njit(cache=True)
def trunk_for(k: int, st: np.ndarray, i: int) -> int:
    """``memory_board_agents.trunk_for``: the trunk a return of ``k`` cards earns now."""
    for size in range(min(k, MAX_RETURN), 0, -1):
        if st[i, SUPPLY + size - 1] > 0:
            return size
    return 0


@njit(cache=True)
def _options(group: np.ndarray, m: int, free: np.ndarray, nbr: np.ndarray, out: np.ndarray) -> int:
    """The free side neighbours of ``group[:m]`` not in it, ascending, into ``out``."""
    cnt = 0
    for j in range(m):
        for d in range(nbr.shape[1]):
            t = nbr[group[j], d]
            if t < 0 or not free[t]:
                continue
            dup = False
            for q in range(m):
                dup |= group[q] == t
            for q in range(cnt):
                dup |= out[q] == t
            if dup:
                continue
            q = cnt
            while q > 0 and out[q - 1] > t:  # insertion keeps them sorted
                out[q] = out[q - 1]
                q -= 1
            out[q] = t
            cnt += 1
    return cnt


@njit(cache=True)
def best_group(free: np.ndarray, budget: np.ndarray, start: np.ndarray, ns: int, limit: int,
               land: np.ndarray, nbr: np.ndarray, best: np.ndarray) -> int:
    """``memory_board_agents.best_group`` into ``best``; returns its length. The same
    depth-first search in the same order (seeds, then sorted extensions), without the
    agent's memo of visited sets: a set met again only leads to sets already met, which
    can neither be larger than the best so far nor reach the limit first, so the result
    is the same."""
    left = budget.copy()
    group = np.empty(MAX_RETURN, dtype=np.int64)
    opts = np.empty((MAX_RETURN + 1, 4 * MAX_RETURN), dtype=np.int64)
    cnt = np.zeros(MAX_RETURN + 1, dtype=np.int64)
    idx = np.zeros(MAX_RETURN + 1, dtype=np.int64)
    for j in range(ns):
        group[j] = start[j]
        best[j] = start[j]
    best_len = ns
    P = free.shape[0]
    seeds = 1 if ns > 0 else P
    for s0 in range(seeds):
        m0 = ns
        if ns == 0:
            if not free[s0] or left[land[s0]] <= 0:
                continue
            left[land[s0]] -= 1
            group[0] = s0
            m0 = 1
        m = m0
        done = False
        while True:  # visit group[:m]
            if m > best_len:
                for j in range(m):
                    best[j] = group[j]
                best_len = m
            if m >= limit:
                done = True
                break
            cnt[m] = _options(group, m, free, nbr, opts[m])
            idx[m] = 0
            descended = False
            while not descended:
                if idx[m] < cnt[m]:
                    t = opts[m, idx[m]]
                    idx[m] += 1
                    if left[land[t]] > 0:
                        left[land[t]] -= 1
                        group[m] = t
                        m += 1
                        descended = True
                elif m == m0:
                    break
                else:  # back to the parent, undoing its last extension
                    m -= 1
                    left[land[group[m]]] += 1
            if not descended:
                break
        if done:
            break
        if ns == 0:
            left[land[s0]] += 1
    return best_len


@njit(cache=True)
def _plan(free: np.ndarray, budget: np.ndarray, start: np.ndarray, ns: int, land: np.ndarray,
          nbr: np.ndarray, best: np.ndarray, st: np.ndarray, i: int) -> int:
    """``MemoryBoardGreedyAgent._plan``: the smallest group (from ``start``) that earns the
    best trunk reachable, into ``best``; returns its length."""
    g = best_group(free, budget, start, ns, MAX_RETURN, land, nbr, best)
    if g <= ns:
        return g
    trunk = trunk_for(g, st, i)
    size = g
    for k in range(1, g + 1):
        if trunk_for(k, st, i) == trunk:
            size = k
            break
    size = max(size, ns)
    if size < g:
        g = best_group(free, budget, start, ns, size, land, nbr, best)
    return g


@njit(cache=True)
def _unknown_flip(st: np.ndarray, i: int, scratch: np.ndarray, P: int, seen: int) -> int:
    """The lowest legal flip whose picture the seat has not seen, else the lowest legal
    flip (-1 if none)."""
    for p in range(P):
        if scratch[i, p] and st[i, seen + p] < 0:
            return p
    for p in range(P):
        if scratch[i, p]:
            return p
    return -1


@njit(cache=True)
def greedy_action(st: np.ndarray, tm: np.ndarray, i: int, scratch: np.ndarray, P: int, n: int,
                  land: np.ndarray,
                  kland: np.ndarray, adj: np.ndarray, nbr: np.ndarray, L: int, mem: int,
                  window: int) -> int:
    """``MemoryBoardGreedyAgent.act`` of the seat on turn in game ``i``: its observation
    under the memory model updates its own memory (the seat's ``seen`` row), then the
    agent's rule (:mod:`memtab_env.agents.memory_board_agents`) on what it has seen.
    The legal mask is written into ``scratch[i]``."""
    seat = st[i, CURRENT]
    legal_row(st, i, scratch, P, land, kland, adj, L)
    thr = memory_threshold(tm, i, seat, mem, window)
    decay = mem == mm.MEM_DECAY
    dcol = decay_col(seat, P)
    seen = seen_col(seat, P, n, decay)
    scol = HEAD + P
    for p in range(P):
        k = visible_picture(st, tm, i, p, P, thr, decay, dcol)
        if k >= 0:
            st[i, seen + p] = k
    phase = st[i, PHASE]
    stage = st[i, STAGE]
    if phase == rk.FLIP2:
        up = -1
        for p in range(P):
            if st[i, scol + p] == rk.UP:
                up = p
                break
        want = st[i, seen + up] if up >= 0 else -2
        for p in range(P):
            if scratch[i, p] and st[i, seen + p] == want:
                return p
        return _unknown_flip(st, i, scratch, P, seen)
    free = np.zeros(P, dtype=np.bool_)
    for p in range(P):
        free[p] = st[i, scol + p] == rk.FREE and (phase != rk.CHOOSE or scratch[i, P + p] != 0)
    budget = np.zeros(L, dtype=np.int64)
    for c in range(P):
        if st[i, HEAD + 2 * P + c] == seat:
            budget[kland[st[i, HEAD + c]]] += 1
    ns = st[i, NPLACED]
    start = np.empty(MAX_RETURN, dtype=np.int64)
    for j in range(ns):  # the spaces of the return so far, ascending (as the observation)
        t = st[i, RETURNING + j]
        q = j
        while q > 0 and start[q - 1] > t:
            start[q] = start[q - 1]
            q -= 1
        start[q] = t
    best = np.empty(MAX_RETURN, dtype=np.int64)
    if phase == rk.RETURN:
        g = _plan(free, budget, start, ns, land, nbr, best, st, i)
        for j in range(ns, g):
            if scratch[i, P + best[j]]:
                return P + best[j]
        return 2 * P
    if stage == rk.MAIN:
        counts = np.zeros(P, dtype=np.int64)
        for p in range(P):
            if st[i, scol + p] == rk.DOWN and st[i, seen + p] >= 0:
                counts[st[i, seen + p]] += 1
        for p in range(P):
            if st[i, scol + p] == rk.DOWN and st[i, seen + p] >= 0 and counts[st[i, seen + p]] >= 2:
                return p
        g = _plan(free, budget, start, 0, land, nbr, best, st, i)
        top = trunk_for(MAX_RETURN, st, i)
        if g > 0 and top > 0 and trunk_for(g, st, i) == top:
            return P + best[0]
        return _unknown_flip(st, i, scratch, P, seen)
    g = _plan(free, budget, start, 0, land, nbr, best, st, i)
    if g > 0 and (stage == rk.CHILDREN or trunk_for(g, st, i) > 0):
        return P + best[0]
    if scratch[i, 2 * P + 1]:
        return 2 * P + 1
    for a in range(2 * P + 2):
        if scratch[i, a]:
            return a
    return -1


# =====================================================================================
# the row kernels of the batched loops (memtab_env.vector.row_loops):
# st, tm (zero-width), G = (P, K, n, first, land, kland, adj, nbr, L, children, max_turns,
# max_len, mem, window), A = (supply0,)
# =====================================================================================
row_ended, row_truncate, row_turn, row_seat, row_set_seat = column_row_kernels(
    OVER, CURRENT, SEAT
)


@njit(cache=True, inline="always")
def row_reset(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, seed: np.uint64,
              G: tuple, A: tuple, p_forget: float | None) -> None:
    bt.seed_slot(rg, i, seed)
    new_game(st, tm, rg, i, seed, G[0], G[2], G[3], A[0], p_forget)


@njit(cache=True, inline="always")
def row_next_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, G: tuple, A: tuple,
                  p_forget: float | None) -> None:
    next_game(st, tm, rg, i, G[0], G[2], G[3], A[0], p_forget)


@njit(cache=True, inline="always")
def row_flip(st: np.ndarray, tm: np.ndarray, i: int, a: int, G: tuple) -> bool:
    """Any action (flip, place, end a return, pass); True when it ended the turn."""
    code = apply(st, tm, i, a, G[0], G[2], G[4], G[5], G[9], G[10], G[11])
    return (code & TURN_OVER) != 0


@njit(cache=True, inline="always")
def row_reveal(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, a: int, actor: int,
               G: tuple, p_forget: float | None) -> None:
    remember(st, tm, rg, i, a, actor, G[0], G[2], p_forget)


@njit(cache=True, inline="always")
def row_score(st: np.ndarray, tm: np.ndarray, i: int, seat: int, G: tuple) -> int:
    """The seat's tree height."""
    return np.int64(tree(st, i, seat))


@njit(cache=True, inline="always")
def row_result_bits(st: np.ndarray, tm: np.ndarray, i: int, G: tuple) -> int:
    return _winner_bits(st, i, G[0], G[2])


@njit(cache=True, inline="always")
def row_greedy(st: np.ndarray, tm: np.ndarray, i: int, scratch: np.ndarray, G: tuple) -> int:
    return greedy_action(st, tm, i, scratch, G[0], G[2], G[4], G[5], G[6], G[7], G[8], G[12],
                         G[13])


@njit(cache=True, inline="always")
def row_random(st: np.ndarray, tm: np.ndarray, vg: np.ndarray, i: int, column: int,
               scratch: np.ndarray, G: tuple) -> int:
    return random_action(st, vg, i, scratch, G[0], G[4], G[5], G[6], G[8], column)


@njit(cache=True, inline="always")
def row_encode(st: np.ndarray, tm: np.ndarray, i: int, observer: int, out: np.ndarray, G: tuple) -> None:
    encode_row(st, tm, i, observer, out, G[0], G[1], G[2], G[4], G[5], G[8], G[12], G[13])


@njit(cache=True, inline="always")
def row_mask(st: np.ndarray, tm: np.ndarray, i: int, masks: np.ndarray, G: tuple) -> None:
    legal_row(st, i, masks, G[0], G[4], G[5], G[6], G[8])


# turns: turns started (``MemoryBoardState.turn``)
row_flips, row_turns = counter_row_kernels(("tm", CLOCK), ("st", TURN))


invalidate_stale_cache(globals(), [rk, rn, bt, mm], "memory_board_batched_kernels.deps")
loops = compile_row_loops(globals(), "memory_board", [rk, rn, bt, mm, sys.modules[__name__]])
