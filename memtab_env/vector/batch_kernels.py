"""Kernels and layouts that every game's batched engine shares.

Each game's batched kernels keep B games as rows of a state matrix of their own; what
they share is here: the generator matrix (its columns and the seeding of a slot), the
reward schemes (codes and the ``win`` shares), and the single-agent view's generators
(its learner seat and the ``random`` opponents' streams).

Generator matrix ``rg`` (uint64, one row per game; generators as in
:mod:`memtab_env.vector.rng`)::

    [R_AUX, +6)       the game's auxiliary stream (the engine's random policy):
                      default_rng(SeedSequence(game_seed).spawn(2)[0]); it deals first, as
                      default_rng(game_seed)
    [R_SEEDS, +4)     the slot's seed stream: default_rng(slot seed); each later game
                      seed is its ``integers(2**63)`` (as the AEC env's ``reset()``)
    R_GAME_SEED       the game seed of the game in the slot
    R_GAMES           games started in the slot since its last explicit reset (1 = first)
    [R_MEM, +4n)      decay memory only: observer o's forgetting stream,
                      default_rng(SeedSequence(game_seed).spawn(2)[1].spawn(n)[o])

View generator matrix ``vg`` (uint64, one row per slot; the single-agent view's, apart
from the engine's so that the engine's rows stay small)::

    [0, +6)           the view's generator (``SingleAgentEnv.np_random``): default_rng(slot
                      seed), kept across the slot's episodes; it draws the random learner
                      seat and every opponent's reset seed
    [6k, +6)          the ``random`` opponent k seats after the learner (k = 1..n-1):
                      default_rng(its reset seed), as ``RandomAgent.reset(seed)``

Conventions of every game's kernels, each chosen after measuring:

- Per-game functions take the matrices and a game index ``i`` and index ``st[i, col]``.
  A row view costs numba reference counting, several times the price of a flip.
- ``p_forget`` is the decay probability, or ``None`` for the other memory models: numba
  compiles a separate version for ``None`` with the decay code pruned (a runtime decay
  flag made the flip loop 4x slower).
- Every kernel that loops over games is ``*_range(..., lo, hi)`` (games ``lo..hi-1``)
  and releases the GIL (``nogil``): the engines run slices of a batch on a few Python
  threads (:class:`memtab_env.vector.engine_base.KernelRunner`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from memtab_env.vector import rng as _rng_module
from memtab_env.vector.numba_cache import invalidate_stale_cache
from memtab_env.vector.rng import (
    PCG_WORDS,
    PCG_WORDS_64,
    integers_small,
    seed_pcg64,
    seed_pcg64_buffered,
    shuffle_row,
)

# -- generator matrix columns --------------------------------------------------------
R_AUX = 0
R_SEEDS = R_AUX + PCG_WORDS
R_GAME_SEED = R_SEEDS + PCG_WORDS_64
R_GAMES = R_GAME_SEED + 1
R_MEM = R_GAMES + 1


def rng_width(num_players: int, decay: bool) -> int:
    """Columns of the generator matrix for ``num_players`` seats."""
    return R_MEM + (PCG_WORDS_64 * num_players if decay else 0)


def view_width(num_players: int) -> int:
    """Columns of the view generator matrix: the view's generator and one per opponent."""
    return PCG_WORDS * num_players


# the spawn keys of a game seed's child streams (the AEC env: ``spawn(2)[1]`` is memory)
AUX_KEY = 0
MEMORY_KEY = 1

# -- reward schemes (memtab_env.rewards) -----------------------------------------------
REWARD_WIN = 0
REWARD_SCORE = 1
REWARD_TURNS = 2
REWARD_CODES = {"win": REWARD_WIN, "score": REWARD_SCORE, "turns": REWARD_TURNS}

# -- opponent policies -----------------------------------------------------------------
OPP_RANDOM = 0
OPP_GREEDY = 1
OPPONENT_CODES = {"random": OPP_RANDOM, "greedy": OPP_GREEDY}


@njit(cache=True)
def seed_slot(rg: np.ndarray, i: int, seed: np.uint64) -> None:
    """The slot's seed stream (the AEC env's, ``default_rng(seed)``) at an explicit reset
    with ``seed`` (every game's engine)."""
    seed_pcg64(rg, i, R_SEEDS, seed, 0, 0, 0)
    rg[i, R_GAMES] = np.uint64(1)


@njit(cache=True)
def deal(st: np.ndarray, rg: np.ndarray, i: int, game_seed: np.uint64, col: int, size: int) -> None:
    """Deal the game with seed ``game_seed`` in slot ``i`` (every game's engine): the deck
    written in ``st[i, col:col + size]`` becomes ``default_rng(game_seed).permutation`` of
    it (NumPy's Fisher-Yates); the deal borrows the auxiliary slot, which is then seeded
    with its own child stream."""
    rg[i, R_GAME_SEED] = game_seed
    seed_pcg64_buffered(rg, i, R_AUX, game_seed, 0, 0, 0)
    shuffle_row(rg, i, R_AUX, st, i, col, size)
    seed_pcg64_buffered(rg, i, R_AUX, game_seed, 1, AUX_KEY, 0)


