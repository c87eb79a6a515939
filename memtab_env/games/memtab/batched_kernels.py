"""Numba kernels of the batched MemTab engine: B games as rows of one int8 state matrix.

The rules are not restated here. Each row starts with exactly the scalar engine's state
row (:mod:`memtab_env.games.memtab.rules_kernels`, ``STATE_SIZE`` columns), and every flip is
``rules_kernels.step`` on that row, the very kernel behind ``MemTab.apply_inplace``: the
rules exist once. This module adds what a batch needs around it: the deal (NumPy's
generator, bit for bit, :mod:`memtab_env.vector.rng`), memory models, scores, rewards,
auto-reset, observations, masks and the opponents of the single-agent view, as the row
kernels over which :mod:`memtab_env.vector.row_loops` compiles the engine's loops and
the single-agent loop (:data:`loops`).
``tests/test_vector_engine.py`` still plays many thousands of games through the batch and
the scalar env side by side and compares everything after every flip.

State matrix ``st`` (int8, one row per game; ``n`` = number of players)::

    [0, ROW)          the scalar state row (``rules_kernels``): layout, status, owner,
                      turn_flips, current, flip, pairs, turn, over, instant_win, winner
    [RTIME, +28)      memory: flip count of the card's latest reveal (1-based), 0 never
    CLOCK             memory: flips (reveals) so far in this game (``Memory.time``)
    SEAT              the learner's seat (single-agent view; 0 otherwise)
    [BASE, +n)        scores (red minus black in each tableau), kept up to date
    [BASE+n, +n)      memory: CLOCK after each seat's latest flip (one reveal per flip:
                      ``Memory.source``'s ``none`` threshold + 1)
    [BASE+2n, +28n)   decay memory only: remembered bit of each (observer, position)
    [SEEN, +28n)      memory other than perfect: the greedy opponents' own memory, 1 where
                      one of seat s's observations showed the card (``MemTabBelief.seen``)

The generator matrix ``rg`` and the view generator matrix ``vg`` are every game's
(:mod:`memtab_env.vector.batch_kernels`, which also states the conventions the kernels
follow); the memory models are :mod:`memtab_env.vector.memory_kernels`. One convention
is MemTab's own: ``rules_kernels.step`` takes a row, so it is inlined into the batched
loops, which lets numba drop most of the row view's reference counting.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from memtab_env.games.memtab import rules_kernels as mk
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
    top_score_bits,
)
from memtab_env.vector.memory_kernels import MEM_DECAY, MEM_PERFECT, remember_reveal, threshold
from memtab_env.vector.numba_cache import invalidate_stale_cache
from memtab_env.vector.rng import integers_small, next_seed
from memtab_env.vector.row_loops import column_row_kernels, compile_row_loops, counter_row_kernels

P = mk.NUM_POSITIONS
K = mk.NUM_KINDS
FLIPS_PER_TURN = mk.FLIPS_PER_TURN
DOWN, UP, GONE, TABLEAU = mk.DOWN, mk.UP, mk.GONE, mk.TABLEAU
# -- state matrix columns: the scalar row, then the batch's own ----------------------
LAYOUT = mk.LAYOUT
STATUS = mk.STATUS
OWNER = mk.OWNER
TFLIPS = mk.TURN_FLIPS
CURRENT = mk.CURRENT
FLIP = mk.FLIP
PAIRS = mk.PAIRS
TURN = mk.TURN
OVER = mk.OVER
IWIN = mk.INSTANT
WINNER = mk.WINNER
ROW = mk.STATE_SIZE  # the scalar row ends here
RTIME = ROW
CLOCK = RTIME + P
SEAT = CLOCK + 1
BASE = SEAT + 1  # scores at BASE, last actions at BASE + n, decay bits at BASE + 2n


def state_width(num_players: int, mem: int) -> int:
    """Columns of the state matrix for ``num_players`` seats under memory model ``mem``."""
    return seen_column(0, num_players, mem) + (P * num_players if mem != MEM_PERFECT else 0)


@njit(cache=True)
def seen_column(seat: int, n: int, mem: int) -> int:
    """First column of ``seat``'s greedy memory (after the decay bits, if any)."""
    return BASE + 2 * n + (P * n if mem == MEM_DECAY else 0) + P * seat

