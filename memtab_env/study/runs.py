"""The study's run files: one per cell (``<track>/<memory>__<model>.json``, format
:data:`RUN_FORMAT`) with the trained policies beside it, read as untrusted data and
checked (:func:`load_run`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from memtab_env import untrusted
from memtab_env.errors import MemTabError
from memtab_env.study.grid import StudyError, require_field
from memtab_env.study.tables import final_scale

RUN_FORMAT = "memtab-study-run/1"
#: the committed studies, the MemTab grid first: (folder of their run files under the
#: results folder, the config that trains them)
COMMITTED_STUDIES = (("grid", "configs/study_memtab.yaml"),
                     ("grid-pelmanism", "configs/study_pelmanism.yaml"),
                     ("study", "configs/study.yaml"))


def run_path(out_dir: Path, track: str, memory: str, model: str) -> Path:
    return Path(out_dir) / track / f"{memory.replace(':', '')}__{model}.json"


def policy_path(run_file: Path, seed: int) -> Path:
    """The trained policy of ``seed`` beside the cell's run file."""
    return run_file.with_name(f"{run_file.stem}__s{seed}.zip")


def _is_final_agent(value: Any) -> bool:
    """Whether ``value`` is agent keyword arguments the study scores with
    (:func:`memtab_env.study.scores.final_agent`)."""
    if value in ({}, {"recall": True}):
        return True
    window = value.get("window") if isinstance(value, dict) and len(value) == 1 else None
    return isinstance(window, int) and not isinstance(window, bool) and window >= 0


def load_run(path: Path) -> dict[str, Any]:
    """A run file, checked: the format, the cell, one final score and one curve per
    seed, finite numbers. :class:`StudyError` naming the file and the field otherwise."""
    run = untrusted.load_json(path, StudyError)
    where = str(path)
    if not isinstance(run, dict) or run.get("format") != RUN_FORMAT:
        raise StudyError(f"{where}: format must be {RUN_FORMAT!r}")
    for key, kind in (("track", str), ("memory", str), ("model", str), ("seeds", list),
                      ("final", list), ("curves", list), ("timesteps", int)):
        require_field(run, key, kind, where)
    if not isinstance(run.get("follow_up", False), bool):
        raise StudyError(f"{where}: follow_up must be true or false")
    from memtab_env.study.scores import FINAL_SCALES

    if "final_scale" in run and run["final_scale"] not in FINAL_SCALES:
        raise StudyError(f"{where}: final_scale must be one of {list(FINAL_SCALES)}, got "
                         f"{run['final_scale']!r:.40}")
    if "final_agent" in run and not _is_final_agent(run["final_agent"]):
        raise StudyError(f"{where}: final_agent must be {{}}, {{\"recall\": true}} or {{\"window\": k}} "
                         f"(an integer k >= 0), got {str(run['final_agent']):.60}")
    n = len(run["seeds"])
    if n == 0 or len(run["final"]) != n or len(run["curves"]) != n:
        raise StudyError(f"{where}: seeds, final and curves must have one entry per seed")
    for i, final in enumerate(run["final"]):
        score = require_field(final, "score", (int, float), f"{where}: final[{i}]")
        if not math.isfinite(score):
            raise StudyError(f"{where}: final[{i}].score must be finite")
    for i, curve in enumerate(run["curves"]):
        if not isinstance(curve, list) or not all(
                isinstance(p, dict) and isinstance(p.get("timesteps"), int)
                and isinstance(p.get("score"), (int, float)) and math.isfinite(p["score"])
                for p in curve):
            raise StudyError(f"{where}: curves[{i}] must be a list of {{timesteps, score}}")
    return run


#: relative tolerance when comparing a stored figure with its recomputed value
TOLERANCE = 1e-9