@njit(cache=True)
def seed_memories(rg: np.ndarray, i: int, game_seed: np.uint64, n: int, p_forget: float | None) -> None:
    """The decay memory's forgetting streams of the game with seed ``game_seed`` (none for
    the other memory models, ``p_forget`` None), as the AEC env's."""
    if p_forget is not None:
        for o in range(n):
            seed_pcg64(rg, i, R_MEM + PCG_WORDS_64 * o, game_seed, 2, MEMORY_KEY, o)


@njit(cache=True, nogil=True)
def top_score_bits(st: np.ndarray, i: int, col: int, n: int) -> int:
    """The bits ``1 << (1 + seat)`` of every seat whose score ``st[i, col + seat]`` is the
    highest of the ``n`` seats (a shared top is a shared win; bit 0 is never set)."""
    best = np.int64(st[i, col])
    for j in range(1, n):
        best = max(best, np.int64(st[i, col + j]))
    bits = 0
    for j in range(n):
        if st[i, col + j] == best:
            bits |= 1 << (1 + j)
    return bits


@njit(cache=True)
def win_reward(bits: int, seat: int, n: int) -> float:
    """Terminal reward of ``seat`` under the ``win`` scheme (``rewards.win_rewards``):
    winners share +1, losers share -1, 0 for all when everybody wins. ``bits``: a
    finished game's result, bit ``1 + seat`` for each winner."""
    winners = 0
    for j in range(n):
        winners += (bits >> (1 + j)) & 1
    if winners == n:
        return 0.0
    if (bits >> (1 + seat)) & 1:
        return 1.0 / winners
    return -1.0 / (n - winners)


# -- bit masks of positions (the random policy's branch-free pick) ------------------------
_M1 = np.int64(0x5555555555555555)
_M2 = np.int64(0x3333333333333333)
_M4 = np.int64(0x0F0F0F0F0F0F0F0F)
_H01 = np.int64(0x0101010101010101)


@njit(inline="always", cache=True)
def popcount(x: int) -> int:
    """Set bits of a non-negative 63-bit ``x`` (SWAR)."""
    x = x - ((x >> 1) & _M1)
    x = (x & _M2) + ((x >> 2) & _M2)
    x = (x + (x >> 4)) & _M4
    return (x * _H01) >> 56


@njit(inline="always", cache=True)
def select_bit(x: int, j: int) -> int:
    """Position of the ``j``-th (0-based) set bit of a non-negative 63-bit ``x``, without
    branches (a loop over the bits mispredicted its exit once per game: a third of a
    random flip)."""
    pos = 0
    for w in (32, 16, 8, 4, 2, 1):
        c = popcount(x & ((np.int64(1) << w) - 1))
        go = np.int64(j >= c)
        j -= c * go
        x >>= w * go
        pos += w * go
    return pos


# -- the single-agent view's generators ------------------------------------------------
@njit(cache=True)
def opponent_stream(k: int) -> int:
    """Column of the ``random`` opponent ``k`` seats after the learner in ``vg``."""
    return PCG_WORDS * k


@njit(cache=True)
def seed_view(vg: np.ndarray, i: int, seed: np.uint64) -> None:
    """The view's generator of slot ``i`` at an explicit reset: ``default_rng(seed)``."""
    seed_pcg64_buffered(vg, i, 0, seed, 0, 0, 0)


@njit(cache=True)
def seat_learner(vg: np.ndarray, i: int, seat_mode: int, n: int) -> int:
    """The learner's seat of a new episode: ``seat_mode``, or for -1 the view's
    ``np_random.integers(n)`` (``SingleAgentEnv.reset``)."""
    return seat_mode if seat_mode >= 0 else integers_small(vg, i, 0, n)


@njit(cache=True)
def reset_opponents(vg: np.ndarray, i: int, opponents: np.ndarray, n: int) -> None:
    """``SingleAgentEnv._reset_opponents`` before every deal: each opponent, in seat order
    after the learner, gets ``reset(seed=np_random.integers(2**31))``; a ``random`` one
    then draws from ``default_rng(seed)`` (``RandomAgent.reset``). The greedy opponents'
    memories are cleared with the game, by each game's kernels."""
    for k in range(1, n):
        seed = integers_small(vg, i, 0, 2**31)
        if opponents[k] != OPP_GREEDY:
            seed_pcg64_buffered(vg, i, opponent_stream(k), np.uint64(seed), 0, 0, 0)


invalidate_stale_cache(globals(), [_rng_module], "batch_kernels.deps")
