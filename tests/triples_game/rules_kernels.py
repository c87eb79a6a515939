"""Triples' rules as numba kernels over one game's int32 state row: what the scalar engine
(:mod:`tests.triples_game.rules`) calls on its row and the batched loops
(:mod:`tests.triples_game.batched_kernels`) call, inlined, on row ``i`` of their matrix.

Row ``i`` of ``s`` (``P`` positions, ``n`` seats; at least :func:`state_size` columns)::

    CURRENT, FLIP (0..2, the next flip of the turn), UP (+2: the positions flipped first
    and second this turn, -1), OVER (1 once every card is taken; the batch writes 2 for a
    game it truncated), SPARE (not read by the rules; the batch keeps the learner's seat
    there), TURNS (completed), [SCORES, +4) triples taken by each seat, then [HEAD, +P)
    kinds (the deal), [+P) status (0 DOWN, 1 UP, 2 GONE), [+P) owner (-1 or the taker)

The rules keep nothing in ``t`` (the kernels take it, as every game's rules kernels do).
``R = (P, K, n, first_player)``; the batch's constants tuple starts with it.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import njit

from memtab_env.vector.numba_cache import compiled_entry

MAX_PLAYERS = 4
CURRENT, FLIP, UP0, OVER, SPARE, TURNS = 0, 1, 2, 4, 5, 6
SCORES = 7
HEAD = SCORES + MAX_PLAYERS
DOWN, UP, GONE = 0, 1, 2
FLIPS_PER_TURN = 3


@njit(cache=True)
def state_size(num_positions: int) -> int:
    """Entries of the state row (from Python or a kernel)."""
    return HEAD + 3 * num_positions


@functools.cache
def direct(name: str) -> Any:
    """The compiled entry of ``flip`` or ``legal`` for the scalar engine's argument types
    (one-row int32 matrices, Python ints, ``R`` four ints, ``out`` a bool matrix)."""
    from numba import types

    i64 = types.int64
    m = types.Array(types.int32, 2, "C")
    R = types.UniTuple(i64, 4)
    sigs = {"flip": (m, m, i64, i64, R), "legal": (m, m, i64, types.Array(types.boolean, 2, "C"), R)}
    return compiled_entry(globals()[name], sigs[name])


@njit(cache=True)
def reset(s: np.ndarray, i: int, P: int, first: int) -> None:
    """Everything but the deal as at the start of a game."""
    for j in range(HEAD):
        s[i, j] = 0
    s[i, CURRENT] = first
    s[i, UP0] = -1
    s[i, UP0 + 1] = -1
    for p in range(P):
        s[i, HEAD + P + p] = DOWN
        s[i, HEAD + 2 * P + p] = -1


@njit(cache=True, inline="always")
def flip(s: np.ndarray, t: np.ndarray, i: int, pos: int, R: tuple) -> bool:
    """The seat on turn flips ``pos`` (face down, the game not over), in place. True when
    the flip ended the turn (the third: a triple, whose taker plays again, or not)."""
    P, n = R[0], R[2]
    s0 = HEAD + P
    third = s[i, FLIP] == FLIPS_PER_TURN - 1
    if not third:
        s[i, s0 + pos] = UP
        s[i, UP0 + s[i, FLIP]] = pos
        s[i, FLIP] += 1
    else:
        player = np.int64(s[i, CURRENT])
        a, b = np.int64(s[i, UP0]), np.int64(s[i, UP0 + 1])
        s[i, UP0] = -1
        s[i, UP0 + 1] = -1
        s[i, FLIP] = 0
        s[i, TURNS] += 1
        k = s[i, HEAD + pos]
        if s[i, HEAD + a] == k and s[i, HEAD + b] == k:  # a triple: taken, play again
            for q in (a, b, pos):
                s[i, s0 + q] = GONE
                s[i, s0 + P + q] = player
            s[i, SCORES + player] += 1
            left = 0
            for q in range(P):
                left += s[i, s0 + q] != GONE
            if left == 0:
                s[i, OVER] = 1
        else:
            s[i, s0 + a] = DOWN
            s[i, s0 + b] = DOWN
            s[i, CURRENT] = (player + 1) % n
    # every path ends by using the row: numba then prunes the reference counting of it
    return s[i, FLIP] == 0


@njit(cache=True, inline="always")
def legal(s: np.ndarray, t: np.ndarray, i: int, out: np.ndarray, R: tuple) -> None:
    """``out[i, p]``: face down, and the game not over."""
    P = R[0]
    live = s[i, OVER] == 0
    for p in range(P):
        out[i, p] = live and s[i, HEAD + P + p] == DOWN


@njit(cache=True)
def winner_bits(s: np.ndarray, i: int, n: int) -> int:
    """Every top scorer, as the bits ``1 << (1 + seat)``."""
    best = s[i, SCORES]
    for j in range(1, n):
        best = max(best, s[i, SCORES + j])
    bits = 0
    for j in range(n):
        if s[i, SCORES + j] == best:
            bits |= 1 << (1 + j)
    return bits
