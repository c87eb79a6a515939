"""The rules of Memory: The Board Game as numba kernels over one game's state row.

A state on a board of ``P`` spaces is row ``i`` of an int32 matrix ``s`` of
:func:`state_size` ``(P)`` columns (pgx-style compact state); the board itself is
data, passed to the kernels as arrays (``land``: landscape of every space, ``kland``:
landscape of every picture, ``adj``: int8 side adjacency, ``supply0``: the trunks of
size 1..4 at the start; ``L`` landscapes):

==================  ============  =========================================================
column              name          meaning (sentinels)
==================  ============  =========================================================
0                   current       seat on turn
1                   phase         0 CHOOSE (turn start), 1 FLIP2 (second flip), 2 RETURN
2                   stage         0 MAIN, 1 FINAL (final round), 2 CHILDREN (children's
                                  returns)
3                   num_placed    cards placed in the current return
4                   final_left    final turns still to be taken, the current one included
5                   last_pair     seat that took the last pair, -1
6                   turn          turns started, 1-based
7                   capped        1 if the ``max_turns`` limit ended the game
8                   first_flip    space flipped first this turn, -1
9                   over          1 once the game is over (the batched engine writes 2 for
                                  a game it truncated at its action cap; the rules never do)
10                  (spare)       not read by the rules (the batched engine keeps the
                                  learner's seat there)
[11, 15)            supply        trunks of size 1..4 left in the supply
[15, 19)            returning     spaces placed in the current return, in order, -1 unused
[19, 35)            trunks        trunks of size 1..4 of each seat (4 seats at most)
[35, 35 + P)        layout        picture of card c, the card dealt on space c
[35 + P, +P)        status        per space: 0 DOWN, 1 UP, 2 FREE, 3 PLACED
[35 + 2P, +P)       holder        per card: the seat that holds it, -1
[35 + 3P, +P)       placed        per space: card id lying face up on it, -1
==================  ============  =========================================================

These kernels are *the* rules: the scalar engine (:mod:`memtab_env.games.memory_board.rules`)
calls them on its one-row matrix, the batched engine
(:mod:`memtab_env.games.memory_board.batched_kernels`) on row ``i`` of its matrix, whose
first :func:`state_size` columns are this layout. Every kernel takes the matrix and the
row index (the batched kernels' convention: a row view costs numba reference counting).
Kernels never raise: :func:`legal` says what may be played and :func:`apply` trusts its
caller to have asked.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import njit

from memtab_env.boards import MAX_RETURN
from memtab_env.vector.numba_cache import compiled_entry

MAX_PLAYERS = 4
CURRENT = 0
PHASE = 1
STAGE = 2
NPLACED = 3
FINAL_LEFT = 4
LAST_PAIR = 5
TURN = 6
CAPPED = 7
FIRST = 8
OVER = 9
SPARE = 10
SUPPLY = 11
RETURNING = SUPPLY + MAX_RETURN
TRUNKS = RETURNING + MAX_RETURN
HEAD = TRUNKS + MAX_RETURN * MAX_PLAYERS  # per-space blocks start here

DOWN, UP, FREE, PLACED = 0, 1, 2, 3
CHOOSE, FLIP2, RETURN = 0, 1, 2
MAIN, FINAL, CHILDREN = 0, 1, 2

# apply() result bits
TURN_OVER = 1
GAME_OVER = 2
PAIR = 4  # a flip took a pair: the other card is the partner
RETURN_DONE = 8  # a return ended: returned cards and trunk size are set
# and the fields of the result: partner (the first flip of a pair, or the card placed),
# cards placed so far in this return, cards returned and the trunk earned when a return
# ended, the seat on turn after the action, the seat that acted and the picture flipped
PARTNER_SHIFT = 4  # 7 bits (at most 120 spaces)
PLACED_SHIFT = 11  # 3 bits
RETURNED_SHIFT = 14  # 3 bits
TRUNK_SHIFT = 17  # 3 bits
NEXT_SHIFT = 20  # 3 bits
PLAYER_SHIFT = 23  # 3 bits
KIND_SHIFT = 26  # 7 bits


def state_size(num_spaces: int) -> int:
    """Entries of the int32 state row."""
    return HEAD + 4 * num_spaces


@functools.cache
def direct(name: str) -> Any:
    """The compiled entry of kernel ``name`` (``"apply"`` or ``"legal"``) for the argument
    types the scalar engine passes (:func:`~memtab_env.vector.numba_cache.compiled_entry`):
    ``s`` an int32 and ``out`` an int8 C-contiguous matrix, ``land`` and ``kland`` int64, ``adj``
    int8 C-contiguous, Python ints and bools."""
    from numba import types

    mat, i64 = types.Array(types.int32, 2, "C"), types.int64
    arr64 = types.Array(types.int64, 1, "C")
    sigs = {
        "apply": (mat, i64, i64, i64, i64, arr64, arr64, types.boolean, i64),
        "legal": (mat, i64, types.Array(types.int8, 2, "C"), i64, arr64, arr64,
                  types.Array(types.int8, 2, "C"), i64),
    }
    return compiled_entry(globals()[name], sigs[name])


def new_state(layout: np.ndarray, first_player: int, supply0: np.ndarray) -> np.ndarray:
    """A fresh one-row state matrix for the deal ``layout`` (picture ids)."""
    P = layout.size
    s = np.zeros((1, state_size(P)), dtype=np.int32)
    s[0, HEAD : HEAD + P] = layout
    reset(s, 0, P, first_player, supply0)
    return s


@njit(cache=True, nogil=True)
def reset(s: np.ndarray, i: int, P: int, first_player: int, supply0: np.ndarray) -> None:
    """Everything but the layout as at the start of a game."""
    s[i, CURRENT] = first_player
    s[i, PHASE] = CHOOSE
    s[i, STAGE] = MAIN
    s[i, NPLACED] = 0
    s[i, FINAL_LEFT] = 0
    s[i, LAST_PAIR] = -1
    s[i, TURN] = 1
    s[i, CAPPED] = 0
    s[i, FIRST] = -1
    s[i, OVER] = 0
    for j in range(MAX_RETURN):
        s[i, SUPPLY + j] = supply0[j]
        s[i, RETURNING + j] = -1
    for j in range(MAX_RETURN * MAX_PLAYERS):
        s[i, TRUNKS + j] = 0
    for p in range(P):
        s[i, HEAD + P + p] = DOWN
        s[i, HEAD + 2 * P + p] = -1
        s[i, HEAD + 3 * P + p] = -1


@njit(cache=True, nogil=True)
def tree(s: np.ndarray, i: int, seat: int) -> int:
    """Tree height of ``seat`` (sum of its trunk sizes): its score."""
    h = 0
    for k in range(MAX_RETURN):
        h += (k + 1) * s[i, TRUNKS + MAX_RETURN * seat + k]
    return h


@njit(cache=True, nogil=True)
def held_cards(s: np.ndarray, i: int, P: int, seat: int) -> int:
    """Collected cards ``seat`` holds in front of it."""
    held = 0
    for c in range(P):
        held += s[i, HEAD + 2 * P + c] == seat
    return held


@njit(cache=True, nogil=True)
def winner_bits(s: np.ndarray, i: int, P: int, n: int) -> int:
    """The winners as the bits ``1 << (1 + seat)``: the highest tree; a tie goes to more
    collected cards still in front; a further tie is a shared win."""
    best = -1
    for j in range(n):
        best = max(best, tree(s, i, j))
    most = -1
    for j in range(n):
        if tree(s, i, j) == best:
            most = max(most, held_cards(s, i, P, j))
    bits = 0
    for j in range(n):
        if tree(s, i, j) == best and held_cards(s, i, P, j) == most:
            bits |= 1 << (1 + j)
    return bits


@njit(cache=True, nogil=True)
def legal(s: np.ndarray, i: int, out: np.ndarray, P: int, land: np.ndarray, kland: np.ndarray,
          adj: np.ndarray, L: int) -> int:
    """The legal actions into ``out`` (``2P + 2`` entries, 1 legal; all zero once over);
    returns how many there are."""
    for a in range(2 * P + 2):
        out[i, a] = 0
    if s[i, OVER] != 0:
        return 0
    scol = HEAD + P
    count = 0
    phase = s[i, PHASE]
    if phase == FLIP2:
        for p in range(P):
            d = s[i, scol + p] == DOWN
            out[i, p] = d
            count += d
        return count
    player = s[i, CURRENT]
    colours = 0  # bit l: the player holds a card of landscape l
    hcol = HEAD + 2 * P
    for c in range(P):
        if s[i, hcol + c] == player:
            colours |= 1 << kland[s[i, HEAD + c]]
    placed = s[i, NPLACED]
    for q in range(P):
        ok = (s[i, scol + q] == FREE) and ((colours >> land[q]) & 1) != 0
        if ok and phase == RETURN:  # it must touch a space placed earlier in this return
            touch = False
            for j in range(placed):
                if adj[s[i, RETURNING + j], q]:
                    touch = True
            ok = touch
        if ok:
            out[i, P + q] = 1
            count += 1
    if phase == RETURN:
        out[i, 2 * P] = 1
        count += 1
    elif s[i, STAGE] == MAIN:
        for p in range(P):
            d = s[i, scol + p] == DOWN
            out[i, p] = d
            count += d
    elif s[i, STAGE] == FINAL:
        out[i, 2 * P + 1] = 1
        count += 1
    return count


@njit(cache=True, nogil=True)
def _end_turn(s: np.ndarray, i: int, P: int, n: int, again: bool, max_turns: int) -> int:
    """End the current turn; ``again``: the same seat takes another turn (a pair)."""
    s[i, PHASE] = CHOOSE
    code = TURN_OVER
    stage = s[i, STAGE]
    if stage == MAIN:
        if s[i, TURN] >= max_turns:  # the turn limit: scored as it stands
            s[i, OVER] = 1
            s[i, CAPPED] = 1
            code |= GAME_OVER
        else:
            if not again:
                s[i, CURRENT] = (s[i, CURRENT] + 1) % n
            s[i, TURN] += 1
    elif stage == FINAL:
        s[i, FINAL_LEFT] -= 1
        if s[i, FINAL_LEFT] == 0:
            s[i, OVER] = 1
            code |= GAME_OVER
        else:
            s[i, CURRENT] = (s[i, CURRENT] + 1) % n
            s[i, TURN] += 1
    else:  # children's returns: the next seat in order that still holds cards
        for step in range(1, n + 1):
            seat = (s[i, CURRENT] + step) % n
            if held_cards(s, i, P, seat) > 0:
                s[i, CURRENT] = seat
                s[i, TURN] += 1
                return code
        s[i, OVER] = 1  # nobody holds a card: every space is covered again
        code |= GAME_OVER
    return code


@njit(cache=True, nogil=True)
def _finish_return(s: np.ndarray, i: int, P: int, n: int, max_turns: int) -> int:
    """A return of k cards earns a k-trunk, else the largest smaller one left."""
    k = s[i, NPLACED]
    size = 0
    for candidate in range(k, 0, -1):
        if s[i, SUPPLY + candidate - 1] > 0:
            size = candidate
            break
    if size > 0:
        s[i, SUPPLY + size - 1] -= 1
        s[i, TRUNKS + MAX_RETURN * s[i, CURRENT] + size - 1] += 1
    for j in range(MAX_RETURN):
        s[i, RETURNING + j] = -1
    s[i, NPLACED] = 0
    code = RETURN_DONE | (np.int64(k) << RETURNED_SHIFT) | (np.int64(size) << TRUNK_SHIFT)
    return code | _end_turn(s, i, P, n, False, max_turns)


@njit(cache=True, nogil=True)
def apply(s: np.ndarray, i: int, a: int, P: int, n: int, land: np.ndarray, kland: np.ndarray,
          children: bool, max_turns: int) -> int:
    """Action ``a`` (legal: the caller checked with :func:`legal`) for the seat on turn,
    in place; returns the result bits and fields above."""
    player = np.int64(s[i, CURRENT])
    scol = HEAD + P
    hcol = HEAD + 2 * P
    code = player << PLAYER_SHIFT
    if a < P:  # flip
        code |= np.int64(s[i, HEAD + a]) << KIND_SHIFT
        if s[i, PHASE] == CHOOSE:
            s[i, scol + a] = UP
            s[i, FIRST] = a
            s[i, PHASE] = FLIP2
        else:
            first = s[i, FIRST]
            s[i, FIRST] = -1
            if s[i, HEAD + first] == s[i, HEAD + a]:  # a pair: the player collects both
                s[i, scol + first] = FREE
                s[i, scol + a] = FREE
                s[i, hcol + first] = player
                s[i, hcol + a] = player
                code |= PAIR | (np.int64(first) << PARTNER_SHIFT)
                left = False
                for q in range(P):
                    if s[i, scol + q] == DOWN:
                        left = True
                        break
                if left:
                    code |= _end_turn(s, i, P, n, True, max_turns)
                else:  # the last pair: the endgame starts with the taker
                    s[i, LAST_PAIR] = player
                    s[i, PHASE] = CHOOSE
                    s[i, TURN] += 1
                    if children:
                        s[i, STAGE] = CHILDREN  # the taker holds >= 2 cards: it returns first
                    else:
                        s[i, STAGE] = FINAL
                        s[i, FINAL_LEFT] = n
                    code |= TURN_OVER
            else:  # no pair: both go back face down, play passes
                s[i, scol + first] = DOWN
                code |= _end_turn(s, i, P, n, False, max_turns)
    elif a < 2 * P:  # place the lowest held card of the space's landscape
        q = a - P
        want = land[q]
        card = -1
        for c in range(P):
            if s[i, hcol + c] == player and kland[s[i, HEAD + c]] == want:
                card = c
                break
        s[i, hcol + card] = -1
        s[i, HEAD + 3 * P + q] = card
        s[i, scol + q] = PLACED
        s[i, RETURNING + s[i, NPLACED]] = q
        s[i, NPLACED] += 1
        s[i, PHASE] = RETURN
        code |= (np.int64(card) << PARTNER_SHIFT) | (np.int64(s[i, NPLACED]) << PLACED_SHIFT)
        if s[i, NPLACED] == MAX_RETURN:  # the fourth placement ends the return
            code |= _finish_return(s, i, P, n, max_turns)
    elif a == 2 * P:  # end the return
        code |= _finish_return(s, i, P, n, max_turns)
    else:  # pass
        code |= _end_turn(s, i, P, n, False, max_turns)
    return code | (np.int64(s[i, CURRENT]) << NEXT_SHIFT)
