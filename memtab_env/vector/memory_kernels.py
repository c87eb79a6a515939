"""The memory models (:mod:`memtab_env.memory`) as kernels: the one form that the scalar
:class:`memtab_env.memory.Memory` and every game's batch call.

A caller keeps, per game, the reveal time of every position (1-based, 0 never), a reveal
clock, and each seat's clock before its latest action; under ``decay:p`` also one
remembered bit per (observer, position) and one forgetting stream per observer (a
:mod:`memtab_env.vector.rng` generator of 4 words). With those, :func:`threshold` and
:func:`remember_reveal` decide what every observer remembers, for any game.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from memtab_env.vector import rng as _rng_module
from memtab_env.vector.numba_cache import invalidate_stale_cache
from memtab_env.vector.rng import PCG_WORDS_64, next_double

MEM_PERFECT = 0
MEM_NONE = 1
MEM_DECAY = 2
MEM_WINDOW = 3
MEMORY_CODES = {"perfect": MEM_PERFECT, "none": MEM_NONE, "decay": MEM_DECAY, "window": MEM_WINDOW}


@njit(inline="always", cache=True)
def threshold(mem: int, window: int, clock: int, before_last: int) -> int:
    """``Memory.source``'s threshold: under ``perfect``, ``none`` and ``window:k`` an
    observer remembers a card exactly when its latest reveal time (1-based, 0 never) is
    above it: 0 (ever revealed), ``before_last`` (the reveal count before the observer's
    latest action) or ``max(0, clock - k)``. Under ``decay`` it is above every reveal
    time: the remembered bits decide."""
    if mem == MEM_PERFECT:
        return 0
    if mem == MEM_NONE:
        return before_last
    if mem == MEM_WINDOW:
        return max(0, clock - window)
    return 2**31 - 1


@njit(inline="always", cache=True)
def remember_reveal(bits: np.ndarray, rg: np.ndarray, i: int, col: int, pos: int, num: int,
                    n: int, p_forget: float | None, stream: int) -> None:
    """The decay model's reveal of ``pos`` in game ``i``: each remembered bit of each
    observer (``bits[i, col + num * o + q]``, ``num`` positions) is forgotten with
    probability ``p_forget``, one double of the observer's stream (``rg[i, stream + 4 o]``
    on) per remembered position in position order (numpy's ``rng.random(idx.size) < p``);
    then every observer remembers ``pos``. Nothing for the other models (``p_forget``
    None)."""
    if p_forget is None:
        return
    for o in range(n):
        row = col + num * o
        if p_forget > 0.0:
            ro = stream + PCG_WORDS_64 * o
            for q in range(num):
                if bits[i, row + q] != 0 and next_double(rg, i, ro) < p_forget:
                    bits[i, row + q] = 0
    for o in range(n):
        bits[i, col + num * o + pos] = 1


invalidate_stale_cache(globals(), [_rng_module], "memory_kernels.deps")