def _scorer(run: dict[str, Any], study: Any, results_dir: Path | None, where: str
            ) -> tuple[Any, float, list[str]]:
    """``(score_of(figures) -> score, highest possible score, figure names)`` of ``run``'s
    track, as :class:`memtab_env.study.run.Scorer` computes them."""
    from memtab_env.study.scores import benchmark_anchors, solo_turns_bounds

    track = study.tracks.get(run["track"])
    if track is None:
        raise StudyError(f"{where}: field track: {run['track']!r:.60} is not a track of the study config")
    options = {**track.options, "memory": run["memory"]}
    if track.score == "solo-turns":
        random, optimum = solo_turns_bounds(options)

        def solo(f: dict[str, Any]) -> float:
            return (random - f["turns"]) / (random - optimum)
        return solo, (random - 1.0) / (random - optimum), ["turns"]
    if results_dir is None:
        raise StudyError(f"{where}: scoring track {track.scored_on} needs the benchmark results")
    (low, high), opponents = benchmark_anchors(track.scored_on, results_dir)
    names = [f"win_rate_{o}" for o in opponents]

    def bench(f: dict[str, Any]) -> float:
        return (sum(f[k] for k in names) / len(names) - low) / (high - low)
    return bench, (1.0 - low) / (high - low), names


