"""Numba kernels of the batched Pelmanism engine: B games as rows of preallocated matrices.

The rules are not here: they are :mod:`memtab_env.games.pelmanism.rules_kernels`, whose
kernels the scalar engine calls on its one-row matrices. The first
:func:`~memtab_env.games.pelmanism.rules_kernels.state_size` columns of ``st`` and the
first :data:`~memtab_env.games.pelmanism.rules_kernels.COUNTS_SIZE` of ``tm`` are the
rules' rows, and the loops call ``rules_kernels.flip`` and ``rules_kernels.legal``
themselves as their ``row_flip`` and ``row_mask``. This module adds what the batch
needs beyond the rules: the deal from the games' streams, the memories and their
bookkeeping (:func:`row_reveal`), the observation (:func:`encode_row`, as
``PelmanismEncoder.encode``) and the ``greedy`` and ``random`` players (as
``agents.pelmanism_agents``). ``tests/test_vector_pelmanism.py`` plays many hundreds of
games of every deck kind, player count and memory model through the batch and through
the scalar engine (and the AEC env) side by side and compares the whole state, masks,
observations, remembered masks, rewards and ends after every flip. The deal, the
generator streams and the memory streams are NumPy's generator itself, bit for bit
(:mod:`memtab_env.vector.rng`), and the reward shares, generator columns and codes are
every game's (:mod:`memtab_env.vector.batch_kernels`), and so are the memory models
(:mod:`memtab_env.vector.memory_kernels`) and the loops of the engine and the
single-agent view (:mod:`memtab_env.vector.row_loops`, compiled over this module's row
kernels as :data:`loops`).

``P`` positions, ``K`` kinds, ``n`` players; the constants tuple ``G`` is the rules'
``(P, K, n, first_player, max_turns)`` then the memory model's ``(mem, window)``.

State matrix ``st`` (int8, one row per game)::

    [0, HEAD + 4P)     the rules' state row (``rules_kernels``), whose spare column
                       SEAT holds the learner's seat (single-agent view; 0 otherwise)
                       and whose OVER is 2 for a game truncated at the flip cap (the
                       AEC env's ``max_game_length``; the rules do not end such a game)
    [HEAD + 4P, +nP)   greedy memory: seat s's row holds the kind each position showed in
                       one of s's greedy observations (``PelmanismGreedyAgent._seen``),
                       -1 unknown; cleared when a game starts (unused under ``perfect``
                       memory, where it would equal "ever revealed": see
                       :func:`greedy_action`)
    [HEAD + (4+n)P, +nP)  decay memory only: remembered bit of each (observer, position)

Time matrix ``tm`` (int32, one row per game)::

    TURNS              the rules' counts row: turns completed, extra turns included
    CLOCK              flips (= reveals) so far in this game (``Memory.time``)
    [LASTACT, +n)      CLOCK after each seat's latest flip (``Memory.source``'s ``none``
                       threshold + 1); 6 columns are reserved
    [RTIME, +P)        CLOCK of each position's latest reveal (1-based), 0 never

Generator matrix ``rg`` (uint64): exactly the layout of :mod:`memtab_env.vector.batch_kernels`
(``R_AUX`` auxiliary stream, ``R_SEEDS`` the slot's seed stream, ``R_GAME_SEED``,
``R_GAMES``, ``R_MEM`` the per-observer forgetting streams under ``decay:p``).

Conventions (those of :mod:`memtab_env.vector.batch_kernels`): per-game functions index
``st[i, col]`` rather than take row views; ``p_forget`` is the decay probability or
``None`` (numba compiles the other memory models without the decay code); every kernel
that loops over games is ``*_range(..., lo, hi)`` and releases the GIL.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from memtab_env.games.pelmanism import rules_kernels as rk
from memtab_env.games.pelmanism.rules_kernels import (
    CURRENT,
    DOWN,
    FIRST,
    FLIP,
    FLIPS_PER_TURN,
    GONE,
    HEAD,
    OVER,
    PAIRS,
    TURNS,
    UP,
)
from memtab_env.vector import batch_kernels as _batch_module
from memtab_env.vector import memory_kernels as _memory_module
from memtab_env.vector import rng as _rng_module
from memtab_env.vector.batch_kernels import (
    R_GAMES,
    R_MEM,
    R_SEEDS,
    deal,
    popcount,
    seed_memories,
    seed_slot,
    select_bit,
)
from memtab_env.vector.memory_kernels import MEM_DECAY, MEM_PERFECT, remember_reveal, threshold
from memtab_env.vector.numba_cache import invalidate_stale_cache
from memtab_env.vector.rng import integers_small, next_seed
from memtab_env.vector.row_loops import column_row_kernels, compile_row_loops, counter_row_kernels

MAX_PLAYERS = rk.MAX_PLAYERS
# -- state matrix (int8) columns beyond the rules' ------------------------------------
SEAT = rk.SPARE
OVER_RULES = 1
OVER_TRUNCATED = 2
# -- time matrix (int32) columns: the rules' counts row (TURNS), then the clocks -------
CLOCK = rk.COUNTS_SIZE
LASTACT = CLOCK + 1
RTIME = LASTACT + MAX_PLAYERS


def kinds_col(p: int) -> int:
    return HEAD + p


def status_col(p: int) -> int:
    return HEAD + 2 * p


def owner_col(p: int) -> int:
    return HEAD + 3 * p


def seen_col(p: int) -> int:
    return HEAD + 4 * p


def known_col(p: int, n: int) -> int:
    return HEAD + (4 + n) * p


def state_width(num_positions: int, num_players: int, decay: bool) -> int:
    """Columns of the int8 state matrix."""
    p, n = num_positions, num_players
    return HEAD + (4 + n) * p + (n * p if decay else 0)


def time_width(num_positions: int) -> int:
    """Columns of the int32 time matrix."""
    return RTIME + num_positions


def observation_size(num_positions: int, num_kinds: int, num_players: int) -> int:
    """``PelmanismEncoder.size``: ``P (3 + K) + 2 n + 2``."""
    return num_positions * (3 + num_kinds) + 2 * num_players + FLIPS_PER_TURN


# =====================================================================================
# one game: row i of the matrices
# =====================================================================================
@njit(cache=True)
def clear_game(
    st: np.ndarray, tm: np.ndarray, i: int, P: int, n: int, first: int, p_forget: float | None
) -> None:
    """Everything but the deal as a fresh ``PelmanismState``, fresh memories."""
    rk.reset(st, tm, i, P, n, first)
    for p in range(P):
        tm[i, RTIME + p] = 0
    g0 = HEAD + 4 * P
    for j in range(n * P):
        st[i, g0 + j] = -1
    if p_forget is not None:
        k0 = HEAD + (4 + n) * P
        for j in range(n * P):
            st[i, k0 + j] = 0
    for j in range(n):
        tm[i, LASTACT + j] = 0
    tm[i, CLOCK] = 0


@njit(cache=True)
def set_kinds(st: np.ndarray, i: int, card_kind: np.ndarray, P: int) -> None:
    """kinds = ``deck.card_kind[layout]`` (``Pelmanism._state``)."""
    for p in range(P):
        st[i, HEAD + P + p] = card_kind[st[i, HEAD + p]]


@njit(cache=True)
def new_game(
    st: np.ndarray,
    tm: np.ndarray,
    rg: np.ndarray,
    i: int,
    game_seed: np.uint64,
    cards: np.ndarray,
    card_kind: np.ndarray,
    n: int,
    first: int,
    p_forget: float | None,
) -> None:
    """Start the game with seed ``game_seed`` in slot ``i``.

    Deal = ``default_rng(game_seed).permutation(deck.cards)`` (``Pelmanism.new_game``):
    the deck's cards in id order, shuffled.
    """
    P = cards.shape[0]
    for p in range(P):
        st[i, HEAD + p] = cards[p]
    deal(st, rg, i, game_seed, HEAD, P)
    set_kinds(st, i, card_kind, P)
    clear_game(st, tm, i, P, n, first, p_forget)
    seed_memories(rg, i, game_seed, n, p_forget)


@njit(cache=True)
def next_game(
    st: np.ndarray,
    tm: np.ndarray,
    rg: np.ndarray,
    i: int,
    cards: np.ndarray,
    card_kind: np.ndarray,
    n: int,
    first: int,
    p_forget: float | None,
) -> None:
    """Start the slot's next game: its seed is the next draw of the seed stream."""
    rg[i, R_GAMES] += np.uint64(1)
    new_game(st, tm, rg, i, next_seed(rg, i, R_SEEDS), cards, card_kind, n, first, p_forget)


