"""What the batched engines of every game share: per-slot seeds, the thread runner of
the kernels, and :class:`BatchedGames`, the engines' base class.

Each game's batched engine (``BatchedMemTab``, ``BatchedPelmanism``,
``BatchedMemoryBoard``, in the game's folder under :mod:`memtab_env.games`) keeps B games
in preallocated arrays; :class:`BatchedGames` steps them with the loops of
:mod:`memtab_env.vector.row_loops` compiled over the game's row kernels, so resets,
steps, masks, observations, the random policy, seeds, threads, game counts and winners
work the same way for all of them.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np

from memtab_env.errors import IllegalActionError, InvalidOptionError, MemTabError
from memtab_env.memory import parse_memory
from memtab_env.rewards import check_reward_scheme
from memtab_env.vector.batch_kernels import R_GAME_SEED, R_GAMES, REWARD_CODES, rng_width
from memtab_env.vector.memory_kernels import MEM_DECAY, MEM_WINDOW, MEMORY_CODES

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


def column_view(matrix: str, col: int, doc: str) -> property:
    """A read-only property of a batched engine: column ``col`` of its matrix attribute
    ``matrix`` (``"state"``, ``"times"`` or ``"rng"``), a (B,) view."""
    return property(lambda self: getattr(self, matrix)[:, col], doc=doc)


def block_view(matrix: str, start: int, width: int, doc: str) -> property:
    """As :func:`column_view`, the ``width`` columns from ``start``: a (B, width) view."""
    return property(lambda self: getattr(self, matrix)[:, start : start + width], doc=doc)


class BatchedGames:
    """A game's batched engine: B games in lockstep, one action per game per :meth:`step`
    (the action of the seat on turn in that game), with auto-reset.

    What every engine shares lives here: the options of memory model, reward, auto-reset
    and threads (:meth:`_setup`), the preallocated buffers, and :meth:`reset`,
    :meth:`step`, :meth:`action_masks`, :meth:`observations` and :meth:`random_actions`
    over the game's row kernels. A subclass builds its game and encoder, allocates its
    state matrices, and gives ``kernels`` (its batched kernels module, whose ``loops``
    :mod:`memtab_env.vector.row_loops` compiled), :meth:`_row_args`, ``flips`` and
    ``get_state``.

    Seeds: a slot's games are those of the AEC env after ``reset(seed=s)`` and plain
    ``reset()`` calls, game for game (see ``BatchedMemTab``).
    """

    #: the game's batched kernels module (its ``loops``)
    kernels: ClassVar[Any]
    #: dtype of :attr:`final_scores`
    score_dtype: ClassVar[Any] = np.int8
    #: how an illegal action's error names it and the legal ones
    action_words: ClassVar[tuple[str, str]] = ("play action", "legal actions of the seat on turn")

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

    def _setup(self, num_envs: int, game: Any, encoder: Any, memory: str, reward: str,
               autoreset: bool, parallel: bool | int | None) -> None:
        """Check and keep the options every engine takes, and allocate the generator
        matrix and the buffers of :meth:`step` (the subclass then allocates its state)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise InvalidOptionError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = b = int(num_envs)
        self.game = game
        self.encoder = encoder
        self.memory_spec = parse_memory(memory)
        self.reward_scheme = check_reward_scheme(reward)
        self.autoreset = bool(autoreset)
        n = self.num_players = game.num_players
        self.first_player = game.first_player
        self._mem = MEMORY_CODES[self.memory_spec.kind]
        self._decay = self._mem == MEM_DECAY
        # the decay probability, or None: kernels compile the other models without decay
        self._p_forget: float | None = float(self.memory_spec.param) if self._decay else None
        self._window = int(self.memory_spec.param) if self._mem == MEM_WINDOW else 0
        self._scheme = REWARD_CODES[self.reward_scheme]
        #: flips at which a game not over is truncated: the AEC env's ``max_game_length``
        #: (a game whose actions are all flips; a game with other actions caps them itself)
        self._max_flips = int(game.info.max_game_length)
        self.threads = resolve_threads(parallel, b)
        self.run = KernelRunner(self.threads)
        self.rng = np.zeros((b, rng_width(n, self._decay)), dtype=np.uint64)
        self.obs_size = encoder.size
        actions = game.info.num_actions
        self._rewards = np.zeros((b, n), dtype=np.float32)
        self._terminated = np.zeros(b, dtype=bool)
        self._truncated = np.zeros(b, dtype=bool)
        self.final_scores = np.zeros((b, n), dtype=self.score_dtype)
        self._final_bits = np.zeros(b, dtype=np.int64)
        self.final_game_seed = np.zeros(b, dtype=np.uint64)
        self.final_turns = np.zeros(b, dtype=np.int64)
        self.final_flips = np.zeros(b, dtype=np.int64)
        self._masks = np.zeros((b, actions), dtype=np.int8)
        self._scratch: np.ndarray | None = None  # the random policy's, allocated on first use
        self._obs = None  # int8 observations, allocated on first use
        self._actions = np.zeros(b, dtype=np.int64)
        self._observers = np.full(b, -1, dtype=np.int64)
        self._all = np.arange(b, dtype=np.int64)
        self._has_reset = False
        self._masks_fresh = False

    # -- what a game gives ------------------------------------------------------------
    def _row_args(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
        """``(st, tm, G, A)`` of the game's row kernels (:mod:`memtab_env.vector.row_loops`):
        its two state matrices, its constants and its deal's constants."""
        raise NotImplementedError

    def _parse_layout(self, layout: Any) -> np.ndarray:
        """One deal of :meth:`reset`'s ``layouts``, checked (the game's own parser)."""
        return self.game.parse_layout(layout)

    #: writes checked deals into fresh games (``(indices, deals)``), or None: no layouts
    _set_layouts: Callable[[np.ndarray, np.ndarray], None] | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def reset(
        self,
        seed: int | Sequence[int] | np.ndarray | None = None,
        indices: Sequence[int] | np.ndarray | None = None,
        layouts: Sequence[Any] | np.ndarray | None = None,
    ) -> None:
        """Start new games (explicit reset: the slots' seed streams restart).

        Args:
            seed: ``None`` (fresh entropy), an int (slot ``j`` of the reset gets
                ``seed + j``) or one seed per reset slot, each in ``[0, 2**64)``.
            indices: the slots to reset (default: all). The first call resets all.
            layouts: optional deals, one per reset slot (checked as the game's
                ``from_layout``), replacing the seeded deal; the game seed still seeds
                memory and auxiliary streams (as the AEC env's ``layout`` option).
        """
        if layouts is not None and self._set_layouts is None:
            raise InvalidOptionError(f"{type(self).__name__} takes no layouts; reset without them")
        idx, seeds, parsed = self._reset_slots(seed, indices, layouts, self._parse_layout)
        st, tm, consts, deal = self._row_args()
        self.run(self.kernels.loops.reset_range, idx.size, st, tm, self.rng, idx, seeds, consts,
                 deal, self._p_forget)
        if parsed is not None and self._set_layouts is not None:
            self._set_layouts(idx, parsed)
        self._has_reset = True
        self._masks_fresh = False

    def step(self, actions: Sequence[int] | np.ndarray) -> tuple[np.ndarray, ...]:
        """Play ``actions[i]`` in game ``i`` for the seat on turn there.

        Every action is checked first; an illegal one raises
        :class:`~memtab_env.errors.IllegalActionError` naming the game and its legal
        actions, and no game changes (without auto-reset the actions of ended games are
        ignored). Returns ``(rewards, terminated, truncated)``: ``rewards`` (B, n) float32
        per seat, ``terminated`` (B,) bool (over by the rules), ``truncated`` (B,) bool
        (the game's cap). With auto-reset the games that ended are already replaced by
        their slot's next game; their results are in :attr:`final_scores`,
        :attr:`final_winners`, :attr:`final_game_seed`, :attr:`final_turns` and
        :attr:`final_flips`. The arrays are overwritten by the next step.
        """
        self._step(actions)
        return self._rewards, self._terminated, self._truncated

    def _step(self, actions: Sequence[int] | np.ndarray) -> None:
        self._check_reset()
        acts = self._actions
        a = take_actions(actions, acts)
        masks = self.action_masks()  # fresh after every step, which writes them
        st, tm, consts, deal = self._row_args()
        loops = self.kernels.loops
        bad = (loops.first_illegal if self.autoreset else loops.first_illegal_live)(
            st, tm, masks, acts)
        if bad >= 0:
            what, legal = self.action_words
            raise IllegalActionError(
                f"game {bad}: cannot {what} {int(a[bad])} (actions are 0..{masks.shape[1] - 1}); "
                f"{legal}: {np.flatnonzero(masks[bad]).tolist()}. No game was changed."
            )
        self.run(
            loops.step_range, self.num_envs, st, tm, self.rng, acts, self._rewards,
            self._terminated, self._truncated, self.final_scores, self._final_bits,
            self.final_game_seed, self.final_turns, self.final_flips, self._masks, self._scheme,
            self.autoreset, self._max_flips, consts, deal, self._p_forget,
        )  # fmt: skip
        self._masks_fresh = True  # step wrote the masks of the games it left

    # -- queries ------------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """(B, A) int8: the legal actions of the seat on turn (all zeros once ended).
        A preallocated buffer, overwritten by the next step (which computes it)."""
        self._check_reset()
        if not self._masks_fresh:
            st, tm, consts, _ = self._row_args()
            self.run(self.kernels.loops.masks_range, self.num_envs, st, tm, self._masks, consts)
            self._masks_fresh = True
        return self._masks

    def observations(
        self,
        observer: int | Sequence[int] | np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B, D) flat observations, byte for byte the game encoder's ``encode(state,
        observer, memory.remembered(observer, face_down))``.

        Args:
            observer: ``None`` (the seat on turn in each game), a seat, or one per game.
            out: optional (B, D) int8 or float32 C-contiguous array to write into; by
                default a preallocated int8 buffer, overwritten by the next call.
        """
        self._check_reset()
        observers = self._observer_array(observer)
        if out is None:
            if self._obs is None:
                self._obs = np.zeros((self.num_envs, self.obs_size), dtype=np.int8)
            out = self._obs
        elif (
            out.shape != (self.num_envs, self.obs_size)
            or not out.flags.c_contiguous
            or out.dtype not in (np.int8, np.float32)
        ):
            raise InvalidOptionError(
                f"out must be a C-contiguous int8 or float32 array of shape "
                f"({self.num_envs}, {self.obs_size}), got {out.dtype} {out.shape}"
            )
        st, tm, consts, _ = self._row_args()
        self.run(self.kernels.loops.encode_range, self.num_envs, st, tm, observers, out, consts)
        return out

    def random_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64: a uniform legal action per game from its auxiliary stream
        (``legal[rng.integers(len(legal))]``; -1 for an ended game)."""
        self._check_reset()
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        if self._scratch is None:
            self._scratch = np.zeros_like(self._masks)
        st, tm, consts, _ = self._row_args()
        self.run(self.kernels.loops.random_range, self.num_envs, st, tm, self.rng, out,
                 self._scratch, consts)
        return out

    game_seed = column_view(
        "rng", R_GAME_SEED, "(B,) uint64: the game seed of the game in each slot (replays it in the AEC env)."
    )
    games_started = column_view(
        "rng", R_GAMES, "(B,) games started in each slot since its last explicit reset (1 = the first)."
    )

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
        shared = (self.rng, self._rewards, self._terminated, self._truncated, self.final_scores,
                  self._final_bits, self.final_game_seed, self.final_turns, self.final_flips,
                  self._masks, self._actions, self._observers, self._all)
        scratch = () if self._scratch is None else (self._scratch,)
        st, tm, _, _ = self._row_args()
        return (st, tm, *shared, *scratch, *self._extra_buffers())

    def _extra_buffers(self) -> tuple[np.ndarray, ...]:
        """The game's own buffers besides its state matrices."""
        return ()

    def memory_bytes_per_game(self) -> int:
        """Bytes of state, generators and preallocated buffers per game."""
        total = sum(a.nbytes for a in self._buffers())
        total += self._obs.nbytes if self._obs is not None else 0
        return total // self.num_envs