# -- observation layout (MemTabEncoder) ------------------------------------------------
OBS_CARD = P * 4  # after the status one-hots
OBS_TABLEAUX = OBS_CARD + P * K  # after the card one-hots


def observation_size(num_players: int) -> int:
    """Length of the flat observation (``MemTabEncoder.size``): ``507 + 16 n``."""
    return OBS_TABLEAUX + K * num_players + num_players + FLIPS_PER_TURN + num_players


#: the scalar engine's transition, ``rules_kernels.step`` itself, compiled for inlining
#: into the batched loops (numba then drops the reference counting of the row view that
#: a call would pay: half the cost of a flip)
_rules_step = njit(inline="always")(mk.step.py_func)

# =====================================================================================
# one game: row i of the matrices
# =====================================================================================
@njit(cache=True)
def clear_game(st: np.ndarray, i: int, n: int, first: int, p_forget: float | None) -> None:
    """Everything but the layout as ``rules_kernels.new_state``, a fresh memory and
    fresh greedy memories (every column from ``BASE`` on)."""
    for p in range(P):
        st[i, STATUS + p] = DOWN
        st[i, OWNER + p] = -1
        st[i, RTIME + p] = 0
    for f in range(FLIPS_PER_TURN):
        st[i, TFLIPS + f] = -1
    st[i, CURRENT] = first
    st[i, FLIP] = 0
    st[i, PAIRS] = 0
    st[i, TURN] = 1
    st[i, OVER] = 0
    st[i, IWIN] = 0
    st[i, WINNER] = -1
    st[i, CLOCK] = 0
    for j in range(BASE, st.shape[1]):
        st[i, j] = 0


@njit(cache=True)
def new_game(
    st: np.ndarray,
    rg: np.ndarray,
    i: int,
    game_seed: np.uint64,
    n: int,
    first: int,
    p_forget: float | None,
) -> None:
    """Start the game with seed ``game_seed`` in slot ``i``.

    Deal = ``default_rng(game_seed).permutation(DECK)`` (``MemTab.new_game``).
    """
    for k in range(K):  # DECK: every kind twice, in kind order
        st[i, LAYOUT + 2 * k] = k
        st[i, LAYOUT + 2 * k + 1] = k
    deal(st, rg, i, game_seed, LAYOUT, P)
    clear_game(st, i, n, first, p_forget)
    seed_memories(rg, i, game_seed, n, p_forget)


@njit(cache=True)
def next_game(
    st: np.ndarray, rg: np.ndarray, i: int, n: int, first: int, p_forget: float | None
) -> None:
    """Start the slot's next game: its seed is the next draw of the seed stream."""
    rg[i, R_GAMES] += np.uint64(1)
    new_game(st, rg, i, next_seed(rg, i, R_SEEDS), n, first, p_forget)


@njit(cache=True)
def reset_slot(
    st: np.ndarray,
    rg: np.ndarray,
    i: int,
    seed: np.uint64,
    n: int,
    first: int,
    p_forget: float | None,
) -> None:
    """Explicit reset with ``seed``: the first game's seed is ``seed`` itself."""
    seed_slot(rg, i, seed)
    new_game(st, rg, i, seed, n, first, p_forget)


@njit(inline="always", cache=True)
def row_flip(st: np.ndarray, tm: np.ndarray, i: int, pos: int, G: tuple) -> bool:
    """Flip ``pos`` for the seat on turn in game ``i`` (legal: the caller checked) with the
    scalar engine's ``rules_kernels.step`` on the row (inlined), then keep the scores up
    to date. True when the flip ended the turn."""
    n = G[0]
    player = np.int64(st[i, CURRENT])
    kind = np.int64(st[i, LAYOUT + pos])
    code = _rules_step(st[i], pos, n)
    if code & mk.PAIR_TABLEAU:  # flip 3 paired off with its twin in the tableau
        st[i, BASE + player] -= mk.KIND_POINTS[kind]
    elif code & mk.TURN_OVER:  # flip 3 went into the tableau
        st[i, BASE + player] += mk.KIND_POINTS[kind]
    return (code & mk.TURN_OVER) != 0