@njit(cache=True)
def reset_slot(
    st: np.ndarray,
    tm: np.ndarray,
    rg: np.ndarray,
    i: int,
    seed: np.uint64,
    cards: np.ndarray,
    card_kind: np.ndarray,
    n: int,
    first: int,
    p_forget: float | None,
) -> None:
    """Explicit reset with ``seed``: the first game's seed is ``seed`` itself."""
    seed_slot(rg, i, seed)
    new_game(st, tm, rg, i, seed, cards, card_kind, n, first, p_forget)


#: the rules' transition, called by the loops themselves
row_flip = rk.flip


@njit(inline="always", cache=True)
def row_reveal(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, pos: int, actor: int,
               G: tuple, p_forget: float | None) -> None:
    """``Memory.on_action(actor, [pos])``: every flip reveals its card."""
    P, n = G[0], G[2]
    remember_reveal(st, rg, i, HEAD + (4 + n) * P, pos, P, n, p_forget, R_MEM)
    clock = tm[i, CLOCK] + 1
    tm[i, CLOCK] = clock
    tm[i, RTIME + pos] = clock
    tm[i, LASTACT + actor] = clock


@njit(cache=True)
def memory_threshold(tm: np.ndarray, i: int, observer: int, mem: int, window: int) -> int:
    """:func:`~memtab_env.vector.memory_kernels.threshold` of ``observer`` in game ``i`` (one
    reveal per flip: the count before its latest flip is one below the clock after it)."""
    before = max(0, np.int64(tm[i, LASTACT + observer]) - 1)
    return threshold(mem, window, np.int64(tm[i, CLOCK]), before)


