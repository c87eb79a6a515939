"""The study page's data, from the run files of the committed studies
(:data:`memtab_env.study.COMMITTED_STUDIES`, :func:`memtab_env.study.collect_runs`): per
cell the final score of every seed, their IQM and interval
(:func:`memtab_env.study.tables.aggregate`), and the learning curve with its band
(:func:`memtab_env.study.figures.curve_band`, as the PNG figures draw it); per study, the
ranks across its tracks (:func:`memtab_env.study.tables.across_tracks`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def study_data(studies: Sequence[tuple[str, str, Sequence[dict[str, Any]]]]) -> dict[str, Any]:
    """JSON-ready data of ``studies``, ``(folder, config, runs)`` each (see the module
    docstring): ``{"floor", "studies": [{"folder", "config", "tracks"}], "cells": [...],
    "across": [{"study", "tracks", "rows"}]}``, the cells in study then run-file order,
    each naming its study's folder. Ranks are taken within a study, never across studies:
    their recipes differ."""
    from memtab_env.study.figures import FLOOR
    from memtab_env.study.tables import across_tracks

    out: list[dict[str, Any]] = []
    listed, across = [], []
    seen: dict[str, str] = {}
    for folder, config, runs in studies:
        tracks = list(dict.fromkeys(r["track"] for r in runs))
        for track in tracks:
            if seen.setdefault(track, folder) != folder:
                raise ValueError(f"track {track!r} is in two studies, {seen[track]!r} and {folder!r}: "
                                 "the study page picks a track by its name, so each must be in one study")
        if runs:
            out += _cells(folder, runs)
            grid, rows = across_tracks(runs)
            listed.append({"folder": folder, "config": config, "tracks": tracks})
            across.append({"study": folder, "tracks": grid, "rows": rows})
    return {"floor": FLOOR, "studies": listed, "cells": out, "across": across}


def _cells(folder: str, runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON-ready cells of one study's ``runs``."""
    from memtab_env.protocol.metrics import iqm
    from memtab_env.study.figures import curve_band, earlier_runs
    from memtab_env.study.tables import aggregate

    cells = aggregate(runs)
    out = []
    for run in runs:
        steps = [int(p["timesteps"]) for p in run["curves"][0]]
        scores = np.array([[p["score"] for p in c] for c in run["curves"]], dtype=float)
        centre, lo, hi = curve_band(scores)
        agg = cells[(run["track"], run["memory"], run["model"])]
        earlier = [{"track": b["track"], "steps": [int(p["timesteps"]) for p in b["curves"][0]],
                    "iqm": iqm(np.array([[p["score"] for p in c] for c in b["curves"]]), axis=0).tolist()}
                   for b in earlier_runs(run, runs)]
        out.append({
            "study": folder, "track": run["track"], "memory": run["memory"], "model": run["model"],
            "description": run.get("description", ""), "timesteps": run["timesteps"],
            "follow_up": bool(run.get("follow_up", False)),
            "init": (run.get("init") or {}).get("track"),
            "seeds": list(run["seeds"]), "final": [float(f["score"]) for f in run["final"]],
            "iqm": agg["iqm"], "ci": [agg["lo"], agg["hi"]],
            "steps": steps, "centre": centre.tolist(), "lo": lo.tolist(), "hi": hi.tolist(),
            "earlier": earlier,
            "file": Path(run["_path"]).name if "_path" in run else None,
        })
    return out