def _benchmark_scorer(run: dict[str, Any], study: Any) -> tuple[Any, float, list[str]]:
    """The scorer of final scores on the benchmark's own scale
    (:func:`memtab_env.study.scores.benchmark_score`): the benchmark track's normalised
    mean win rate over every reference opponent."""
    from memtab_env.protocol.tracks import TRACKS

    track = TRACKS[study.tracks[run["track"]].scored_on]
    if track.normalised(1.0) is None:
        raise StudyError(f"benchmark track {track.id} has no anchors yet (results/set_anchors.py)")
    names = [f"win_rate_{o}" for o in track.opponents]

    def bench(f: dict[str, Any]) -> float:
        mean = sum(f[k] for k in names) / len(names)  # the track's opponents weigh alike
        if not math.isclose(f["win_rate"], mean, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            raise StudyError(f"win_rate: {f['win_rate']!r} is not the mean of {', '.join(names)} "
                             f"({mean!r})")
        return track.normalised(f["win_rate"])
    return bench, track.normalised(1.0), ["win_rate", *names]


def _check_point(f: Any, score_of: Any, top: float, names: list[str], where: str) -> None:
    if not isinstance(f, dict):
        raise StudyError(f"{where}: expected an object of figures")
    for k in names:
        v = f.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise StudyError(f"{where}.{k}: expected a finite number, got {v!r:.60}")
        if (k == "win_rate" or k.startswith("win_rate_")) and not 0.0 <= v <= 1.0:
            raise StudyError(f"{where}.{k}: {v!r} is not a rate in [0, 1]")
        if k == "turns" and v < 1.0:
            raise StudyError(f"{where}.{k}: {v!r} turns is impossible (a game takes one turn or more)")
    if f["score"] > top + TOLERANCE:
        raise StudyError(f"{where}.score: {f['score']!r} is above the highest score the anchors allow "
                         f"({top!r})")
    try:
        again = score_of(f)
    except StudyError as exc:
        raise StudyError(f"{where}.{exc}") from None
    if not math.isclose(f["score"], again, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
        raise StudyError(f"{where}.score: the file says {f['score']!r}, its {', '.join(names)} and the "
                         f"track's anchors give {again!r}")


def audit_run(run: dict[str, Any], path: Path, study: Any, results_dir: Path | None = None) -> dict[str, Any]:
    """Recompute what ``run`` (read by :func:`load_run` from ``path``) derives, under the
    study config ``study``: every final and curve score from its win rates (and the
    benchmark track's anchors, read from ``results_dir``) or its turns; values that
    cannot be (rates outside [0, 1], fewer than one turn, a score above the anchors'
    maximum); the seeds and final deals of the config; the curve's points (count and
    learner steps) and the run's steps from its own PPO config. :class:`StudyError`
    naming the file and the field at the first that differs. The IQMs and intervals of
    the tables are never stored: :func:`memtab_env.study.tables.aggregate` computes
    them from these seeds."""
    from memtab_env.jax.ppo.config import PPOConfig

    where = str(path)
    if run["seeds"] != list(study.seeds):
        raise StudyError(f"{where}: field seeds: {run['seeds']!r:.80}, the study config has "
                         f"{list(study.seeds)}")
    if run.get("final_deals") != study.final_deals:
        raise StudyError(f"{where}: field final_deals: {run.get('final_deals')!r:.40}, the study config has "
                         f"{study.final_deals}")
    try:
        config = PPOConfig.from_json({**run.get("config", {}), "seed": 0})
    except (MemTabError, TypeError) as exc:
        raise StudyError(f"{where}: field config: {exc}") from None
    init = run.get("init")
    before = init.get("timesteps") if isinstance(init, dict) else 0
    if isinstance(before, bool) or not isinstance(before, int) or before < 0:
        raise StudyError(f"{where}: field init.timesteps: expected a count of steps, got {before!r:.40}")
    trained = config.num_updates * config.num_envs * config.num_steps
    if run["timesteps"] != before + trained:
        raise StudyError(f"{where}: field timesteps: {run['timesteps']}, its config trains {trained} steps"
                         + (f" after the {before} of its init track" if before else ""))
    updates = sorted({max(1, round(config.num_updates * (i + 1) / study.curve_points))
                      for i in range(study.curve_points)})
    steps = [before] + [before + u * config.num_envs * config.num_steps for u in updates]
    score_of, top, names = _scorer(run, study, results_dir, where)
    final_of, final_top, final_names = (_benchmark_scorer(run, study) if final_scale(run) == "benchmark"
                                        else (score_of, top, names))
    if final_scale(run) == "benchmark":
        from memtab_env.study.scores import final_agent

        expected = final_agent(run["memory"], study.tracks[run["track"]].scored_on)
        if run.get("final_agent", {}) != expected:
            raise StudyError(f"{where}: field final_agent: {run.get('final_agent', {})}, a cell trained "
                             f"under {run['memory']!r} plays its benchmark track with {expected} "
                             "(memtab_env.study.scores.final_agent): score it again")
    for i, f in enumerate(run["final"]):
        _check_point(f, final_of, final_top, final_names, f"{where}: field final[{i}]")
    for i, curve in enumerate(run["curves"]):
        got = [p["timesteps"] for p in curve]
        if got != steps:
            raise StudyError(f"{where}: field curves[{i}]: points at steps {got!r:.120}, the config's curve "
                             f"is at {steps!r:.120}")
        for j, p in enumerate(curve):
            _check_point(p, score_of, top, names, f"{where}: field curves[{i}][{j}]")
    return run


def collect_runs(out_dir: str | Path, study: Any = None, results_dir: str | Path | None = None,
                 on_error: Any = None) -> list[dict[str, Any]]:
    """Every run file under ``out_dir`` (sorted by path), checked (:func:`load_run`) and,
    with the study config ``study``, audited (:func:`audit_run`; ``results_dir``: the
    benchmark results that hold the anchors). A study holds one run per cell (track,
    memory model, architecture): a second file of a cell is refused, naming the first. A
    refused file raises :class:`StudyError` or, with ``on_error(path, error)``, is
    reported and left out."""
    root = Path(out_dir)
    runs = []
    cells: dict[tuple[str, str, str], Path] = {}
    for path in sorted(root.rglob("*.json")):
        try:
            obj = untrusted.load_json(path, StudyError)
            if not (isinstance(obj, dict) and obj.get("format") == RUN_FORMAT):
                continue
            run = load_run(path)
            if study is not None:
                audit_run(run, path, study, None if results_dir is None else Path(results_dir))
            cell = (run["track"], run["memory"], run["model"])
            if cell in cells:
                raise StudyError(f"{path}: a second run of cell {' / '.join(cell)} (the first: "
                                 f"{cells[cell]}); a study holds one run per cell (keep other runs, "
                                 "such as ablations, outside its folder)")
            cells[cell] = path
        except MemTabError as exc:
            if on_error is None:
                raise
            on_error(path, exc)
            continue
        run["_path"] = path
        runs.append(run)
    return runs