@njit(inline="always", cache=True)
def remembered_at(
    st: np.ndarray, tm: np.ndarray, i: int, p: int, thr: int, decay: bool, kcol: int
) -> bool:
    """Whether the observer (threshold ``thr``, decay bits at ``kcol``) remembers the card
    at ``p`` (face down or not: callers mask)."""
    return (np.int64(tm[i, RTIME + p]) > thr) | (decay & (st[i, kcol + p] != 0))


@njit(cache=True)
def decay_column(observer: int, P: int, n: int, mem: int) -> int:
    """First column of the observer's decay bits (any valid column for other models)."""
    return HEAD + (4 + n) * P + P * observer if mem == MEM_DECAY else HEAD


@njit(cache=True, inline="always")
def encode_row(
    st: np.ndarray,
    tm: np.ndarray,
    i: int,
    observer: int,
    out: np.ndarray,
    P: int,
    K: int,
    n: int,
    mem: int,
    window: int,
) -> None:
    """``PelmanismEncoder.encode(state, observer, remembered)`` written into ``out[i]``.

    Layout: status one-hot P x 3, card one-hot P x K (face up, taken, or face down and
    remembered), pairs n, flip one-hot 2, turn one-hot n; seats relative to the observer;
    flip and turn all zeros once the game is over by the rules (a game truncated at the
    flip cap is not over: the scalar state shows its flip and turn).
    """
    for j in range(out.shape[1]):
        out[i, j] = 0
    kcol = HEAD + P
    scol = HEAD + 2 * P
    card = 3 * P
    pairs = card + P * K
    flip = pairs + n
    turn = flip + FLIPS_PER_TURN
    thr = memory_threshold(tm, i, observer, mem, window)
    decay = mem == MEM_DECAY
    dcol = decay_column(observer, P, n, mem)
    for p in range(P):
        s = np.int64(st[i, scol + p])
        out[i, 3 * p + s] = 1
        vis = (s != DOWN) | remembered_at(st, tm, i, p, thr, decay, dcol)
        out[i, card + p * K + st[i, kcol + p]] = vis
    for j in range(n):
        rel = j - observer
        if rel < 0:
            rel += n
        out[i, pairs + rel] = st[i, PAIRS + j]
    if st[i, OVER] != OVER_RULES:
        out[i, flip + st[i, FLIP]] = 1
        rel = np.int64(st[i, CURRENT]) - observer
        if rel < 0:
            rel += n
        out[i, turn + rel] = 1


