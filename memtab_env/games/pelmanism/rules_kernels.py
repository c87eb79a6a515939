"""The Pelmanism rules as numba kernels over one game's state rows.

A Pelmanism state with ``P`` positions is two rows (pgx-style compact state): row ``i``
of an int8 matrix ``s`` of at least :func:`state_size` ``(P)`` columns and row ``i`` of an
int32 matrix ``t`` of at least :data:`COUNTS_SIZE` columns (the turn count outgrows int8):

==================  ===========  ==========================================================
``s`` column        name         meaning (sentinels)
==================  ===========  ==========================================================
0                   current      seat on turn
1                   flip         0 or 1: the next flip within the turn
2                   first        position flipped first this turn, -1 before it
3, 4                last         the two positions flipped in the previous turn (-1 before
                                 any turn; display only)
5                   over         1 once every card is taken or the ``max_turns`` house rule
                                 ended the game (the batched engine writes 2 for a game it
                                 truncated at its flip cap; the rules never do)
6                   left         cards on the table (not taken)
7                   (spare)      not read by the rules (the batched engine keeps the
                                 learner's seat there)
[8, 14)             pairs        pairs taken by each seat (= score); 6 seats at most
[14, 14 + P)        layout       card id dealt at each position (never changes)
[14 + P, +P)        kinds        kind of the card at each position (never changes)
[14 + 2P, +P)       status       0 DOWN, 1 UP (flipped first this turn), 2 GONE (taken)
[14 + 3P, +P)       owner        -1, or the seat that took the card
==================  ===========  ==========================================================

``t[i, 0]`` (``TURNS``) counts the turns completed, extra turns included. Columns past
these are the caller's (the batched engine keeps its memories there).

The constants tuple ``R`` is ``(P, K, n, first_player, max_turns)`` (``K`` kinds, ``n``
players, ``max_turns`` the house-rule turn limit, 0 for none); the batched engine's
constants tuple starts with it.

These kernels are *the* rules. The scalar engine (:mod:`memtab_env.games.pelmanism.rules`)
calls them on its one-row matrices, after checking the action and raising clear errors;
the batched engine's loops (:mod:`memtab_env.games.pelmanism.batched_kernels`) call
:func:`flip` and :func:`legal` themselves, inlined, as their ``row_flip`` and
``row_mask`` on row ``i`` of its matrices. Kernels trust their caller: :func:`flip`'s
action is legal.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import njit

from memtab_env.vector import batch_kernels as _batch_module
from memtab_env.vector.batch_kernels import top_score_bits
from memtab_env.vector.numba_cache import compiled_entry, invalidate_stale_cache

MAX_PLAYERS = 6
CURRENT = 0
FLIP = 1
FIRST = 2
LAST = 3  # and LAST + 1
OVER = 5
LEFT = 6
SPARE = 7
PAIRS = 8
HEAD = PAIRS + MAX_PLAYERS  # per-position blocks start here
TURNS = 0  # in the counts row
COUNTS_SIZE = 1

DOWN, UP, GONE = 0, 1, 2
FLIPS_PER_TURN = 2


def state_size(num_positions: int) -> int:
    """Entries of the int8 state row the rules read and write."""
    return HEAD + 4 * num_positions


@functools.cache
def direct(name: str) -> Any:
    """The compiled entry of kernel ``name`` (``"flip"``, ``"legal"``) for the argument
    types the scalar engine passes (:func:`~memtab_env.vector.numba_cache.compiled_entry`):
    an int8 ``s``, an int32 ``t`` (C-contiguous matrices), Python ints, ``R`` a tuple of
    five ints and, for ``legal``, a bool ``out`` matrix."""
    from numba import types

    i64 = types.int64
    s = types.Array(types.int8, 2, "C")
    t = types.Array(types.int32, 2, "C")
    R = types.UniTuple(i64, 5)
    sigs = {
        "flip": (s, t, i64, i64, R),
        "legal": (s, t, i64, types.Array(types.boolean, 2, "C"), R),
    }
    return compiled_entry(globals()[name], sigs[name])


@njit(cache=True, nogil=True)
def reset(s: np.ndarray, t: np.ndarray, i: int, num_positions: int, num_players: int,
          first_player: int) -> None:
    """Everything but the deal (layout and kinds) as at the start of a game."""
    P = num_positions
    scol = HEAD + 2 * P
    for p in range(P):
        s[i, scol + p] = DOWN
        s[i, scol + P + p] = -1
    s[i, CURRENT] = first_player
    s[i, FLIP] = 0
    s[i, FIRST] = -1
    s[i, LAST] = -1
    s[i, LAST + 1] = -1
    s[i, OVER] = 0
    s[i, LEFT] = P
    for j in range(num_players):
        s[i, PAIRS + j] = 0
    t[i, TURNS] = 0


@njit(cache=True, nogil=True, inline="always")
def flip(s: np.ndarray, t: np.ndarray, i: int, pos: int, R: tuple) -> bool:
    """The seat on turn flips ``pos`` (face down, the game not over), in place. True when
    the flip ended a turn (the second flip: a match, whose taker plays again, or not, and
    play passes)."""
    P, n, max_turns = R[0], R[2], R[4]
    kcol = HEAD + P
    scol = HEAD + 2 * P
    second = s[i, FLIP] != 0
    turns = t[i, TURNS] + second  # turns completed once this flip is done
    if not second:
        s[i, scol + pos] = UP
        s[i, FIRST] = pos
        s[i, FLIP] = 1
    else:
        player = np.int64(s[i, CURRENT])
        first = np.int64(s[i, FIRST])
        s[i, LAST] = first
        s[i, LAST + 1] = pos
        s[i, FIRST] = -1
        s[i, FLIP] = 0
        matched = s[i, kcol + first] == s[i, kcol + pos]
        if matched:  # the player takes the pair and plays again
            s[i, scol + first] = GONE
            s[i, scol + pos] = GONE
            s[i, scol + P + first] = player
            s[i, scol + P + pos] = player
            s[i, PAIRS + player] += 1
            left = s[i, LEFT] - 2
            s[i, LEFT] = left
            if left == 0:  # every card taken: the end
                s[i, OVER] = 1
        else:  # no match: both go back face down in place, play passes
            s[i, scol + first] = DOWN
        if max_turns > 0 and turns >= max_turns and s[i, OVER] == 0:
            s[i, OVER] = 1  # the house-rule turn limit: scored as it stands
        if s[i, OVER] == 0 and not matched:
            s[i, CURRENT] = (player + 1) % n
    # every path ends by using both rows: the loops inline this kernel, and numba then
    # prunes the reference counting of the rows it adds on entry (a row last used on
    # some paths only keeps two counting calls per flip, a sixth of its cost)
    t[i, TURNS] = turns
    return s[i, FLIP] == 0


@njit(cache=True, nogil=True, inline="always")
def legal(s: np.ndarray, t: np.ndarray, i: int, out: np.ndarray, R: tuple) -> None:
    """``out[i, p]`` = whether flipping ``p`` is legal: face down, and the game not over."""
    P = R[0]
    scol = HEAD + 2 * P
    live = s[i, OVER] == 0
    for p in range(P):
        out[i, p] = live & (s[i, scol + p] == DOWN)


@njit(cache=True, nogil=True)
def winner_bits(s: np.ndarray, i: int, num_players: int) -> int:
    """The winners as the bits ``1 << (1 + seat)``: every seat with the most pairs (solo:
    seat 0). Bit 0 (an instant win in MemTab) is never set."""
    return top_score_bits(s, i, PAIRS, num_players)


# winner_bits compiles in batch_kernels.py
invalidate_stale_cache(globals(), [_batch_module], "pelmanism_rules_kernels.deps")
