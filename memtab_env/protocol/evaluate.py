"""Evaluate an agent on a track: the track's deals against each of its reference opponents,
in the duplicate format (every deal once per seat rotation), with intervals.

``evaluate(...)`` plays the games on a backend and returns ``(result, records)``; the
figures are computed from the records by :func:`summarise`, the same function the
leaderboard runs on replayed records, so a result and its records agree by construction.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memtab_env import __version__
from memtab_env.errors import InvalidOptionError
from memtab_env.play import win_shares
from memtab_env.protocol import metrics
from memtab_env.protocol.backends import AgentSpec, Backend, InProcessBackend, Job, Progress
from memtab_env.protocol.results import RESULT_FORMAT, ResultError, validate_result
from memtab_env.protocol.tracks import TRACKS, Track


def resolve_agent(text: str, game: str, kwargs: dict[str, Any] | None = None,
                  label: str | None = None, build: bool = True,
                  trust_pickle: bool = False) -> tuple[AgentSpec, dict[str, Any]]:
    """The :class:`AgentSpec` of ``text`` (a built-in name of ``game`` or the path of a saved
    model) and its description for the result file. With ``build`` the agent is built
    once here, so a wrong name or an unreadable model fails before any game (a model is
    loaded as data; ``trust_pickle`` is the caller's explicit opt-in to unpickling).
    Without ``build`` (recomputing from records) nothing is loaded: a model file is only
    hashed."""
    kwargs = dict(kwargs or {})
    if "trust_pickle" in kwargs:
        raise InvalidOptionError("trust_pickle is not an agent keyword argument: it is the command line's "
                                 "--trust-pickle, never written into a result")
    try:
        json.dumps(kwargs)
    except TypeError as exc:
        raise InvalidOptionError(f"agent keyword arguments must be JSON values: {exc}") from exc
    path = Path(text).expanduser()
    if path.is_file() or text.endswith(".zip"):
        if not path.is_file():
            raise InvalidOptionError(f"no model file at {text!r}")
        spec = AgentSpec(str(path.resolve()), label or path.stem, tuple(sorted(kwargs.items())),
                         trust_pickle)
        desc = {"spec": text, "kind": "file", "kwargs": kwargs,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    else:
        from memtab_env.protocol.reproduce import shipped_sha256

        spec = AgentSpec(text, label or text, tuple(sorted(kwargs.items())))
        # a built-in agent is named with the package version (the result's); one that
        # plays a shipped model file also with that file's hash
        desc = {"spec": text, "kind": "builtin", "kwargs": kwargs, "sha256": shipped_sha256(text)}
    if build:
        spec.build(game)
    return spec, desc


def evaluation_jobs(track: Track, runs: Sequence[AgentSpec], deals: int, chunk: int) -> list[Job]:
    """The jobs of an evaluation: for every run and opponent, the deals in chunks, every
    seat rotation of each (the agent, lineup index 0, sits in seat ``r``)."""
    seeds = list(enumerate(track.seeds(deals)))
    n = track.num_players
    ref = track.id if TRACKS.get(track.id) == track else track  # a track of no table travels whole
    jobs = []
    for i, agent in enumerate(runs):
        for opp in track.opponents:
            lineup = (agent,) + (AgentSpec(opp),) * (n - 1)
            for start in range(0, len(seeds), chunk):
                jobs.append(Job(ref, lineup, tuple(seeds[start:start + chunk]), tuple(range(n)),
                                (("run", i), ("opponent", opp))))
    return jobs


def seat_outcome(record: dict[str, Any], seat: int) -> tuple[float, float]:
    """``(win share, score difference)`` of ``seat``: its share of the win (1/k of k
    winners) and its score minus the mean score of the other seats."""
    scores = np.asarray(record["result"]["scores"], dtype=np.float64)
    others = np.delete(scores, seat)
    diff = float(scores[seat] - others.mean()) if others.size else float(scores[seat])
    return win_shares(record)[seat], diff


#: fields of a benchmark record that its deal fixes: the track's env dealt from the
#: track's seed for the deal gives every one of them, whatever the record says
DEAL_FIELDS = ("game", "env_id", "options", "num_players", "first_player", "seed", "layout", "deal")


def track_deal(track: Track, deal: int, cache: dict[tuple[str, int], dict[str, Any]] | None = None
               ) -> dict[str, Any]:
    """What deal ``deal`` of ``track`` is (:data:`DEAL_FIELDS`), recomputed from the track
    alone: its env (the track's options) reset with the track's seed for the deal, exactly
    as :func:`memtab_env.protocol.backends.run_job` deals it."""
    key = (track.key, deal)
    if cache is not None and key in cache:
        return cache[key]
    from memtab_env.play import make_raw_env

    env = make_raw_env(track.game, **track.options)
    env.reset(seed=track.seeds(deal + 1)[deal])
    rec = env.record()
    out = {k: rec[k] for k in DEAL_FIELDS}
    env.close()
    if cache is not None:
        cache[key] = out
    return out


def check_deal(record: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """None when ``record`` was dealt as ``expected`` (:func:`track_deal`), else a sentence
    naming the first field that differs (for the layout: the first position)."""
    for key in DEAL_FIELDS:
        got, want = record.get(key), expected[key]
        if got == want and type(got) is type(want):
            continue
        if key == "layout" and isinstance(got, list):
            first = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                         min(len(got), len(want)))
            return (f"its layout is not the deal of the track's seed {expected['seed']} "
                    f"(first difference at position {first} of {len(want)})")
        if key == "options" and isinstance(got, dict):
            diff = sorted(k for k in set(got) | set(want) if got.get(k, ...) != want.get(k, ...))
            return (f"options {diff} are {[got.get(k) for k in diff]!r:.120}, the track's env has "
                    f"{[want.get(k) for k in diff]!r:.120}")
        return f"{key} is {got!r:.60}, the track's deal has {want!r:.60}"
    return None


def summarise(track: Track, deals: int, runs: int, records: Iterable[dict[str, Any]],
              label: str | None = None) -> list[dict[str, Any]]:
    """The figures of every run from the records of an evaluation (annotated by
    :func:`memtab_env.protocol.backends.run_job`). Every (run, opponent, deal, rotation)
    must appear exactly once, with the agent (named ``label``, when given) in seat
    ``rotation``, the opponent in the others, and exactly the deal the track's seed for
    that deal produces (:func:`check_deal`: layout, options, first player, seed, recomputed
    from the track whatever the record claims); anything else raises :class:`ResultError`."""
    n = track.num_players
    seeds = track.seeds(deals)
    shares = np.full((runs, len(track.opponents), deals, n), np.nan)
    diffs = np.full_like(shares, np.nan)
    opp_index = {o: j for j, o in enumerate(track.opponents)}
    dealt: dict[tuple[str, int], dict[str, Any]] = {}
    for k, rec in enumerate(records):
        b = rec.get("benchmark") if isinstance(rec, dict) else None
        where = f"record {k}"
        if not isinstance(b, dict):
            raise ResultError(f"{where}: no 'benchmark' field (not a record of an evaluation)")
        try:
            i, j, d, r = int(b["run"]), opp_index[b["opponent"]], int(b["deal"]), int(b["rotation"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultError(f"{where}: benchmark field {b!r:.120} is incomplete or names an "
                              f"opponent outside the track") from exc
        where = f"record {k} (run {i}, opponent {b['opponent']}, deal {d}, rotation {r})"
        if b.get("track") != track.key:
            raise ResultError(f"{where}: for track {b.get('track')!r}, not {track.key!r}")
        if not (0 <= i < runs and 0 <= d < deals and 0 <= r < n):
            raise ResultError(f"{where}: outside the evaluation ({runs} run(s), {deals} deals, {n} seats)")
        if rec.get("seed") != seeds[d]:
            raise ResultError(f"{where}: seed {rec.get('seed')!r}, but deal {d} has seed {seeds[d]}")
        why = check_deal(rec, track_deal(track, d, dealt))
        if why is not None:
            raise ResultError(f"{where}: not deal {d} of track {track.key}: {why}")
        if b.get("seats") != [(s - r) % n for s in range(n)]:
            raise ResultError(f"{where}: seats {b.get('seats')!r} are not rotation {r} (agent in seat {r})")
        if label is not None:
            expected = [label if s == r else b["opponent"] for s in range(n)]
            if rec.get("agents") != expected:
                raise ResultError(f"{where}: agents {rec.get('agents')!r}, expected {expected!r}")
        if not np.isnan(shares[i, j, d, r]):
            raise ResultError(f"{where}: a second record of the same game")
        shares[i, j, d, r], diffs[i, j, d, r] = seat_outcome(rec, r)
    missing = np.argwhere(np.isnan(shares))
    if missing.size:
        i, j, d, r = missing[0]
        raise ResultError(
            f"{len(missing)} game(s) missing, e.g. run {i}, opponent {track.opponents[j]}, deal {d}, "
            f"rotation {r}"
        )
    out = []
    for i in range(runs):
        per_opp = {o: metrics.figures(shares[i, j], diffs[i, j]) for o, j in opp_index.items()}
        total = metrics.overall({o: shares[i, j] for o, j in opp_index.items()},
                                {o: diffs[i, j] for o, j in opp_index.items()})
        norm = track.normalised(total["win_rate"])
        out.append({
            "opponents": per_opp,
            "overall": total,
            "normalised_score": norm,
            "normalised_ci": None if norm is None else
            [track.normalised(total["win_rate_ci"][0]), track.normalised(total["win_rate_ci"][1])],
        })
    return out


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Across runs: mean win rate, mean normalised score and, with two runs or more, the
    IQM of the normalised scores with its stratified-bootstrap interval."""
    wins = [r["overall"]["win_rate"] for r in runs]
    norms = [r["normalised_score"] for r in runs]
    out: dict[str, Any] = {
        "runs": len(runs),
        "win_rate": float(np.mean(wins)),
        "normalised_score": None if None in norms else float(np.mean(norms)),
        "normalised_iqm": None,
        "normalised_iqm_ci": None,
        "iqm_method": (f"IQM (25% trimmed mean) over runs, stratified bootstrap percentile interval, "
                       f"{metrics.BOOTSTRAP_REPS} replicates, seed {metrics.BOOTSTRAP_SEED} "
                       "(numpy/scipy implementation of the rliable method)"),
    }
    if len(runs) >= 2 and None not in norms:
        point, lo, hi = metrics.stratified_bootstrap([norms])
        out["normalised_iqm"], out["normalised_iqm_ci"] = point, [lo, hi]
    return out


def build_result(track: Track, deals: int, label: str, agent_runs: list[dict[str, Any]],
                 records: Iterable[dict[str, Any]], records_path: str | None = None) -> dict[str, Any]:
    """The result object (``memtab-result/1``) of an evaluation from its records."""
    runs = summarise(track, deals, len(agent_runs), records, label)
    result = {
        "format": RESULT_FORMAT,
        "package_version": __version__,
        "game": track.game,
        "env_id": track.env_id,
        "track": track.describe(),
        "seeds": track.seeds(deals),
        "agent": {"label": label, "runs": agent_runs},
        "runs": runs,
        "summary": summary(runs),
        "records": records_path,
    }
    return validate_result(result, f"result of {label} on {track.key}")


def evaluate(track: Track, agents: Sequence[tuple[AgentSpec, dict[str, Any]]], label: str,
             deals: int | None = None, backend: Backend | None = None,
             progress: Progress | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Evaluate ``agents`` (one or more runs of one method, from :func:`resolve_agent`) on
    ``track``'s first ``deals`` deals (default: the protocol's) against every reference
    opponent; return ``(result, records)``. ``result["records"]`` is None: the caller that
    writes the records sets it."""
    backend = backend or InProcessBackend()
    deals = track.deals if deals is None else int(deals)
    specs = [dataclasses.replace(a, label=label) for a, _ in agents]  # records name the agent `label`
    jobs = evaluation_jobs(track, specs, deals, backend.chunk_size(deals))
    records = [rec for chunk in backend.run(jobs, progress) for rec in chunk]
    result = build_result(track, deals, label, [d for _, d in agents], records)
    return result, records


def total_games(track: Track, runs: int, deals: int) -> int:
    """Games an evaluation plays."""
    return runs * len(track.opponents) * deals * track.num_players