@njit(inline="always", cache=True)
def random_action(st: np.ndarray, rg: np.ndarray, i: int, P: int, o: int) -> int:
    """Uniform legal flip from the stream at column ``o``: the ``integers(count)``-th
    face-down position in position order (``PelmanismRandomAgent.act``). Positions are
    gathered into a bit mask and the bit selected without branches (P <= 52)."""
    scol = HEAD + 2 * P
    down = np.int64(0)  # bit p: position p is face down
    for p in range(P):
        down |= np.int64(st[i, scol + p] == DOWN) << p
    return select_bit(down, integers_small(rg, i, o, popcount(down)))


@njit(inline="always", cache=True)
def _lowest_bit(x: int) -> int:
    """Position of the lowest set bit of a non-zero non-negative ``x``."""
    return popcount((x & -x) - 1)


@njit(cache=True)
def greedy_action(
    st: np.ndarray, tm: np.ndarray, i: int, P: int, n: int, mem: int, window: int
) -> int:
    """``PelmanismGreedyAgent(own_memory=True).act`` of the seat on turn in game ``i``.

    First the seat's observation updates its greedy memory (``_seen``): a card that the
    observation shows (face up, or face down and remembered under the memory model) is
    recorded, a taken card forgotten. Then the rule of :mod:`memtab_env.agents.pelmanism_agents`
    on what the seat knows (a face-down card is known when recorded): first flip, the
    lowest known card of a kind with two or more known face-down cards; second flip, the
    lowest known card of the face-up card's kind; failing that, the lowest unknown
    face-down card, else the lowest face-down card.

    Under ``perfect`` memory every observation shows every card ever revealed, so the
    record of a face-down card is exactly "ever revealed" whatever the seat observed
    before: that case reads the reveal times and leaves the record alone.
    """
    seat = np.int64(st[i, CURRENT])
    kcol = HEAD + P
    scol = HEAD + 2 * P
    seen = HEAD + 4 * P + P * seat
    perfect = mem == MEM_PERFECT
    thr = memory_threshold(tm, i, seat, mem, window)
    decay = mem == MEM_DECAY
    dcol = decay_column(seat, P, n, mem)
    down = np.int64(0)  # bit p: position p is face down
    known = np.int64(0)  # bit p: face down and its kind recorded
    once = np.int64(0)  # bit k: a known face-down card of kind k (twice: two or more)
    twice = np.int64(0)
    for p in range(P):
        s = st[i, scol + p]
        k = np.int64(st[i, kcol + p])
        if perfect:
            kn = k if tm[i, RTIME + p] > 0 else -1
        else:
            shown = (s == UP) | remembered_at(st, tm, i, p, thr, decay, dcol)
            kn = -1 if s == GONE else (k if shown else np.int64(st[i, seen + p]))
            st[i, seen + p] = kn
        is_down = np.int64(s == DOWN)
        kd = is_down & np.int64(kn >= 0)
        down |= is_down << p
        known |= kd << p
        bit = (np.int64(1) << max(kn, 0)) * kd
        twice |= once & bit
        once |= bit
    if st[i, FLIP] == 0:
        wanted = twice
    else:
        wanted = np.int64(1) << st[i, kcol + st[i, FIRST]]
    x = known
    while x != 0:  # the lowest known face-down card of a wanted kind
        p = _lowest_bit(x)
        x &= x - 1
        k = np.int64(st[i, kcol + p]) if perfect else np.int64(st[i, seen + p])
        if (wanted >> k) & 1:
            return p
    unknown = down & ~known
    if unknown != 0:
        return _lowest_bit(unknown)
    return _lowest_bit(down) if down != 0 else -1


# =====================================================================================
# the batched engine
# =====================================================================================
@njit(cache=True, nogil=True)
def set_layouts(st: np.ndarray, indices: np.ndarray, layouts: np.ndarray, card_kind: np.ndarray) -> None:
    """Replace the deals of the fresh games ``indices`` by ``layouts`` (checked card ids)."""
    P = layouts.shape[1]
    for j in range(indices.shape[0]):
        for p in range(P):
            st[indices[j], HEAD + p] = layouts[j, p]
        set_kinds(st, indices[j], card_kind, P)