@njit(inline="always", cache=True)
def row_reveal(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, pos: int, actor: int,
               G: tuple, p_forget: float | None) -> None:
    """``Memory.on_action(actor, [pos])``: every flip reveals its card."""
    n = G[0]
    remember_reveal(st, rg, i, BASE + 2 * n, pos, P, n, p_forget, R_MEM)
    clock = st[i, CLOCK] + 1
    st[i, CLOCK] = clock
    st[i, RTIME + pos] = clock
    st[i, BASE + n + actor] = clock


@njit(cache=True)
def memory_threshold(st: np.ndarray, i: int, observer: int, n: int, mem: int, window: int) -> int:
    """:func:`threshold` of ``observer`` in game ``i`` (every flip reveals one card, so
    the count before its latest flip is one below the clock after it; 0 before any)."""
    before = max(0, np.int64(st[i, BASE + n + observer]) - 1)
    return threshold(mem, window, np.int64(st[i, CLOCK]), before)


@njit(cache=True)
def known_column(observer: int, n: int, mem: int) -> int:
    """First column of the observer's decay bits (any valid column for other models)."""
    return BASE + 2 * n + P * observer if mem == MEM_DECAY else STATUS


@njit(cache=True)
def result_bits(st: np.ndarray, i: int, n: int) -> int:
    """A finished game's result: bit 0 instant win, bit ``1 + seat`` for each winner
    (``MemTab.winners``: the instant winner, else every top scorer)."""
    if st[i, IWIN] != 0:
        return 1 | (1 << (1 + np.int64(st[i, WINNER])))
    return top_score_bits(st, i, BASE, n)


@njit(cache=True)
def encode_row(
    st: np.ndarray, i: int, observer: int, out: np.ndarray, n: int, mem: int, window: int
) -> None:
    """``MemTabEncoder.encode(state, observer, remembered)`` written into ``out[i]``.

    Layout (see ``MemTabEncoder``): status one-hot 28 x 4, card one-hot 28 x 14,
    tableaux n x 14, scores n, flip one-hot 3, turn one-hot n; seats relative to the
    observer; flip and turn all zeros once the game is over. Written branch-light: a
    memory-model switch inside the position loop made it 2.5x slower, a tableau branch
    1.7x.
    """
    for j in range(out.shape[1]):
        out[i, j] = 0
    score = OBS_TABLEAUX + K * n
    flip = score + n
    turn = flip + FLIPS_PER_TURN
    thr = memory_threshold(st, i, observer, n, mem, window)
    decay = mem == MEM_DECAY
    kcol = known_column(observer, n, mem)
    for p in range(P):
        s = np.int64(st[i, STATUS + p])
        out[i, p * 4 + s] = 1
        kind = np.int64(st[i, LAYOUT + p])
        rem = (np.int64(st[i, RTIME + p]) > thr) | (decay & (st[i, kcol + p] != 0))
        out[i, OBS_CARD + p * K + kind] = (s == UP) | (s == TABLEAU) | ((s == DOWN) & rem)
        # the tableau block of the holder, relative to the observer; written without a
        # branch (which cost half the encoding): a card on no tableau adds 0 to slot 0
        tab = s == TABLEAU
        rel = np.int64(st[i, OWNER + p]) - observer
        rel = rel + n if rel < 0 else rel
        t = OBS_TABLEAUX + (rel if tab else 0) * K + kind
        out[i, t] = out[i, t] + tab
    for j in range(n):
        rel = j - observer
        if rel < 0:
            rel += n
        out[i, score + rel] = st[i, BASE + j]
    if st[i, OVER] == 0:
        out[i, flip + st[i, FLIP]] = 1
        rel = np.int64(st[i, CURRENT]) - observer
        if rel < 0:
            rel += n
        out[i, turn + rel] = 1


