"""The study's run files: one per cell (``<track>/<memory>__<model>.json``, format
:data:`RUN_FORMAT`) with the trained policies beside it, read as untrusted data and
checked (:func:`load_run`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from memtab_env import untrusted
from memtab_env.study.grid import StudyError, require_field

RUN_FORMAT = "memtab-study-run/1"


def run_path(out_dir: Path, track: str, memory: str, model: str) -> Path:
    return Path(out_dir) / track / f"{memory.replace(':', '')}__{model}.json"


def policy_path(run_file: Path, seed: int) -> Path:
    """The trained policy of ``seed`` beside the cell's run file."""
    return run_file.with_name(f"{run_file.stem}__s{seed}.zip")


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


def collect_runs(out_dir: str | Path) -> list[dict[str, Any]]:
    """Every run file under ``out_dir`` (sorted by path), checked."""
    root = Path(out_dir)
    runs = []
    for path in sorted(root.rglob("*.json")):
        obj = untrusted.load_json(path, StudyError)
        if isinstance(obj, dict) and obj.get("format") == RUN_FORMAT:
            run = load_run(path)
            run["_path"] = path
            runs.append(run)
    return runs