@njit(cache=True, nogil=True)
def remembered_range(
    st: np.ndarray,
    tm: np.ndarray,
    observers: np.ndarray,
    out: np.ndarray,
    P: int,
    n: int,
    mem: int,
    window: int,
    lo: int,
    hi: int,
) -> None:
    """``Memory.remembered(observer, face_down)`` of each game; observer -1 = on turn."""
    scol = HEAD + 2 * P
    decay = mem == MEM_DECAY
    for i in range(lo, hi):
        o = observers[i] if observers[i] >= 0 else np.int64(st[i, CURRENT])
        thr = memory_threshold(tm, i, o, mem, window)
        dcol = decay_column(o, P, n, mem)
        for p in range(P):
            out[i, p] = (st[i, scol + p] == DOWN) & remembered_at(st, tm, i, p, thr, decay, dcol)


@njit(cache=True, nogil=True)
def greedy_range(
    st: np.ndarray,
    tm: np.ndarray,
    out: np.ndarray,
    P: int,
    n: int,
    mem: int,
    window: int,
    lo: int,
    hi: int,
) -> None:
    """The ``greedy`` policy's flip in games ``lo..hi-1`` (-1 once ended)."""
    for i in range(lo, hi):
        out[i] = greedy_action(st, tm, i, P, n, mem, window) if st[i, OVER] == 0 else -1


# =====================================================================================
# the row kernels of the batched loops (memtab_env.vector.row_loops):
# st, tm, G = (P, K, n, first, mem, window, max_turns), A = (cards, card_kind)
# =====================================================================================
row_ended, row_truncate, row_turn, row_seat, row_set_seat = column_row_kernels(
    OVER, CURRENT, SEAT
)


@njit(cache=True, inline="always")
def row_reset(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, seed: np.uint64,
              G: tuple, A: tuple, p_forget: float | None) -> None:
    reset_slot(st, tm, rg, i, seed, A[0], A[1], G[2], G[3], p_forget)


@njit(cache=True, inline="always")
def row_next_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, G: tuple, A: tuple,
                  p_forget: float | None) -> None:
    next_game(st, tm, rg, i, A[0], A[1], G[2], G[3], p_forget)


@njit(cache=True, inline="always")
def row_score(st: np.ndarray, tm: np.ndarray, i: int, seat: int, G: tuple) -> int:
    return np.int64(st[i, PAIRS + seat])


@njit(cache=True, inline="always")
def row_result_bits(st: np.ndarray, tm: np.ndarray, i: int, G: tuple) -> int:
    return rk.winner_bits(st, i, G[2])


@njit(cache=True, inline="always")
def row_greedy(st: np.ndarray, tm: np.ndarray, i: int, scratch: np.ndarray, G: tuple) -> int:
    return greedy_action(st, tm, i, G[0], G[2], G[5], G[6])


@njit(cache=True, inline="always")
def row_random(st: np.ndarray, tm: np.ndarray, vg: np.ndarray, i: int, column: int,
               scratch: np.ndarray, G: tuple) -> int:
    return random_action(st, vg, i, G[0], column)


@njit(cache=True, inline="always")
def row_encode(st: np.ndarray, tm: np.ndarray, i: int, observer: int, out: np.ndarray, G: tuple) -> None:
    encode_row(st, tm, i, observer, out, G[0], G[1], G[2], G[5], G[6])


#: the rules' legal actions: all zeros once the game has ended (truncated too)
row_mask = rk.legal


# turns: turns completed, extra turns included (``PelmanismState.turns``)
row_flips, row_turns = counter_row_kernels(("tm", CLOCK), ("tm", TURNS))


# the kernels compile in the rules kernels, rng.py, batch_kernels.py and memory_kernels.py
invalidate_stale_cache(
    globals(), [rk, _rng_module, _batch_module, _memory_module],
    "pelmanism_batched_kernels.deps",
)
loops = compile_row_loops(
    globals(), "pelmanism",
    [rk, _rng_module, _batch_module, _memory_module, sys.modules[__name__]],
)
