"""Triples' rules as row kernels: what the shared loops (:mod:`memtab_env.vector.row_loops`)
compile into the game's batched engine and batched view.

State matrix ``st`` (int32, one row per game; ``P`` positions, ``n`` seats)::

    CURRENT, FLIP, UP (+2), OVER (0 live, 1 over, 2 truncated at the flip cap), SEAT,
    CLOCK (flips so far), TURNS (completed), [SCORES, +4), [LASTACT, +4) (CLOCK after
    each seat's latest flip), then [HEAD, +P) kinds, [+P) status, [+P) owner,
    [+P) reveal time (1-based, 0 never), [+nP) decay bits (decay memory only)

The deal, the generator columns, the reward shares and the memory models are every
game's (:mod:`memtab_env.vector.batch_kernels`, :mod:`memtab_env.vector.memory_kernels`).
``tm`` is zero-width; ``G = (P, K, n, first, mem, window)``; ``A = (cards,)``.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from memtab_env.vector import batch_kernels as bt
from memtab_env.vector import memory_kernels as mm
from memtab_env.vector import rng as rn
from memtab_env.vector.row_loops import column_row_kernels, compile_row_loops
from tests.triples_game import rules

DOWN, UP, GONE = rules.DOWN, rules.UP, rules.GONE
CURRENT, FLIP, UP0, OVER, SEAT, CLOCK, TURNS = 0, 1, 2, 4, 5, 6, 7
SCORES = 8
LASTACT = SCORES + 4
HEAD = LASTACT + 4
OVER_RULES, OVER_TRUNCATED = 1, 2


def state_width(num_positions: int, num_players: int, decay: bool) -> int:
    return HEAD + 4 * num_positions + (num_players * num_positions if decay else 0)


@njit(cache=True)
def new_game(st: np.ndarray, rg: np.ndarray, i: int, game_seed: np.uint64, cards: np.ndarray,
             n: int, first: int, p_forget: float | None) -> None:
    """The game with seed ``game_seed``: ``Triples.new_game(default_rng(game_seed))``."""
    P = cards.shape[0]
    rg[i, bt.R_GAME_SEED] = game_seed
    rn.seed_pcg64_buffered(rg, i, bt.R_AUX, game_seed, 0, 0, 0)
    for p in range(P):
        st[i, HEAD + p] = cards[p]
    rn.shuffle_row(rg, i, bt.R_AUX, st, i, HEAD, P)
    rn.seed_pcg64_buffered(rg, i, bt.R_AUX, game_seed, 1, bt.AUX_KEY, 0)
    for j in range(HEAD):
        st[i, j] = 0
    st[i, CURRENT] = first
    st[i, UP0] = -1
    st[i, UP0 + 1] = -1
    for p in range(P):
        st[i, HEAD + P + p] = DOWN
        st[i, HEAD + 2 * P + p] = -1
    for j in range(HEAD + 3 * P, st.shape[1]):
        st[i, j] = 0
    if p_forget is not None:
        for o in range(n):
            rn.seed_pcg64(rg, i, bt.R_MEM + rn.PCG_WORDS_64 * o, game_seed, 2, bt.MEMORY_KEY, o)


@njit(cache=True, inline="always")
def row_flip(st: np.ndarray, tm: np.ndarray, i: int, pos: int, G: tuple) -> bool:
    """``Triples.apply_inplace`` (legal ``pos``); True when the flip ended the turn."""
    P, n = G[0], G[2]
    player = st[i, CURRENT]
    s0 = HEAD + P
    ended = False
    if st[i, FLIP] < 2:
        st[i, s0 + pos] = UP
        st[i, UP0 + st[i, FLIP]] = pos
        st[i, FLIP] += 1
    else:
        a, b = np.int64(st[i, UP0]), np.int64(st[i, UP0 + 1])
        st[i, UP0] = -1
        st[i, UP0 + 1] = -1
        st[i, FLIP] = 0
        st[i, TURNS] += 1
        ended = True
        k = st[i, HEAD + pos]
        if st[i, HEAD + a] == k and st[i, HEAD + b] == k:
            for q in (a, b, pos):
                st[i, s0 + q] = GONE
                st[i, s0 + P + q] = player
            st[i, SCORES + player] += 1
            left = 0
            for q in range(P):
                left += st[i, s0 + q] != GONE
            if left == 0:
                st[i, OVER] = OVER_RULES
        else:
            st[i, s0 + a] = DOWN
            st[i, s0 + b] = DOWN
            st[i, CURRENT] = (player + 1) % n
    return ended


@njit(cache=True, inline="always")
def row_reveal(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, pos: int, actor: int,
               G: tuple, p_forget: float | None) -> None:
    """``Memory.on_action(actor, [pos])``: every flip reveals its card."""
    P, n = G[0], G[2]
    mm.remember_reveal(st, rg, i, HEAD + 4 * P, pos, P, n, p_forget, bt.R_MEM)
    clock = st[i, CLOCK] + 1
    st[i, CLOCK] = clock
    st[i, HEAD + 3 * P + pos] = clock
    st[i, LASTACT + actor] = clock


@njit(cache=True)
def encode_row(st: np.ndarray, i: int, observer: int, out: np.ndarray, P: int, K: int, n: int,
               mem: int, window: int) -> None:
    """``TriplesEncoder.encode(state, observer, remembered)`` into ``out[i]``."""
    for j in range(out.shape[1]):
        out[i, j] = 0
    card, score = 3 * P, 3 * P + P * K
    flip, turn = score + n, score + n + 3
    thr = mm.threshold(mem, window, st[i, CLOCK], max(0, st[i, LASTACT + observer] - 1))
    decay = mem == mm.MEM_DECAY
    dcol = HEAD + 4 * P + P * observer
    for p in range(P):
        s = st[i, HEAD + P + p]
        out[i, 3 * p + s] = 1
        seen = (st[i, HEAD + 3 * P + p] > thr) or (decay and st[i, dcol + p] != 0)
        out[i, card + p * K + st[i, HEAD + p]] = (s != DOWN) or seen
    for j in range(n):
        out[i, score + (j - observer + n) % n] = st[i, SCORES + j]
    if st[i, OVER] != OVER_RULES:
        out[i, flip + st[i, FLIP]] = 1
        out[i, turn + (st[i, CURRENT] - observer + n) % n] = 1


# -- the row kernels of the batched loops -------------------------------------------------
row_ended, row_truncate, row_turn, row_seat, row_set_seat = column_row_kernels(
    OVER, CURRENT, SEAT
)


@njit(cache=True, inline="always")
def row_reset(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, seed: np.uint64,
              G: tuple, A: tuple, p_forget: float | None) -> None:
    bt.seed_slot(rg, i, seed)
    new_game(st, rg, i, seed, A[0], G[2], G[3], p_forget)


@njit(cache=True, inline="always")
def row_next_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, G: tuple, A: tuple,
                  p_forget: float | None) -> None:
    rg[i, bt.R_GAMES] += np.uint64(1)
    new_game(st, rg, i, rn.next_seed(rg, i, bt.R_SEEDS), A[0], G[2], G[3], p_forget)






@njit(cache=True, inline="always")
def row_score(st: np.ndarray, tm: np.ndarray, i: int, seat: int, G: tuple) -> int:
    return np.int64(st[i, SCORES + seat])


@njit(cache=True, inline="always")
def row_result_bits(st: np.ndarray, tm: np.ndarray, i: int, G: tuple) -> int:
    n = G[2]
    best = st[i, SCORES]
    for j in range(1, n):
        best = max(best, st[i, SCORES + j])
    bits = 0
    for j in range(n):
        if st[i, SCORES + j] == best:
            bits |= 1 << (1 + j)
    return bits


@njit(cache=True, inline="always")
def row_greedy(st: np.ndarray, tm: np.ndarray, i: int, scratch: np.ndarray, G: tuple) -> int:
    raise ValueError("Triples has no greedy opponent (the vector env refuses one)")


@njit(cache=True, inline="always")
def row_random(st: np.ndarray, tm: np.ndarray, vg: np.ndarray, i: int, column: int,
               scratch: np.ndarray, G: tuple) -> int:
    """``legal[rng.integers(len(legal))]`` over the face-down positions."""
    P = G[0]
    count = 0
    for p in range(P):
        count += st[i, HEAD + P + p] == DOWN
    j = rn.integers_small(vg, i, column, count)
    for p in range(P):
        if st[i, HEAD + P + p] == DOWN:
            if j == 0:
                return p
            j -= 1
    return -1


@njit(cache=True, inline="always")
def row_encode(st: np.ndarray, tm: np.ndarray, i: int, observer: int, out: np.ndarray, G: tuple) -> None:
    encode_row(st, i, observer, out, G[0], G[1], G[2], G[4], G[5])


@njit(cache=True, inline="always")
def row_mask(st: np.ndarray, tm: np.ndarray, i: int, masks: np.ndarray, G: tuple) -> None:
    P = G[0]
    live = st[i, OVER] == 0
    for p in range(P):
        masks[i, p] = live and st[i, HEAD + P + p] == DOWN


@njit(cache=True, inline="always")
def row_flips(st: np.ndarray, tm: np.ndarray, i: int) -> int:
    return np.int64(st[i, CLOCK])


@njit(cache=True, inline="always")
def row_turns(st: np.ndarray, tm: np.ndarray, i: int) -> int:
    return np.int64(st[i, TURNS])




loops = compile_row_loops(globals(), "triples", [rn, bt, mm, rules, sys.modules[__name__]])
