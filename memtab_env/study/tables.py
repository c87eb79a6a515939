"""The study's tables: per cell the IQM over seeds with its stratified-bootstrap interval
(:func:`aggregate`), across tracks (:func:`across_tracks`), and the memory study section of ``LEADERBOARD.md``
(:func:`leaderboard_section`), recomputed from the run files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def aggregate(runs: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, float]]:
    """``(track, memory, model) -> {iqm, lo, hi, seeds}`` of the final scores."""
    from memtab_env.benchmark.metrics import stratified_bootstrap

    out = {}
    for run in runs:
        scores = [f["score"] for f in run["final"]]
        point, lo, hi = stratified_bootstrap([scores])
        out[(run["track"], run["memory"], run["model"])] = {
            "iqm": point, "lo": lo, "hi": hi, "seeds": len(scores)}
    return out


def leaderboard_section(runs: Sequence[dict[str, Any]]) -> list[str]:
    """The memory study section of ``LEADERBOARD.md`` (Markdown lines; none without
    runs), recomputed from the run files: one table per track, cells ranked by IQM, and
    the architectures across tracks (IQM over seeds x tracks, strata: tracks)."""
    if not runs:
        return []
    cells = aggregate(runs)
    lines = [
        "## Memory study",
        "",
        "Generated from the run files under `results/study/` (protocol: "
        "[docs/study.md](docs/study.md), `memtab study --config configs/study.yaml`). "
        "Memory architectures (memax models, a memory per position behind the set encoder) "
        "trained by the JAX PPO at a fixed sample budget per track; normalised final score "
        "(0 = random play, 1 = the track's strong reference), IQM over training seeds with "
        "a 95% stratified-bootstrap interval.",
        "",
    ]
    tracks = list(dict.fromkeys(r["track"] for r in runs))
    for track in tracks:
        rows = [(k, v) for k, v in cells.items() if k[0] == track]
        rows.sort(key=lambda kv: (-kv[1]["iqm"], kv[0][1], kv[0][2]))
        run = next(r for r in runs if r["track"] == track)
        lines += [f"### {track}", "", f"{run.get('description', '')} Budget: "
                  f"{run['timesteps']:,} learner steps per seed.", "",
                  "| # | memory model | architecture | seeds | IQM normalised | 95% interval |",
                  "|---|---|---|---|---|---|"]
        for rank, ((_, memory, model), v) in enumerate(rows, 1):
            lines.append(f"| {rank} | `{memory}` | {model} | {v['seeds']} | {v['iqm']:.2f} | "
                         f"[{v['lo']:.2f}, {v['hi']:.2f}] |")
        lines.append("")
    grid, across = across_tracks(runs)
    if len(grid) > 1:
        lines += ["### Across tracks", "",
                  "Per memory model and architecture present on every track of the full grid "
                  "(follow-up tracks left out): IQM over seeds x tracks, 95% "
                  "stratified-bootstrap interval (strata: tracks).", "",
                  "| memory model | architecture | IQM normalised | 95% interval |",
                  "|---|---|---|---|"]
        for row in across:
            lines.append(f"| `{row['memory']}` | {row['model']} | {row['iqm']:.2f} | "
                         f"[{row['lo']:.2f}, {row['hi']:.2f}] |")
        lines.append("")
    return lines


def across_tracks(runs: Sequence[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The tracks of the full grid (follow-up tracks left out) and, when there are two or
    more, per memory model and architecture present on every one of them, the IQM of the
    final scores over seeds x tracks with its 95% stratified-bootstrap interval (strata:
    tracks), best first: ``(tracks, [{memory, model, iqm, lo, hi}, ...])``."""
    from memtab_env.benchmark.metrics import stratified_bootstrap

    tracks = list(dict.fromkeys(r["track"] for r in runs))
    grid = [t for t in tracks if not any(r.get("follow_up") for r in runs if r["track"] == t)]
    if len(grid) < 2:
        return grid, []
    mine = [r for r in runs if r["track"] in grid]
    rows = []
    for memory, model in sorted({(r["memory"], r["model"]) for r in mine}):
        strata = [[f["score"] for f in r["final"]] for r in mine
                  if r["memory"] == memory and r["model"] == model]
        if len(strata) == len(grid):
            point, lo, hi = stratified_bootstrap(strata)
            rows.append((-point, memory, model, lo, hi))
    return grid, [{"memory": m, "model": a, "iqm": -neg, "lo": lo, "hi": hi}
                  for neg, m, a, lo, hi in sorted(rows)]
