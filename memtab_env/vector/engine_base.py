"""What the batched engines of every game share: per-slot seeds, the thread runner of
the kernels, and :class:`BatchedGames`, the engines' base class.

Each game's batched engine (``BatchedMemTab``, ``BatchedPelmanism``,
``BatchedMemoryBoard``, in the game's folder under :mod:`memtab_env.games`) keeps B games
in preallocated arrays stepped by its numba kernels; seeds, threads, game counts and
winners work the same way for all of them.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from memtab_env.errors import IllegalActionError, InvalidOptionError, MemTabError
from memtab_env.vector.batch_kernels import R_GAME_SEED, R_GAMES

#: batches at least this large run on every core by default (``parallel=None``)
PARALLEL_THRESHOLD = 2048
_SEED_LIMIT = 2**64


def seed_array(seed: int | Sequence[int] | np.ndarray | None, count: int) -> np.ndarray:
    """Per-slot seeds (uint64) from ``None`` (fresh OS entropy), an int (``seed + i``) or
    one seed per slot; every seed must be an integer in ``[0, 2**64)``."""
    if seed is None:
        return np.random.default_rng().integers(2**63, size=count, dtype=np.uint64)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        base = int(seed)
        if base < 0 or base + count > _SEED_LIMIT:
            raise InvalidOptionError(
                f"seed must be an integer with 0 <= seed and seed + {count} <= 2**64, got {seed}"
            )
        return np.arange(count, dtype=np.uint64) + np.uint64(base)
    try:
        items = list(seed)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidOptionError(
            f"seed must be None, an int or a sequence of {count} ints, got {seed!r}"
        ) from None
    if isinstance(seed, (str, bytes)) or not all(
        isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in items
    ):
        raise InvalidOptionError(f"seeds must be integers, got {seed!r}")
    items = [int(x) for x in items]
    if len(items) != count:
        raise InvalidOptionError(f"expected {count} seeds (one per game), got {len(items)}")
    if any(not 0 <= x < _SEED_LIMIT for x in items):
        raise InvalidOptionError("every seed must be an integer in [0, 2**64)")
    return np.array(items, dtype=np.uint64)


def take_actions(actions: Sequence[int] | np.ndarray, out: np.ndarray) -> np.ndarray:
    """Check that ``actions`` is one integer per game and copy it into ``out`` (the
    engine's int64 buffer); returns the array as given, for error messages."""
    a = np.asarray(actions)
    if a.shape != out.shape or a.dtype.kind not in "iu":
        raise IllegalActionError(
            f"actions must be an integer array of shape ({out.shape[0]},), got {a.dtype} {a.shape}"
        )
    np.copyto(out, a, casting="unsafe")
    return a


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class KernelRunner:
    """Runs a range kernel ``kernel(*args, lo, hi)`` over ``[0, count)`` on ``threads``
    threads: the calling thread and a small pool pull slices from a shared counter.

    The kernels release the GIL (``nogil``), so slices run in parallel. Chosen over numba's
    ``parallel=True``/``prange`` after measuring both on the project's shared 2-core
    machine: with other processes on the cores, an OpenMP ``prange`` step spin-waited for
    its descheduled worker and ran 10-20x slower than one thread. Here the calling thread
    never waits for a worker that has not started: slices are claimed one at a time
    (``chunks_per_thread`` per thread), so a starved worker leaves its share to the
    caller, which then only waits for slices already being run. On an idle machine each
    call costs some 10-40 us more than ``prange`` (one kernel dispatch per slice), small
    beside the kernels at the batch sizes where threads are used.
    """

    def __init__(self, threads: int, chunks_per_thread: int = 4) -> None:
        self.threads = max(1, int(threads))
        self.chunks_per_thread = chunks_per_thread
        self._pool: ThreadPoolExecutor | None = None

    def __call__(self, kernel: Callable[..., Any], count: int, *args: Any) -> None:
        t = min(self.threads, count)
        if t <= 1:
            kernel(*args, 0, count)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="memtab-vector")
        n = min(count, self.chunks_per_thread * t)
        bounds = [(k * count) // n for k in range(n + 1)]
        ticket = itertools.count()
        lock = threading.Lock()
        idle = threading.Condition(lock)
        state = {"running": 0, "error": None}  # slices claimed by workers and not finished

        def work(worker: bool) -> None:
            while True:
                with lock:  # claiming and counting at once: the caller sees every claim
                    k = next(ticket)
                    if k >= n:
                        return
                    if worker:
                        state["running"] += 1
                try:
                    kernel(*args, bounds[k], bounds[k + 1])
                except BaseException as exc:  # re-raised in the calling thread
                    state["error"] = state["error"] or exc
                finally:
                    if worker:
                        with lock:
                            state["running"] -= 1
                            idle.notify_all()

        for _ in range(t - 1):
            self._pool.submit(work, True)
        work(False)
        with lock:
            while state["running"]:
                idle.wait()
        if state["error"] is not None:
            raise state["error"]

    def close(self) -> None:
        """Stop the pool's threads (a later call starts them again)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def resolve_threads(parallel: bool | int | None, count: int) -> int:
    """Threads for a batch of ``count`` games: ``None`` every core from
    ``PARALLEL_THRESHOLD`` games on, ``True`` every core, ``False`` one, or a number."""
    if parallel is None:
        return available_cores() if count >= PARALLEL_THRESHOLD else 1
    if isinstance(parallel, (bool, np.bool_)):
        return available_cores() if parallel else 1
    if isinstance(parallel, (int, np.integer)) and parallel >= 1:
        return int(parallel)
    raise InvalidOptionError(
        f"parallel must be None, True, False or a number of threads >= 1, got {parallel!r}"
    )


class BatchedGames:
    """What the batched engines of every game share: the per-slot seeds and game counts,
    the winners of the games that ended in the last step, observer seats, the thread
    runner and the memory count. Subclasses set ``num_envs``, ``num_players``,
    ``state``, ``rng``, ``run`` (a :class:`KernelRunner`), ``_final_bits``,
    ``_observers``, ``_obs`` and ``_has_reset``, and list their arrays in
    :meth:`_buffers`."""

    num_envs: int
    num_players: int
    state: np.ndarray
    rng: np.ndarray
    run: KernelRunner
    _final_bits: np.ndarray
    _observers: np.ndarray
    _obs: np.ndarray | None
    _has_reset: bool
    _all: np.ndarray

    @property
    def game_seed(self) -> np.ndarray:
        """(B,) uint64: the game seed of the game in each slot (replays it in the AEC env)."""
        return self.rng[:, R_GAME_SEED]

    @property
    def games_started(self) -> np.ndarray:
        """(B,) games started in each slot since its last explicit reset (1 = the first)."""
        return self.rng[:, R_GAMES]

    @property
    def flips(self) -> np.ndarray:
        """(B,) flips made in each game so far (a view of the engine's clock)."""
        raise NotImplementedError

    @property
    def final_winners(self) -> np.ndarray:
        """(B, n) bool: the winners of the games that ended by the rules in the last step."""
        bits = self._final_bits[:, None] >> (1 + np.arange(self.num_players))
        return (bits & 1).astype(bool)

    def _check_reset(self) -> None:
        if not self._has_reset:
            raise MemTabError("call reset() before using the batched engine")

    def _reset_slots(
        self,
        seed: int | Sequence[int] | np.ndarray | None,
        indices: Sequence[int] | np.ndarray | None,
        layouts: Sequence[Any] | np.ndarray | None,
        parse_layout: Callable[[Any], np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The checked arguments of ``reset``: the slots, one seed per slot, and the deals
        ``parse_layout`` (the game's own parser) read, one per slot, or None."""
        if indices is None:
            idx = self._all
        else:
            if not self._has_reset:
                raise MemTabError("the first reset() resets every game: call it without indices")
            idx = np.asarray(indices, dtype=np.int64).reshape(-1)
            if idx.size and (idx.min() < 0 or idx.max() >= self.num_envs):
                raise InvalidOptionError(f"indices must be in [0, {self.num_envs - 1}]")
        seeds = seed_array(seed, idx.size)
        parsed = None
        if layouts is not None:
            rows = list(layouts)
            if len(rows) != idx.size:
                raise InvalidOptionError(f"expected {idx.size} layouts (one per reset game)")
            parsed = np.stack([parse_layout(row) for row in rows]) if rows else None
        return idx, seeds, parsed

    def _observer_array(self, observer: int | Sequence[int] | np.ndarray | None) -> np.ndarray:
        if observer is None:
            return self._observers  # all -1: the seat on turn
        obs = np.broadcast_to(np.asarray(observer, dtype=np.int64), (self.num_envs,))
        if obs.min() < 0 or obs.max() >= self.num_players:
            raise InvalidOptionError(f"observer seats must be in [0, {self.num_players - 1}]")
        return np.ascontiguousarray(obs)

    def close(self) -> None:
        """Stop the worker threads (the engine stays usable; they restart on demand)."""
        self.run.close()

    def _buffers(self) -> tuple[np.ndarray, ...]:
        """Every array the engine holds besides the observation buffer."""
        raise NotImplementedError

    def memory_bytes_per_game(self) -> int:
        """Bytes of state, generators and preallocated buffers per game."""
        total = sum(a.nbytes for a in self._buffers())
        total += self._obs.nbytes if self._obs is not None else 0
        return total // self.num_envs