@njit(inline="always", cache=True)
def random_action(st: np.ndarray, rg: np.ndarray, i: int, o: int) -> int:
    """Uniform legal flip from the stream at column ``o``: the ``integers(count)``-th
    face-down position in position order (``RandomAgent.act_on_mask``)."""
    down = 0  # bit p: position p is face down
    for p in range(P):
        down |= np.int64(st[i, STATUS + p] == DOWN) << p
    return select_bit(down, integers_small(rg, i, o, popcount(down)))


@njit(cache=True)
def greedy_action(st: np.ndarray, i: int, n: int, mem: int, window: int) -> int:
    """``agents.memtab_agents.GreedyAgent.act`` of the seat on turn in game ``i``, observing under
    the memory model ``mem``.

    What the seat knows is its own memory (``MemTabBelief.seen``): every card that one of
    its observations showed (face up, in a tableau, or face down and remembered by the
    model), recorded at each of its flips in its ``SEEN`` row. Under ``perfect`` every
    observation shows every card ever revealed, so "known" is "ever revealed" and the
    row is not kept.

    Flip 0: the lowest position among the known face-down cards of a kind whose two cards
    are both face down and known; flip 1: the lowest known face-down card of the kind
    flipped first; flip 2: the lowest known face-down card of a kind in the flipper's
    tableau. Failing that: the lowest face-down unknown card, else the lowest face-down
    card.
    """
    flip = st[i, FLIP]
    player = np.int64(st[i, CURRENT])
    known = 0  # bit q: the seat knows the card at q
    if mem == MEM_PERFECT:
        for q in range(P):
            known |= np.int64(st[i, RTIME + q] > 0) << q
    else:
        thr = memory_threshold(st, i, player, n, mem, window)
        decay = mem == MEM_DECAY
        kcol = known_column(player, n, mem)
        seen = seen_column(player, n, mem)
        for q in range(P):
            s = np.int64(st[i, STATUS + q])
            rem = (np.int64(st[i, RTIME + q]) > thr) | (decay & (st[i, kcol + q] != 0))
            if (s == UP) | (s == TABLEAU) | ((s == DOWN) & rem):
                st[i, seen + q] = 1
            known |= np.int64(st[i, seen + q] != 0) << q
    wanted = 0  # bit k: a known face-down card of kind k is the flip to make
    if flip == 0:
        once = 0
        for q in range(P):
            if st[i, STATUS + q] == DOWN and (known >> q) & 1:
                bit = np.int64(1) << st[i, LAYOUT + q]
                wanted |= once & bit
                once |= bit
    elif flip == 1:
        wanted = np.int64(1) << st[i, LAYOUT + st[i, TFLIPS]]
    else:
        for q in range(P):
            if st[i, STATUS + q] == TABLEAU and st[i, OWNER + q] == player:
                wanted |= np.int64(1) << st[i, LAYOUT + q]
    lowest_down = -1
    lowest_unknown = -1
    for q in range(P):
        if st[i, STATUS + q] != DOWN:
            continue
        if lowest_down < 0:
            lowest_down = q
        if not (known >> q) & 1:
            if lowest_unknown < 0:
                lowest_unknown = q
        elif (wanted >> st[i, LAYOUT + q]) & 1:
            return q
    if lowest_unknown >= 0:
        return lowest_unknown
    return lowest_down


# =====================================================================================
# the batched engine
# =====================================================================================
@njit(cache=True, nogil=True)
def set_layouts(st: np.ndarray, indices: np.ndarray, layouts: np.ndarray) -> None:
    """Replace the deals of the fresh games ``indices`` by ``layouts`` (checked decks)."""
    for j in range(indices.shape[0]):
        for p in range(P):
            st[indices[j], LAYOUT + p] = layouts[j, p]


