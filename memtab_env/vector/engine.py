"""``BatchedMemTab``: B MemTab games stepped at once by compiled kernels.

Each call to :meth:`BatchedMemTab.step` makes one flip in every game (the action of the
seat on turn in that game). State lives in preallocated arrays (an int8 matrix with one row
per game, see :mod:`memtab_env.vector.kernels`); masks, observations and step results are
written into preallocated buffers that the next call overwrites (copy what you keep).

Seeds: same games as the scalar env, game for game
------------------------------------------------
A *slot* is one of the B places of the batch. ``reset(seed=...)`` gives every slot a seed
``s`` (``seed + i`` for an int, as Gymnasium's vector envs do, or one seed per slot). The
slot then plays exactly the games of the PettingZoo env ``memtab_v0.raw_env`` after
``reset(seed=s)`` followed by plain ``reset()`` calls:

- the first game has the *game seed* ``s``; each later game (auto-reset) has the game seed
  ``np.random.default_rng(s).integers(2**63)``, drawn in turn;
- a game with game seed ``g`` is dealt ``MemTab.new_game(np.random.default_rng(g))``;
- under ``decay:p`` its forgetting streams are those of
  ``Memory.reset(np.random.SeedSequence(g).spawn(2)[1])``, so forgetting is identical too;
- the random choices that are not the scalar env's (the ``random`` policy of
  :meth:`random_actions`) come from
  ``np.random.default_rng(np.random.SeedSequence(g).spawn(2)[0])``; the vector env's
  learner seats and opponents draw as the scalar Gymnasium view does
  (:mod:`memtab_env.vector.gym_vector`).

NumPy's ``SeedSequence`` and ``PCG64`` are re-expressed bit for bit inside the kernels
(:mod:`memtab_env.vector.rng`), so nothing is drawn in Python per game, and any game of the
batch is replayed by the scalar env from its game seed (:attr:`game_seed`).
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
from memtab_env.games.memtab import NUM_POSITIONS, MemTab, MemTabState, parse_layout
from memtab_env.memory import parse_memory
from memtab_env.observations.memtab import MemTabEncoder
from memtab_env.rewards import check_reward_scheme
from memtab_env.vector import kernels as kn

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

    @property
    def game_seed(self) -> np.ndarray:
        """(B,) uint64: the game seed of the game in each slot (replays it in the AEC env)."""
        return self.rng[:, kn.R_GAME_SEED]

    @property
    def games_started(self) -> np.ndarray:
        """(B,) games started in each slot since its last explicit reset (1 = the first)."""
        return self.rng[:, kn.R_GAMES]

    @property
    def final_winners(self) -> np.ndarray:
        """(B, n) bool: the winners of the games that ended by the rules in the last step."""
        bits = self._final_bits[:, None] >> (1 + np.arange(self.num_players))
        return (bits & 1).astype(bool)

    def _check_reset(self) -> None:
        if not self._has_reset:
            raise MemTabError("call reset() before using the batched engine")

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


class BatchedMemTab(BatchedGames):
    """B MemTab games in lockstep: one flip per game per :meth:`step`, with auto-reset.

    Args:
        num_envs: B, the number of games.
        num_players: 1 to 6 (as :class:`~memtab_env.games.memtab.MemTab`).
        first_player: seat that starts every game.
        memory: memory model of :meth:`observations` and :meth:`remembered`:
            ``"perfect"``, ``"none"``, ``"decay:p"`` or ``"window:k"``.
        reward: ``"win"`` (terminal +1/-1 shared), ``"score"`` (each seat's score change)
            or ``"turns"`` (-1 to the seat whose turn ends), as :mod:`memtab_env.rewards`.
        autoreset: start a slot's next game in the step that ends one (default). Without
            it a finished game stays as it is and :meth:`step` ignores its action until
            :meth:`reset` restarts it.
        parallel: threads that run the kernels: ``None`` (every core from
            ``PARALLEL_THRESHOLD`` games on, else one), ``True`` (every core), ``False``
            (one) or a number (:class:`KernelRunner`).

    Attributes (all arrays have one row per game; views into the state matrix):
        layout, status, owner, turn_flips, current, flip, pairs, turn, over, instant_win,
        winner: the fields of :class:`~memtab_env.games.memtab.MemTabState`.
        scores: (B, n) current scores. game_seed: (B,) the game seed of each game.
        final_scores, final_winners, final_instant_win, final_game_seed: results of the
        games that ended in the last :meth:`step` (rows where ``terminated``).
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        first_player: int = 0,
        memory: str = "perfect",
        reward: str = "win",
        autoreset: bool = True,
        parallel: bool | int | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise InvalidOptionError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.game = MemTab(num_players=num_players, first_player=first_player)
        self.encoder = MemTabEncoder(self.game)
        self.memory_spec = parse_memory(memory)
        self.reward_scheme = check_reward_scheme(reward)
        self.autoreset = bool(autoreset)
        n = self.num_players = self.game.num_players
        self.first_player = self.game.first_player
        self._mem = kn.MEMORY_CODES[self.memory_spec.kind]
        self._decay = self._mem == kn.MEM_DECAY
        # the decay probability, or None: kernels compile the other models without decay
        self._p_forget: float | None = float(self.memory_spec.param) if self._decay else None
        self._window = int(self.memory_spec.param) if self._mem == kn.MEM_WINDOW else 0
        self._scheme = kn.REWARD_CODES[self.reward_scheme]
        self.threads = resolve_threads(parallel, self.num_envs)
        self.run = KernelRunner(self.threads)

        b = self.num_envs
        self.state = np.zeros((b, kn.state_width(n, self._mem)), dtype=np.int8)
        self.rng = np.zeros((b, kn.rng_width(n, self._decay)), dtype=np.uint64)
        self.obs_size = self.encoder.size
        # preallocated outputs
        self._rewards = np.zeros((b, n), dtype=np.float32)
        self._terminated = np.zeros(b, dtype=bool)
        self.final_scores = np.zeros((b, n), dtype=np.int8)
        self._final_bits = np.zeros(b, dtype=np.int64)
        self.final_game_seed = np.zeros(b, dtype=np.uint64)
        self._masks = np.zeros((b, NUM_POSITIONS), dtype=np.int8)
        self._obs: np.ndarray | None = None  # int8 observations, allocated on first use
        self._remembered = np.zeros((b, NUM_POSITIONS), dtype=bool)
        self._actions = np.zeros(b, dtype=np.int64)
        self._observers = np.full(b, -1, dtype=np.int64)
        self._all = np.arange(b, dtype=np.int64)
        self._has_reset = False
        self._masks_fresh = False

    # -- views of the state matrix ----------------------------------------------------
    @property
    def layout(self) -> np.ndarray:
        return self.state[:, kn.LAYOUT : kn.LAYOUT + NUM_POSITIONS]

    @property
    def status(self) -> np.ndarray:
        return self.state[:, kn.STATUS : kn.STATUS + NUM_POSITIONS]

    @property
    def owner(self) -> np.ndarray:
        return self.state[:, kn.OWNER : kn.OWNER + NUM_POSITIONS]

    @property
    def turn_flips(self) -> np.ndarray:
        return self.state[:, kn.TFLIPS : kn.TFLIPS + 3]

    @property
    def current(self) -> np.ndarray:
        return self.state[:, kn.CURRENT]

    @property
    def flip(self) -> np.ndarray:
        return self.state[:, kn.FLIP]

    @property
    def pairs(self) -> np.ndarray:
        return self.state[:, kn.PAIRS]

    @property
    def turn(self) -> np.ndarray:
        return self.state[:, kn.TURN]

    @property
    def over(self) -> np.ndarray:
        return self.state[:, kn.OVER].astype(bool)

    @property
    def instant_win(self) -> np.ndarray:
        return self.state[:, kn.IWIN].astype(bool)

    @property
    def winner(self) -> np.ndarray:
        return self.state[:, kn.WINNER]

    @property
    def scores(self) -> np.ndarray:
        return self.state[:, kn.BASE : kn.BASE + self.num_players]

    @property
    def final_instant_win(self) -> np.ndarray:
        """(B,) bool: whether the games that ended in the last step ended by instant win."""
        return (self._final_bits & 1).astype(bool)

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
            layouts: optional deals, one per reset slot (card codes or kind ids, checked as
                in ``MemTab.from_layout``), replacing the seeded deal; the game seed still
                seeds memory and auxiliary streams (as the AEC env's ``layout`` option).
        """
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
        self.run(
            kn.reset_range, idx.size, self.state, self.rng, idx, seeds, self.num_players,
            self.first_player, self._p_forget,
        )  # fmt: skip
        if parsed is not None:
            kn.set_layouts(self.state, idx, parsed)
        self._has_reset = True
        self._masks_fresh = False

    def step(self, actions: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flip ``actions[i]`` in game ``i`` for the seat on turn there.

        Every action is checked first; an illegal one raises
        :class:`~memtab_env.errors.IllegalActionError` naming the game and its legal
        flips, and no game changes. Returns ``(rewards, terminated)``: ``rewards`` (B, n)
        float32 per seat, ``terminated`` (B,) bool. With auto-reset the games that ended
        are already replaced by their slot's next game; their results are in
        :attr:`final_scores`, :attr:`final_winners`, :attr:`final_instant_win` and
        :attr:`final_game_seed`. The arrays are overwritten by the next step.
        """
        self._check_reset()
        acts = self._actions
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise IllegalActionError(
                f"actions must be an integer array of shape ({self.num_envs},), "
                f"got {a.dtype} {a.shape}"
            )
        acts[:] = a
        bad = (kn.first_illegal if self.autoreset else kn.first_illegal_live)(self.state, acts)
        if bad >= 0:
            legal = np.flatnonzero(self.status[bad] == 0).tolist() if not self.over[bad] else []
            raise IllegalActionError(
                f"game {bad}: cannot flip position {int(a[bad])}; face-down positions that "
                f"may be flipped: {legal}. No game was changed."
            )
        args = (
            self.state, self.rng, acts, self._rewards, self._terminated, self.final_scores,
            self._final_bits, self.final_game_seed, self._masks, self.num_players,
            self.first_player, self._p_forget, self._scheme, self.autoreset,
        )  # fmt: skip
        self.run(kn.step_range, self.num_envs, *args)
        self._masks_fresh = True  # step wrote the masks of the games it left
        return self._rewards, self._terminated

    # -- queries ------------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """(B, 28) int8: the legal flips of the seat on turn (all zeros once over).
        A preallocated buffer, overwritten by the next step (which computes it)."""
        self._check_reset()
        if self._masks_fresh:
            return self._masks
        self._masks_fresh = True
        self.run(kn.masks_range, self.num_envs, self.state, self._masks)
        return self._masks

    def observations(
        self,
        observer: int | Sequence[int] | np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B, D) flat observations, byte for byte ``MemTabEncoder.encode(state, observer,
        memory.remembered(observer, face_down))``.

        Args:
            observer: ``None`` (the seat on turn in each game), a seat, or one per game.
            out: optional (B, D) int8 or float32 array to write into; by default a
                preallocated int8 buffer, overwritten by the next call.
        """
        self._check_reset()
        observers = self._observer_array(observer)
        if out is None:
            if self._obs is None:
                self._obs = np.zeros((self.num_envs, self.obs_size), dtype=np.int8)
            out = self._obs
        elif out.shape != (self.num_envs, self.obs_size) or not out.flags.c_contiguous:
            raise InvalidOptionError(
                f"out must be a C-contiguous array of shape ({self.num_envs}, {self.obs_size})"
            )
        self.run(
            kn.encode_range, self.num_envs, self.state, observers, out, self.num_players,
            self._mem, self._window,
        )  # fmt: skip
        return out

    def remembered(self, observer: int | Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """(B, 28) bool: ``Memory.remembered(observer, face_down)`` of each game
        (observer ``None`` = the seat on turn). A preallocated buffer."""
        self._check_reset()
        observers = self._observer_array(observer)
        kn.remembered_range(
            self.state, observers, self._remembered, self.num_players, self._mem,
            self._window, 0, self.num_envs,
        )  # fmt: skip
        return self._remembered

    def random_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64: a uniform legal flip per game from its auxiliary stream
        (``legal[rng.integers(len(legal))]``; -1 for a finished game)."""
        return self._policy(False, out)

    def greedy_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64: the flip of the deterministic ``greedy`` policy (perfect memory) of
        the seat on turn in each game (-1 for a finished game)."""
        return self._policy(True, out)

    def _policy(self, greedy: bool, out: np.ndarray | None) -> np.ndarray:
        self._check_reset()
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        if greedy:
            self.run(kn.greedy_range, self.num_envs, self.state, out)
        else:
            self.run(kn.random_range, self.num_envs, self.state, self.rng, out)
        return out

    def get_state(self, i: int) -> MemTabState:
        """Game ``i`` as a :class:`~memtab_env.games.memtab.MemTabState` (a copy of the
        scalar part of its row), for the scalar engine, renderers and records."""
        self._check_reset()
        st = MemTabState.__new__(MemTabState)
        st.data = self.state[i, : kn.ROW].copy()
        return st

    def _buffers(self) -> tuple[np.ndarray, ...]:
        return (
            self.state, self.rng, self._rewards, self._terminated, self.final_scores,
            self._final_bits, self.final_game_seed, self._masks, self._remembered,
            self._actions, self._observers, self._all,
        )  # fmt: skip
