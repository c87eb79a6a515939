"""Where benchmark games are played: in this process, in a local process pool, or on a Ray
cluster. Results never depend on the backend.

The unit of work is a :class:`Job`: one table (a lineup of agents), a chunk of deals, every
seat rotation of each deal. :func:`run_job` plays it with
:func:`memtab_env.play.play_game` (the one game loop of the package) and returns the game
records in (deal, rotation) order. Every game resets its agents with seeds derived from
the deal's seed, so a game's outcome depends only on the lineup, the deal and the
rotation, never on which worker played it or what it played before; and every backend
returns the jobs' results in submission order, so aggregation is deterministic.

Backends:

- ``inprocess`` (default): jobs one after another in this process;
- ``multiprocessing``: a pool of ``workers`` processes (``spawn`` start method);
- ``ray``: ``pip install -e ".[ray]"`` in the memtab-env checkout; joins the cluster at ``address`` (or the
  one named by ``RAY_ADDRESS``) or starts a local one with ``workers`` CPUs. Every node
  needs memtab-env installed, and a model given as a path must exist at that path on
  every node.

A saved model is loaded as data (its weights and plain settings, nothing unpickled:
:mod:`memtab_env.agents.model_data`); only a user's explicit ``--trust-pickle`` lets a
model file be unpickled, and only a path named on the command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memtab_env.errors import InvalidOptionError, MemTabError

BACKENDS = ("inprocess", "multiprocessing", "ray")


class BenchmarkError(MemTabError, RuntimeError):
    """A benchmark game could not be played (an agent failed or made an illegal action);
    the message names the track, deal, rotation and seats."""


@dataclass(frozen=True)
class AgentSpec:
    """How to build an agent in any worker.

    Attributes:
        spec: a built-in agent name of the track's game, or a path to a saved model.
        label: the name shown in tables and records.
        kwargs: keyword arguments for :func:`memtab_env.agents.make`, as sorted ``(name, value)`` pairs.
        trust_pickle: load a model file with Stable-Baselines3's unpickling loader (the
            command line's explicit ``--trust-pickle``; never from a result or record).
    """

    spec: str
    label: str = ""
    kwargs: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    trust_pickle: bool = False

    @property
    def name(self) -> str:
        return self.label or self.spec

    def build(self, game: str) -> Any:
        """A fresh agent for ``game``."""
        from memtab_env import agents

        kwargs = dict(self.kwargs)
        if self.trust_pickle and self.spec.endswith(".zip"):
            kwargs["trust_pickle"] = True
        return agents.make(self.spec, game=game, **kwargs)


@dataclass(frozen=True)
class Job:
    """A table and a chunk of deals.

    Attributes:
        track: the track id (its options and game come from the track table), or a
            :class:`memtab_env.protocol.tracks.Track` that is in no table.
        lineup: the agents; in rotation ``r``, ``lineup[i]`` sits in seat ``(i + r) % n``.
        deals: ``(deal index, seed)`` pairs.
        rotations: the rotations played for every deal, in order.
        tag: ``(key, value)`` pairs copied into every record's ``benchmark`` field.
    """

    track: Any
    lineup: tuple[AgentSpec, ...]
    deals: tuple[tuple[int, int], ...]
    rotations: tuple[int, ...]
    tag: tuple[tuple[str, Any], ...] = ()


# Per-process caches: agents are reset before every game, so reusing them is exact.
_AGENTS: dict[tuple[str, str, str, int], Any] = {}
_ENVS: dict[str, Any] = {}


def run_job(job: Job) -> list[dict[str, Any]]:
    """Play every (deal, rotation) of ``job``; return the records, each annotated with
    ``agents`` (the label in every seat) and ``benchmark`` (track, deal, rotation,
    ``seats``: the lineup index in every seat, plus the job's tag)."""
    from memtab_env.play import make_raw_env, play_game
    from memtab_env.protocol.tracks import Track, get_track

    track = job.track if isinstance(job.track, Track) else get_track(job.track)
    n = track.num_players
    if len(job.lineup) != n:
        raise InvalidOptionError(f"track {track.id} seats {n} players, the lineup has {len(job.lineup)}")
    env_key = json.dumps([track.key, track.game, dict(track.options)], sort_keys=True)
    env = _ENVS.get(env_key)
    if env is None:
        env = _ENVS[env_key] = make_raw_env(track.game, **track.options)
    players = []
    for slot, spec in enumerate(job.lineup):
        key = (spec.spec, json.dumps(dict(spec.kwargs), sort_keys=True), track.game, slot, spec.trust_pickle)
        if key not in _AGENTS:
            _AGENTS[key] = spec.build(track.game)
        players.append(_AGENTS[key])
    out = []
    for deal, seed in job.deals:
        for r in job.rotations:
            seats = [(s - r) % n for s in range(n)]  # lineup index in every seat
            try:
                record = play_game(env, [players[i] for i in seats], seed=seed)
            except Exception as exc:
                who = ", ".join(f"seat {s}: {job.lineup[i].name}" for s, i in enumerate(seats))
                raise BenchmarkError(
                    f"track {track.id}, deal {deal} (seed {seed}), rotation {r} ({who}): {exc}"
                ) from exc
            record["agents"] = [job.lineup[i].name for i in seats]
            record["benchmark"] = {"track": track.key, **dict(job.tag), "deal": deal,
                                   "rotation": r, "seats": seats}
            out.append(record)
    return out


def release_agents(spec: AgentSpec) -> list[Any]:
    """Drop this process's cached agents built from ``spec`` and return them (after an
    in-process evaluation: the agents that played, with their counters; the next job
    builds them afresh, e.g. from a model file that was rewritten since)."""
    kwargs = json.dumps(dict(spec.kwargs), sort_keys=True)
    keys = [k for k in _AGENTS if k[0] == spec.spec and k[1] == kwargs]
    return [_AGENTS.pop(k) for k in keys]


Progress = Callable[[int, int], None]
"""Called as ``progress(job_index, games_in_job)`` when a job is done."""


class Backend:
    """Runs jobs; returns their results in job order."""

    name = "base"

    def run(self, jobs: Sequence[Job], progress: Progress | None = None) -> list[list[dict[str, Any]]]:
        raise NotImplementedError

    def chunk_size(self, deals: int) -> int:
        """Deals per job: small enough to spread the work, large enough to amortise."""
        return 1

    def close(self) -> None:
        """Release workers (a no-op where there are none)."""


def _games(job: Job) -> int:
    return len(job.deals) * len(job.rotations)


class InProcessBackend(Backend):
    """Jobs one after another in this process."""

    name = "inprocess"

    def run(self, jobs: Sequence[Job], progress: Progress | None = None) -> list[list[dict[str, Any]]]:
        results = []
        for i, job in enumerate(jobs):
            results.append(run_job(job))
            if progress is not None:
                progress(i, _games(job))
        return results


def one_thread_per_worker() -> None:
    """Worker initializer: each worker plays one game at a time, so a trained policy's
    PyTorch (and any OpenMP/BLAS pool) gets one thread; ``workers`` processes with a
    thread per core each would oversubscribe the machine (Ray does the same for its
    tasks). Runs before the worker imports torch."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def die_with_parent() -> None:
    """Worker initializer: the worker ends when its parent does, even one killed with
    SIGKILL (Linux: ``PR_SET_PDEATHSIG``; elsewhere a thread that watches the parent)."""
    import signal
    import threading
    import time

    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the call above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


_marks: list[str] = []  # this worker's mark files while it plays a job


def _drop_marks() -> None:
    for path in _marks:
        with contextlib.suppress(OSError):
            os.unlink(path)
    _marks.clear()


def _stopped(signum: int, frame: object) -> None:
    """SIGTERM in a worker: the pool stops the workers that still run once one has died.
    Their marks go with them, so that only the dead worker's job stays named."""
    _drop_marks()
    os._exit(128 + signum)


def _init_worker() -> None:
    import signal

    one_thread_per_worker()
    die_with_parent()
    signal.signal(signal.SIGTERM, _stopped)


def _tracked(job: Job, index: int, folder: str) -> list[dict[str, Any]]:
    """:func:`run_job` in a worker, leaving ``folder/<pid>`` with the job's index while it
    runs: the job of a worker that dies can then be named."""
    from memtab_env import atomic

    mark = os.path.join(folder, str(os.getpid()))
    _marks[:] = [mark]
    atomic.write_text(mark, str(index), sync=False)  # a mark is never seen half written
    out = run_job(job)
    _drop_marks()
    return out


def describe_job(job: Job) -> str:
    """One line naming a job: track, deals, rotations and lineup."""
    deals = [d for d, _ in job.deals]
    span = f"deal {deals[0]}" if len(deals) == 1 else f"deals {deals[0]}..{deals[-1]}"
    tag = ", ".join(f"{k} {v}" for k, v in job.tag)
    return (f"track {job.track if isinstance(job.track, str) else job.track.id}, {span} "
            f"(seeds {job.deals[0][1]}..{job.deals[-1][1]}), lineup {[a.name for a in job.lineup]}"
            + (f", {tag}" if tag else ""))


class MultiprocessingBackend(Backend):
    """A pool of ``workers`` local processes (``spawn``: safe with numba and torch)."""

    name = "multiprocessing"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, int(workers or os.cpu_count() or 1))

    def chunk_size(self, deals: int) -> int:
        return max(1, -(-deals // (4 * self.workers)))

    def run(self, jobs: Sequence[Job], progress: Progress | None = None) -> list[list[dict[str, Any]]]:
        import multiprocessing as mp
        import tempfile
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        results: list[list[dict[str, Any]] | None] = [None] * len(jobs)
        with tempfile.TemporaryDirectory(prefix="memtab-jobs-") as marks, \
                ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("spawn"),
                                    initializer=_init_worker) as pool:
            futures = {pool.submit(_tracked, job, i, marks): i for i, job in enumerate(jobs)}
            try:
                for fut in as_completed(futures):
                    i = futures[fut]
                    results[i] = fut.result()
                    if progress is not None:
                        progress(i, _games(jobs[i]))
            except BrokenProcessPool as exc:
                for fut in futures:
                    fut.cancel()
                # the pool stops the other workers (each drops its mark) and waits for them:
                # what marks are left belong to workers that died while playing
                pool.shutdown(wait=True)
                lost = []
                for name in sorted(os.listdir(marks)):
                    if not name.isdigit():
                        continue
                    with open(os.path.join(marks, name)) as f:
                        k = int(f.read() or -1)
                    if 0 <= k < len(jobs):
                        lost.append(f"job {k} ({describe_job(jobs[k])}) in worker {name}")
                what = "; ".join(lost) or "a job that had not reported yet"
                raise BenchmarkError(f"a worker process died (killed or crashed) while playing {what}; "
                                     "nothing was written") from exc
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise
        return [r for r in results if r is not None]


class RayBackend(Backend):
    """Jobs as Ray tasks: on the cluster at ``address`` (``"auto"``, ``"ray://host:port"``,
    or None for ``RAY_ADDRESS`` / a new local cluster of ``workers`` CPUs)."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        try:
            import ray
        except ImportError as exc:
            raise InvalidOptionError(
                'the ray backend needs Ray: pip install -e ".[ray]" in the memtab-env checkout'
            ) from exc
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
            if address is None and "RAY_ADDRESS" not in os.environ:
                if workers:
                    kwargs["num_cpus"] = int(workers)
            else:
                kwargs["address"] = address
            ray.init(**kwargs)
            self._started = True
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._task = ray.remote(num_cpus=1)(run_job)

    def chunk_size(self, deals: int) -> int:
        return max(1, -(-deals // (4 * self.workers)))

    def run(self, jobs: Sequence[Job], progress: Progress | None = None) -> list[list[dict[str, Any]]]:
        ray = self._ray
        refs = [self._task.remote(job) for job in jobs]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[list[dict[str, Any]]] = [[] for _ in jobs]
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    results[index[ref]] = ray.get(ref)  # raises the task's error at once
                    if progress is not None:
                        progress(index[ref], _games(jobs[index[ref]]))
        except BaseException:
            for ref in pending:
                ray.cancel(ref)
            raise
        return results

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


def make_backend(name: str = "inprocess", workers: int | None = None,
                 address: str | None = None) -> Backend:
    """The backend ``name`` (one of :data:`BACKENDS`)."""
    if name == "inprocess":
        return InProcessBackend()
    if name == "multiprocessing":
        return MultiprocessingBackend(workers)
    if name == "ray":
        return RayBackend(address, workers)
    raise InvalidOptionError(f"unknown backend {name!r}; backends: {list(BACKENDS)}")
