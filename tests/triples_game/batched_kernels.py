"""Triples' row kernels: what the shared loops (:mod:`memtab_env.vector.row_loops`)
compile into the game's batched engine and batched view. The rules are
:mod:`tests.triples_game.rules_kernels`, passed to the loops as ``row_flip`` and
``row_mask``; this module adds the deal, the memory's bookkeeping, the observation and
the ``random`` player.

State matrix ``st`` (int32, one row per game; ``P`` positions, ``n`` seats): the rules'
row (``rules_kernels``; its spare column SEAT holds the learner's seat, its OVER is 2
for a game truncated at the flip cap), then [+nP) decay bits (decay memory only).
Time matrix ``tm`` (int32): CLOCK (flips so far), [LASTACT, +4) (CLOCK after each
seat's latest flip), [RTIME, +P) reveal time of each position (1-based, 0 never).

The deal, the generator columns, the reward shares and the memory models are every
game's (:mod:`memtab_env.vector.batch_kernels`, :mod:`memtab_env.vector.memory_kernels`).
``G = (P, K, n, first, mem, window)`` (the rules' ``R`` first); ``A = (cards,)``.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from memtab_env.vector import batch_kernels as bt
from memtab_env.vector import memory_kernels as mm
from memtab_env.vector import rng as rn
from memtab_env.vector.row_loops import column_row_kernels, compile_row_loops, counter_row_kernels
from tests.triples_game import rules_kernels as rk
from tests.triples_game.rules_kernels import CURRENT, DOWN, FLIP, HEAD, OVER, SCORES, TURNS

SEAT = rk.SPARE
CLOCK, LASTACT = 0, 1
RTIME = LASTACT + rk.MAX_PLAYERS
OVER_RULES, OVER_TRUNCATED = 1, 2


def state_width(num_positions: int, num_players: int, decay: bool) -> int:
    return rk.state_size(num_positions) + (num_players * num_positions if decay else 0)


def time_width(num_positions: int) -> int:
    return RTIME + num_positions


@njit(cache=True)
def new_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, game_seed: np.uint64,
             cards: np.ndarray, n: int, first: int, p_forget: float | None) -> None:
    """The game with seed ``game_seed``: ``Triples.new_game(default_rng(game_seed))``."""
    P = cards.shape[0]
    rg[i, bt.R_GAME_SEED] = game_seed
    rn.seed_pcg64_buffered(rg, i, bt.R_AUX, game_seed, 0, 0, 0)
    for p in range(P):
        st[i, HEAD + p] = cards[p]
    rn.shuffle_row(rg, i, bt.R_AUX, st, i, HEAD, P)
    rn.seed_pcg64_buffered(rg, i, bt.R_AUX, game_seed, 1, bt.AUX_KEY, 0)
    rk.reset(st, i, P, first)
    for j in range(rk.state_size(P), st.shape[1]):
        st[i, j] = 0
    for j in range(tm.shape[1]):
        tm[i, j] = 0
    if p_forget is not None:
        for o in range(n):
            rn.seed_pcg64(rg, i, bt.R_MEM + rn.PCG_WORDS_64 * o, game_seed, 2, bt.MEMORY_KEY, o)


#: the rules' transition, called by the loops themselves
row_flip = rk.flip


@njit(cache=True, inline="always")
def row_reveal(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, pos: int, actor: int,
               G: tuple, p_forget: float | None) -> None:
    """``Memory.on_action(actor, [pos])``: every flip reveals its card."""
    P, n = G[0], G[2]
    mm.remember_reveal(st, rg, i, rk.state_size(P), pos, P, n, p_forget, bt.R_MEM)
    clock = tm[i, CLOCK] + 1
    tm[i, CLOCK] = clock
    tm[i, RTIME + pos] = clock
    tm[i, LASTACT + actor] = clock


@njit(cache=True)
def encode_row(st: np.ndarray, tm: np.ndarray, i: int, observer: int, out: np.ndarray, P: int,
               K: int, n: int, mem: int, window: int) -> None:
    """``TriplesEncoder.encode(state, observer, remembered)`` into ``out[i]``."""
    for j in range(out.shape[1]):
        out[i, j] = 0
    card, score = 3 * P, 3 * P + P * K
    flip, turn = score + n, score + n + 3
    thr = mm.threshold(mem, window, tm[i, CLOCK], max(0, tm[i, LASTACT + observer] - 1))
    decay = mem == mm.MEM_DECAY
    dcol = rk.state_size(P) + P * observer
    for p in range(P):
        s = st[i, HEAD + P + p]
        out[i, 3 * p + s] = 1
        seen = (tm[i, RTIME + p] > thr) or (decay and st[i, dcol + p] != 0)
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
    new_game(st, tm, rg, i, seed, A[0], G[2], G[3], p_forget)


@njit(cache=True, inline="always")
def row_next_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, G: tuple, A: tuple,
                  p_forget: float | None) -> None:
    rg[i, bt.R_GAMES] += np.uint64(1)
    new_game(st, tm, rg, i, rn.next_seed(rg, i, bt.R_SEEDS), A[0], G[2], G[3], p_forget)


@njit(cache=True, inline="always")
def row_score(st: np.ndarray, tm: np.ndarray, i: int, seat: int, G: tuple) -> int:
    return np.int64(st[i, SCORES + seat])


@njit(cache=True, inline="always")
def row_result_bits(st: np.ndarray, tm: np.ndarray, i: int, G: tuple) -> int:
    return rk.winner_bits(st, i, G[2])


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
    encode_row(st, tm, i, observer, out, G[0], G[1], G[2], G[4], G[5])


#: the rules' legal actions (all zeros once the game has ended, truncated too)
row_mask = rk.legal


row_flips, row_turns = counter_row_kernels(("tm", CLOCK), ("st", TURNS))


loops = compile_row_loops(globals(), "triples", [rk, rn, bt, mm, sys.modules[__name__]])
