"""The memory study's figures as PNGs (matplotlib, headless): learning curves per track
(:func:`draw_curves`) and the final scores of every cell (:func:`draw_finals`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memtab_env.atomic import atomic_path

# The axis stops here (the tables give every score): a seed that collapsed
# far below random play would otherwise squash every other curve flat.
FLOOR = -1.0


def earlier_runs(run: dict[str, Any], runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs of the same cell that ``run`` trained on from (its ``init`` track's,
    that one's ``init``, ...), oldest first; those not among ``runs`` end the chain."""
    by_cell = {(r["track"], r["memory"], r["model"]): r for r in runs}
    chain: list[dict[str, Any]] = []
    while run.get("init") and len(chain) < len(runs):
        found = by_cell.get((run["init"]["track"], run["memory"], run["model"]))
        if found is None:
            break
        run = found
        chain.insert(0, run)
    return chain


def curve_band(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The IQM over seeds of ``scores[seed, point]`` at each curve point and its 95%
    stratified-bootstrap interval (one stratum: the seeds), as ``(centre, lo, hi)``."""
    from memtab_env.protocol.metrics import stratified_bootstrap

    centre, lo, hi = np.array([stratified_bootstrap([column]) for column in np.asarray(scores).T]).T
    return centre, lo, hi


def line_style(index: int) -> dict[str, Any]:
    """The colour and dash of an architecture's line: the same in every panel of a track,
    and no two alike for up to 30 architectures (matplotlib's default cycle repeats after
    10 colours)."""
    return {"color": f"C{index % 10}", "ls": ("-", "-.", ":")[index // 10 % 3]}


def draw_curves(runs: Sequence[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """One figure per track (``<track>.png``): a panel per memory model, a line per
    architecture: the IQM over seeds of the curve score against learner steps, with its
    95% stratified-bootstrap interval shaded (as the final tables report it); a run
    trained on from earlier runs (``init``) has their IQM drawn before it, dashed. The
    axis stops at ``FLOOR``, and a panel that clipped something says so. Returns the
    paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    from memtab_env.protocol.metrics import iqm

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for track in dict.fromkeys(r["track"] for r in runs):
        mine = [r for r in runs if r["track"] == track]
        memories = list(dict.fromkeys(r["memory"] for r in mine))
        models = sorted({r["model"] for r in mine})
        fig, axes = plt.subplots(1, len(memories), figsize=(5 * len(memories), 4), sharey=True,
                                 squeeze=False)
        clipped = False
        for ax, memory in zip(axes[0], memories, strict=True):
            for run in sorted((r for r in mine if r["memory"] == memory), key=lambda r: r["model"]):
                steps = np.array([p["timesteps"] for p in run["curves"][0]])
                scores = np.array([[p["score"] for p in c] for c in run["curves"]])
                centre, lo, hi = curve_band(scores)
                clipped |= bool((lo < FLOOR).any())
                (line,) = ax.plot(steps, centre, label=run["model"], **line_style(models.index(run["model"])))
                ax.fill_between(steps, lo, hi, alpha=0.15, color=line.get_color())
                for before in earlier_runs(run, runs):
                    ax.plot([p["timesteps"] for p in before["curves"][0]],
                            iqm(np.array([[p["score"] for p in c] for c in before["curves"]]), axis=0),
                            ls="--", color=line.get_color(), alpha=0.6,
                            label=f"{run['model']}, as {before['track']}")
            ax.set_title(f"{track}, memory {memory}")
            ax.set_ylim(bottom=FLOOR - 0.05, top=max(1.05, ax.get_ylim()[1]))
            ax.set_xlabel("learner steps")
            ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 400k, not 400000
            ax.axhline(0.0, color="grey", lw=0.6, ls=":")
            ax.axhline(1.0, color="grey", lw=0.6, ls=":")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="best", ncol=2 if len(ax.get_legend_handles_labels()[0]) > 8 else 1)
        axes[0][0].set_ylabel("normalised score, IQM over seeds (95% CI)"
                              + (f"\naxis clipped at {FLOOR:g}" if clipped else ""))
        paths.append(_save(fig, out_dir / f"{track}.png"))
    return paths


def _save(fig: Any, path: Path) -> Path:
    """Write ``fig`` to ``path`` (atomically, without the software tag that changes with
    matplotlib's version) and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)
    return path


def draw_finals(runs: Sequence[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """One figure per track (``<track>-final.png``): the final score of every cell, the
    architectures along the axis in the order of ``runs``, a colour per memory model side
    by side; each cell's IQM over seeds with its 95% stratified-bootstrap interval (as
    the tables report it) and every seed's score beside it as a dot, so that a cell's
    spread and its outliers show, not only its centre. The axis runs down to random play
    (0) or the lowest seed, and stops at ``FLOOR`` (a seed below it is drawn on it, and
    the axis says so). Returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memtab_env.study.tables import aggregate

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cells = aggregate(runs)
    paths = []
    for track in dict.fromkeys(r["track"] for r in runs):
        mine = [r for r in runs if r["track"] == track]
        models = list(dict.fromkeys(r["model"] for r in mine))
        memories = list(dict.fromkeys(r["memory"] for r in mine))
        slot = 0.8 / len(memories)  # each memory model's share of an architecture's place
        fig, ax = plt.subplots(figsize=(max(6.0, 0.75 * len(models) + 2), 4))
        clipped = False
        for m, memory in enumerate(memories):
            colour = f"C{m % 10}"
            for k, run in enumerate(r for r in mine if r["memory"] == memory):
                x = models.index(run["model"]) + (m - (len(memories) - 1) / 2) * slot
                stats = cells[(track, memory, run["model"])]
                seeds = np.array([f["score"] for f in run["final"]], np.float64)
                clipped |= bool((seeds < FLOOR).any())
                below, above = stats["iqm"] - stats["lo"], stats["hi"] - stats["iqm"]
                ax.errorbar([x], [stats["iqm"]], yerr=[[below], [above]], fmt="o", ms=5, capsize=3,
                            color=colour, zorder=3,
                            label=f"memory {memory}" if k == 0 else None)
                # the seeds spread evenly across the cell's slot in seed order: no random jitter
                spread = np.linspace(-0.3, 0.3, seeds.size) if seeds.size > 1 else np.zeros(1)
                offsets = spread * slot
                ax.scatter(x + offsets, np.maximum(seeds, FLOOR), s=8, color=colour, alpha=0.45,
                           linewidths=0, zorder=2)
        ax.set_xticks(range(len(models)), models, rotation=30, ha="right")
        ax.set_xlim(-0.6, len(models) - 0.4)
        lowest = min(min(f["score"] for f in r["final"]) for r in mine)
        ax.set_ylim(bottom=max(FLOOR, min(0.0, lowest)) - 0.05, top=max(1.05, ax.get_ylim()[1]))
        ax.axhline(0.0, color="grey", lw=0.6, ls=":")
        ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"{track}\nfinal score per cell (IQM, 95% CI; dots: seeds)", fontsize=10)
        ax.set_ylabel("normalised final score" + (f"\nseeds below {FLOOR:g} drawn at it" if clipped else ""))
        ax.legend(fontsize=7, loc="best")
        paths.append(_save(fig, out_dir / f"{track}-final.png"))
    return paths
