"""The MemTab rules as numba kernels over one game's state row.

A MemTab state is one int8 row of :data:`STATE_SIZE` entries (pgx-style compact state):

=============  ===========  =============================================================
slice / index  name         meaning (sentinels)
=============  ===========  =============================================================
[0, 28)        layout       kind dealt at each position, 0..13 (never changes)
[28, 56)       status       0 DOWN, 1 UP (flipped this turn, on the table), 2 GONE,
                            3 TABLEAU
[56, 84)       owner        seat whose tableau holds the card, -1 otherwise
[84, 87)       turn_flips   positions flipped so far this turn, -1 for not yet
87             current      seat on turn
88             flip         index of the next flip within the turn: 0, 1, 2
89             pairs        pairs removed so far this turn
90             turn         turns started, 1-based
91             over         1 once the game is over
92             instant_win  1 if two pairs in one turn ended the game
93             winner       the instant winner, -1 otherwise
=============  ===========  =============================================================

These kernels are *the* rules: the scalar engine (:mod:`memtab_env.games.memtab.rules`) calls
them on one row, the batched engine (:mod:`memtab_env.games.memtab.batched`) on many rows at once, so
the rules exist once. Kernels never raise; :func:`step` validates first and returns a
negative code without touching the state when the action is not allowed.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import njit

from memtab_env.vector.numba_cache import compiled_entry

NUM_POSITIONS = 28
NUM_KINDS = 14
FLIPS_PER_TURN = 3

LAYOUT = 0
STATUS = 28
OWNER = 56
TURN_FLIPS = 84
CURRENT = 87
FLIP = 88
PAIRS = 89
TURN = 90
OVER = 91
INSTANT = 92
WINNER = 93
STATE_SIZE = 94

DOWN, UP, GONE, TABLEAU = 0, 1, 2, 3

# step() result: negative = rejected (state untouched), else bit flags
ERR_OVER = -1
ERR_RANGE = -2
ERR_NOT_DOWN = -3
PAIR_FLIPS = 1  # flips 1 and 2 matched and left the game
PAIR_TABLEAU = 2  # flip 3 paired off with its twin in the tableau
TURN_OVER = 4
GAME_OVER = 8
# bits 4..8 of a non-negative result hold the other position of a removed pair, bits
# 9..11 the seat on turn after the step, bits 12..14 the seat that flipped and bits
# 15..18 the kind revealed (so the scalar engine reads nothing back from the row)
PARTNER_SHIFT = 4
NEXT_SHIFT = 9
PLAYER_SHIFT = 12
KIND_SHIFT = 15

#: signed points of each kind: R2..R8 = +2..+8, B2..B8 = -2..-8
KIND_POINTS = np.array([2, 3, 4, 5, 6, 7, 8, -2, -3, -4, -5, -6, -7, -8], dtype=np.int8)


@functools.cache
def direct(name: str) -> Any:
    """The compiled entry of kernel ``name`` (``"step"`` or ``"observe"``) for the argument
    types the scalar engine passes (:func:`~memtab_env.vector.numba_cache.compiled_entry`):
    ``step(s, action, num_players)`` with ``s`` an int8 C-contiguous state row and Python
    ints; ``observe(s, num_players, observer, memory, threshold, on_turn, buf)`` with
    ``memory`` int64 and ``buf`` int8 C-contiguous, ``on_turn`` a bool."""
    from numba import types

    row, i64 = types.Array(types.int8, 1, "C"), types.int64
    sigs = {"step": (row, i64, i64),
            "observe": (row, i64, i64, types.Array(i64, 1, "C"), i64, types.boolean, row)}
    return compiled_entry(globals()[name], sigs[name])


def new_state(layout: np.ndarray, first_player: int) -> np.ndarray:
    """A fresh state row for a deal."""
    s = np.zeros(STATE_SIZE, dtype=np.int8)
    s[LAYOUT:STATUS] = layout
    s[OWNER:TURN_FLIPS] = -1
    s[TURN_FLIPS:CURRENT] = -1
    s[CURRENT] = first_player
    s[TURN] = 1
    s[WINNER] = -1
    return s


@njit(cache=True, nogil=True)
def step(s: np.ndarray, action: int, num_players: int) -> int:
    """Apply flip ``action`` to state row ``s`` in place; see the result codes above."""
    if s[OVER]:
        return ERR_OVER
    if action < 0 or action >= NUM_POSITIONS:
        return ERR_RANGE
    if s[STATUS + action] != DOWN:
        return ERR_NOT_DOWN
    player = s[CURRENT]
    kind = s[LAYOUT + action]
    flip = s[FLIP]
    s[TURN_FLIPS + flip] = action
    result = (np.int64(player) << PLAYER_SHIFT) | (np.int64(kind) << KIND_SHIFT)
    if flip == 0:
        s[STATUS + action] = UP
        s[FLIP] = 1
        return result | (player << NEXT_SHIFT)
    if flip == 1:
        first = s[TURN_FLIPS]
        if s[LAYOUT + first] == kind:  # flips 1 and 2 match: both leave the game
            s[STATUS + first] = GONE
            s[STATUS + action] = GONE
            s[PAIRS] += 1
            result |= PAIR_FLIPS | (first << PARTNER_SHIFT)
        else:  # they stay face up until the end of the turn
            s[STATUS + action] = UP
        s[FLIP] = 2
        return result | (player << NEXT_SHIFT)
    # flip 3 goes into the flipper's tableau; its twin there pairs it off
    twin = -1
    for q in range(NUM_POSITIONS):  # branch-free: a tableau never holds two of a kind
        hit = (s[STATUS + q] == TABLEAU) & (s[OWNER + q] == player) & (s[LAYOUT + q] == kind)
        twin = q if hit else twin
    if twin >= 0:
        s[STATUS + twin] = GONE
        s[OWNER + twin] = -1
        s[STATUS + action] = GONE
        s[PAIRS] += 1
        result |= PAIR_TABLEAU | (twin << PARTNER_SHIFT)
    else:
        s[STATUS + action] = TABLEAU
        s[OWNER + action] = player
    # end of the turn: unmatched flips 1 and 2 go back face down
    result |= TURN_OVER
    down = 0
    for q in range(NUM_POSITIONS):  # branch-free
        v = s[STATUS + q]
        v = DOWN if v == UP else v
        s[STATUS + q] = v
        down += v == DOWN
    if s[PAIRS] >= 2:  # two pairs in one turn: instant win
        s[OVER] = 1
        s[INSTANT] = 1
        s[WINNER] = player
        return result | GAME_OVER | (player << NEXT_SHIFT)
    if s[PAIRS] == 0:
        s[CURRENT] = (player + 1) % num_players
    s[PAIRS] = 0
    s[FLIP] = 0
    s[TURN_FLIPS] = -1
    s[TURN_FLIPS + 1] = -1
    s[TURN_FLIPS + 2] = -1
    s[TURN] += 1
    # the end check at the start of every turn, extra turns included
    if down <= 2:
        s[OVER] = 1
        result |= GAME_OVER
    return result | (s[CURRENT] << NEXT_SHIFT)


@njit(cache=True, nogil=True)
def scores(s: np.ndarray, num_players: int, out: np.ndarray) -> None:
    """Red values minus black values in each tableau, into ``out`` (length num_players)."""
    for p in range(num_players):
        out[p] = 0
    for q in range(NUM_POSITIONS):
        if s[STATUS + q] == TABLEAU:
            out[s[OWNER + q]] += KIND_POINTS[s[LAYOUT + q]]


@njit(cache=True, nogil=True)
def winners(s: np.ndarray, num_players: int, out: np.ndarray) -> int:
    """Write the winning seats into ``out``; return how many there are."""
    if s[INSTANT]:
        out[0] = s[WINNER]
        return 1
    sc = np.zeros(num_players, dtype=np.int64)
    scores(s, num_players, sc)
    best = sc.max()
    k = 0
    for p in range(num_players):
        if sc[p] == best:
            out[k] = p
            k += 1
    return k


@njit(cache=True, nogil=True)
def encode(s: np.ndarray, num_players: int, observer: int, remembered: np.ndarray,
           out: np.ndarray) -> None:
    """Write the flat observation of ``observer`` (layout in ``MemTabEncoder``) to ``out``.

    ``remembered[q]`` marks face-down positions whose card the observer remembers.
    """
    n = num_players
    out[:] = 0
    card0 = 4 * NUM_POSITIONS
    tab0 = card0 + NUM_KINDS * NUM_POSITIONS
    score0 = tab0 + n * NUM_KINDS
    flip0 = score0 + n
    turn0 = flip0 + FLIPS_PER_TURN
    for q in range(NUM_POSITIONS):
        st = s[STATUS + q]
        out[4 * q + st] = 1
        kind = s[LAYOUT + q]
        if st == UP or st == TABLEAU or (st == DOWN and remembered[q]):
            out[card0 + NUM_KINDS * q + kind] = 1
        if st == TABLEAU:
            rel = (s[OWNER + q] - observer) % n
            out[tab0 + NUM_KINDS * rel + kind] = 1
            out[score0 + rel] += KIND_POINTS[kind]
    if not s[OVER]:
        out[flip0 + s[FLIP]] = 1
        out[turn0 + (s[CURRENT] - observer) % n] = 1


@njit(cache=True, nogil=True)
def face_down(s: np.ndarray, out: np.ndarray) -> None:
    """``out[q]`` = 1 where the card at q is face down on the table."""
    for q in range(NUM_POSITIONS):
        out[q] = s[STATUS + q] == DOWN


@njit(cache=True, nogil=True)
def observe(s: np.ndarray, num_players: int, observer: int, memory: np.ndarray, threshold: int,
            on_turn: bool, buf: np.ndarray) -> None:
    """Everything an AEC observation holds, in one pass, into one buffer: the flat
    observation (as :func:`encode`), then the action mask (face-down, if ``on_turn`` and
    not over), then the remembered mask (face-down and ``memory[q] > threshold``: the
    observer's :meth:`memtab_env.memory.Memory.source`)."""
    live = on_turn and not s[OVER]
    size = buf.size - 2 * NUM_POSITIONS
    mask = buf[size : size + NUM_POSITIONS]
    remembered = buf[size + NUM_POSITIONS :]
    for q in range(NUM_POSITIONS):
        down = s[STATUS + q] == DOWN
        remembered[q] = down and memory[q] > threshold
        mask[q] = down and live
    encode(s, num_players, observer, remembered, buf[:size])