@njit(cache=True, nogil=True)
def remembered_range(
    st: np.ndarray,
    observers: np.ndarray,
    out: np.ndarray,
    n: int,
    mem: int,
    window: int,
    lo: int,
    hi: int,
) -> None:
    """``Memory.remembered(observer, face_down)`` of each game; observer -1 = on turn."""
    for i in range(lo, hi):
        o = observers[i] if observers[i] >= 0 else np.int64(st[i, CURRENT])
        thr = memory_threshold(st, i, o, n, mem, window)
        decay = mem == MEM_DECAY
        kcol = known_column(o, n, mem)
        for p in range(P):
            rem = (np.int64(st[i, RTIME + p]) > thr) | (decay & (st[i, kcol + p] != 0))
            out[i, p] = (st[i, STATUS + p] == DOWN) & rem


@njit(cache=True, nogil=True)
def greedy_range(st: np.ndarray, out: np.ndarray, lo: int, hi: int) -> None:
    """The ``greedy`` policy's flip (perfect memory) in games ``lo..hi-1`` (-1 once over)."""
    for i in range(lo, hi):
        out[i] = greedy_action(st, i, 1, MEM_PERFECT, 0) if st[i, OVER] == 0 else -1


# =====================================================================================
# the row kernels of the batched loops (memtab_env.vector.row_loops):
# st, tm (zero-width), G = (n, first, mem, window), A = ()
# =====================================================================================
row_ended, row_truncate, row_turn, row_seat, row_set_seat = column_row_kernels(
    OVER, CURRENT, SEAT
)


@njit(cache=True, inline="always")
def row_reset(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, seed: np.uint64,
              G: tuple, A: tuple, p_forget: float | None) -> None:
    reset_slot(st, rg, i, seed, G[0], G[1], p_forget)


@njit(cache=True, inline="always")
def row_next_game(st: np.ndarray, tm: np.ndarray, rg: np.ndarray, i: int, G: tuple, A: tuple,
                  p_forget: float | None) -> None:
    next_game(st, rg, i, G[0], G[1], p_forget)






@njit(cache=True, inline="always")
def row_score(st: np.ndarray, tm: np.ndarray, i: int, seat: int, G: tuple) -> int:
    return np.int64(st[i, BASE + seat])


@njit(cache=True, inline="always")
def row_result_bits(st: np.ndarray, tm: np.ndarray, i: int, G: tuple) -> int:
    return result_bits(st, i, G[0])


@njit(cache=True, inline="always")
def row_greedy(st: np.ndarray, tm: np.ndarray, i: int, scratch: np.ndarray, G: tuple) -> int:
    n, _, mem, window = G
    return greedy_action(st, i, n, mem, window)


@njit(cache=True, inline="always")
def row_random(st: np.ndarray, tm: np.ndarray, vg: np.ndarray, i: int, column: int,
               scratch: np.ndarray, G: tuple) -> int:
    return random_action(st, vg, i, column)


@njit(cache=True, inline="always")
def row_encode(st: np.ndarray, tm: np.ndarray, i: int, observer: int, out: np.ndarray, G: tuple) -> None:
    n, _, mem, window = G
    encode_row(st, i, observer, out, n, mem, window)


@njit(cache=True, inline="always")
def row_mask(st: np.ndarray, tm: np.ndarray, i: int, masks: np.ndarray, G: tuple) -> None:
    live = st[i, OVER] == 0
    for p in range(P):
        masks[i, p] = live & (st[i, STATUS + p] == DOWN)


# turns: turns started (``MemTabState.turn``)
row_flips, row_turns = counter_row_kernels(("st", CLOCK), ("st", TURN))




invalidate_stale_cache(globals(), [mk, _rng_module, _batch_module, _memory_module],
                       "memtab_batched_kernels.deps")
loops = compile_row_loops(
    globals(), "memtab", [mk, _rng_module, _batch_module, _memory_module, sys.modules[__name__]]
)
