"""The study page's data, from the memory study's run files (:func:`memtab_env.study.collect_runs`):
per cell the final score of every seed, their IQM and interval
(:func:`memtab_env.study.tables.aggregate`), and the learning curve with its band
(:func:`memtab_env.study.figures.curve_band`, as the PNG figures draw it); across tracks,
the ranks of :func:`memtab_env.study.tables.across_tracks`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def study_data(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """JSON-ready cells of the study, in run-file order (see the module docstring)."""
    from memtab_env.protocol.metrics import iqm
    from memtab_env.study.figures import FLOOR, curve_band, earlier_runs
    from memtab_env.study.tables import across_tracks, aggregate

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
            "track": run["track"], "memory": run["memory"], "model": run["model"],
            "description": run.get("description", ""), "timesteps": run["timesteps"],
            "follow_up": bool(run.get("follow_up", False)),
            "init": (run.get("init") or {}).get("track"),
            "seeds": list(run["seeds"]), "final": [float(f["score"]) for f in run["final"]],
            "iqm": agg["iqm"], "ci": [agg["lo"], agg["hi"]],
            "steps": steps, "centre": centre.tolist(), "lo": lo.tolist(), "hi": hi.tolist(),
            "earlier": earlier,
            "file": Path(run["_path"]).name if "_path" in run else None,
        })
    grid, across = across_tracks(runs)
    return {"floor": FLOOR, "cells": out, "across": {"tracks": grid, "rows": across}}
