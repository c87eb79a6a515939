"""The study's tables: per cell the IQM over seeds with its stratified-bootstrap interval
(:func:`aggregate`), across tracks (:func:`across_tracks`), the memory study section of ``LEADERBOARD.md``
(:func:`leaderboard_section`) and every cell in detail (:func:`cells_table`; written into
Markdown files by :mod:`memtab_env.study.doc_tables`), recomputed from the run files."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any, NamedTuple

from memtab_env.study.scores import FINAL_SCALES


def final_scale(run: dict[str, Any]) -> str:
    """The scale of a run file's final scores (:data:`~memtab_env.study.scores.FINAL_SCALES`):
    its ``final_scale``, or for a file written before that field, what its scores hold
    (turns: ``solo-turns``; win rates against ``random`` and ``greedy``: ``jax-proxy``)."""
    if run.get("final_scale") in FINAL_SCALES:
        return run["final_scale"]
    return "solo-turns" if "turns" in run["final"][0] else "jax-proxy"


def aggregate(runs: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, float]]:
    """``(track, memory, model) -> {iqm, lo, hi, seeds}`` of the final scores."""
    from memtab_env.protocol.metrics import stratified_bootstrap

    out = {}
    for run in runs:
        scores = [f["score"] for f in run["final"]]
        point, lo, hi = stratified_bootstrap([scores])
        out[(run["track"], run["memory"], run["model"])] = {
            "iqm": point, "lo": lo, "hi": hi, "seeds": len(scores)}
    return out


def leaderboard_section(runs: Sequence[dict[str, Any]], run_dir: str = "results/study/",
                        config: str = "configs/study.yaml") -> list[str]:
    """The memory study section of ``LEADERBOARD.md`` (Markdown lines; none without
    runs), recomputed from the run files: one table per track, cells ranked by IQM, and
    the cells' ranks across the grid's tracks (:func:`across_tracks`). ``run_dir`` and
    ``config``: where the text says the run files lie and which study config made them."""
    if not runs:
        return []
    cells = aggregate(runs)
    encoders = " and ".join(sorted({str(run.get("config", {}).get("encoder", "set")) for run in runs}))
    lines = [
        "## Memory study",
        "",
        f"Generated from the run files under `{run_dir}` (protocol: "
        f"[docs/study.md](docs/study.md), `memtab study --config {config}`). "
        f"Memory architectures (memax models, a memory per position behind the {encoders} encoder) "
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
                  f"{run['timesteps']:,} learner steps per seed. Final scores: "
                  f"{FINAL_SCALES[final_scale(run)]}.", "",
                  "| # | memory model | architecture | seeds | IQM normalised | 95% interval |",
                  "|---|---|---|---|---|---|"]
        for rank, ((_, memory, model), v) in enumerate(rows, 1):
            lines.append(f"| {rank} | `{memory}` | {model} | {v['seeds']} | {v['iqm']:.2f} | "
                         f"[{v['lo']:.2f}, {v['hi']:.2f}] |")
        lines.append("")
    grid, across = across_tracks(runs)
    if len(grid) > 1:
        lines += ranks_section(grid, across)
    return lines


def across_tracks(runs: Sequence[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The tracks of the full grid (follow-up tracks left out) and, when there are two or
    more, per memory model and architecture present on every one of them, its rank by IQM
    on each track and its mean rank, best first: ``(tracks, [{memory, model, ranks,
    mean_rank}, ...])``. Ranks, not pooled scores: the tracks' normalised scales have
    different anchors (Pelmanism solo: random play and the exact optimum; a benchmark
    track: ``random`` and its strongest agent), so an average of their scores would mean
    neither."""
    tracks = list(dict.fromkeys(r["track"] for r in runs))
    grid = [t for t in tracks if not any(r.get("follow_up") for r in runs if r["track"] == t)]
    if len(grid) < 2:
        return grid, []
    cells = aggregate([r for r in runs if r["track"] in grid])
    pairs = sorted({(memory, model) for (_, memory, model) in cells})
    pairs = [p for p in pairs if all((t, *p) in cells for t in grid)]
    ranks: dict[tuple[str, str], list[int]] = {p: [] for p in pairs}
    for track in grid:
        order = sorted(pairs, key=lambda p: (-cells[(track, *p)]["iqm"], p))
        for rank, p in enumerate(order, 1):
            ranks[p].append(rank)
    mean = {p: sum(r) / len(grid) for p, r in ranks.items()}
    return grid, [{"memory": p[0], "model": p[1], "ranks": ranks[p], "mean_rank": mean[p]}
                  for p in sorted(pairs, key=lambda p: (mean[p], p))]


def ranks_section(tracks: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown lines of :func:`across_tracks`' ranks."""
    lines = ["### Ranks across tracks", "",
             "Per memory model and architecture present on every track of the full grid (follow-up "
             "tracks left out): its rank by IQM on each track, and the mean rank. The tracks' "
             "normalised scores have different anchors, so they are ranked, not pooled.", "",
             "| memory model | architecture | " + " | ".join(tracks) + " | mean rank |",
             "|---|---|" + "---|" * (len(tracks) + 1)]
    for row in rows:
        lines.append(f"| `{row['memory']}` | {row['model']} | " + " | ".join(map(str, row["ranks"]))
                     + f" | {row['mean_rank']:.1f} |")
    return [*lines, ""]


#: ``(run-file key, column title)`` of the win rates a benchmark-scored cell records
WIN_RATES = (("win_rate_random", "win rate vs `random`"), ("win_rate_greedy", "vs `greedy`"),
             ("win_rate_expert", "vs `expert`"))


def _span(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f} to {high:.2f}"


def _first_held(points: Any, key: str, level: float, held: bool) -> str:
    """The learner steps of the first point (over the seeds' aligned series ``points``) at
    which the median over seeds of ``key`` is ``level`` or more (``held``: and stays so to
    the end); ``never`` when there is none; ``not recorded`` when the series do not hold
    ``key`` at the same steps in every seed (a run file written before the field)."""
    try:
        columns = list(zip(*points, strict=True))
        medians = [(float(column[0]["timesteps"]), statistics.median(float(p[key]) for p in column))
                   for column in columns if len({p["timesteps"] for p in column}) == 1]
    except (KeyError, TypeError, ValueError):
        return "not recorded"
    if not columns or len(medians) != len(columns):
        return "not recorded"
    for i, (steps, value) in enumerate(medians):
        if value >= level and (not held or all(v >= level for _, v in medians[i:])):
            return f"{steps:,.0f}"
    return "never"


def in_study_order(runs: Sequence[dict[str, Any]], study: Any) -> list[dict[str, Any]]:
    """``runs`` in the order of ``study``'s cells (:meth:`~memtab_env.study.grid.Study.cells`;
    cells the study does not have last, as they came)."""
    order = {cell: k for k, cell in enumerate(study.cells())}
    return sorted(runs, key=lambda r: order.get((r["track"], r["memory"], r["model"]), len(order)))


def cells_table(runs: Sequence[dict[str, Any]], curve_level: float = 0.9) -> list[str]:
    """Every cell in detail (Markdown lines, one table for all of ``runs``, in their order;
    they should share a track): its parameters, IQM [95% interval], every seed's score,
    what the final scores hold besides (the range over seeds of the mean turns, or of the
    win rate against each reference opponent), the learner steps from which its memories
    give back 99% of the face-down cards seen before (the median over seeds of the
    training log's ``recall_accuracy`` stays at 0.99 or more from there; nothing to recall
    under ``perfect``), the first curve point where the median over seeds reaches
    ``curve_level``, and its wall clock."""
    if not runs:
        return []
    cells = aggregate(runs)
    solo = all(final_scale(run) == "solo-turns" for run in runs)
    rates = [] if solo else [(k, t) for k, t in WIN_RATES if all(k in f for r in runs for f in r["final"])]
    seeds = sorted({s for run in runs for s in run["seeds"]})
    every = f"every seed ({seeds[0]} to {seeds[-1]})" if seeds == list(range(seeds[0], seeds[-1] + 1)) \
        else "every seed"
    extra = ["mean turns per seed"] if solo else [t for _, t in rates]
    head = ["memory", "architecture", "parameters", "IQM [95%]", every, *extra,
            "memories give back 99% from", f"median curve reaches {curve_level:g} at", "time"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for run in runs:
        stats = cells[(run["track"], run["memory"], run["model"])]
        finals = run["final"]
        held = ["(nothing to recall)"] if run["memory"] == "perfect" else \
            [_first_held(run.get("training"), "recall_accuracy", 0.99, held=True)]
        parameters, seconds = run.get("parameters"), run.get("seconds")
        row = [f"`{run['memory']}`", run["model"],
               f"{parameters:,}" if isinstance(parameters, int) else "not recorded",
               f"**{stats['iqm']:.2f} [{stats['lo']:.2f}, {stats['hi']:.2f}]**",
               ", ".join(f"{f['score']:.2f}" for f in finals),
               *([_span([f["turns"] for f in finals])] if solo
                 else [_span([f[k] for f in finals]) for k, _ in rates]),
               *held, _first_held(run["curves"], "score", curve_level, held=False),
               f"{seconds:,.0f} s" if isinstance(seconds, (int, float)) else "not recorded"]
        lines.append("| " + " | ".join(row) + " |")
    return lines


class Placement(NamedTuple):
    """Where a value lies against an interval: ``inside`` it at full precision,
    ``inside_shown`` at the two decimals the tables show, and ``text`` saying so."""

    inside: bool
    inside_shown: bool
    text: str


def placement(value: float, lo: float, hi: float) -> Placement:
    """Where ``value`` lies against the interval ``[lo, hi]``: ``yes`` inside it, else how
    far above or below at full precision, and whether it is inside at two decimals."""
    shown = float(f"{lo:.2f}") <= float(f"{value:.2f}") <= float(f"{hi:.2f}")
    if lo <= value <= hi:
        return Placement(True, shown, "yes")
    side, gap = ("above", value - hi) if value > hi else ("below", lo - value)
    size = f"{gap:.4f}" if gap >= 0.0001 else "under 0.0001"
    return Placement(False, shown, f"no: {size} {side}" + (" (inside at two decimals)" if shown else ""))


def reruns_table(committed: Sequence[dict[str, Any]], reruns: Sequence[dict[str, Any]]) -> list[str]:
    """Each cell of ``reruns`` (run files of the same cells on other seeds, in their order)
    beside its ``committed`` run (Markdown lines): both IQMs with their 95% intervals, the
    rerun's every seed, whether the rerun's IQM lies inside the committed interval (at full
    precision; when not, how far and whether it is inside at the two decimals the tables
    show) and whether the two intervals overlap, then a line that counts them. A rerun
    without a committed cell raises ``ValueError`` naming it."""
    if not reruns:
        return []
    before, after = aggregate(committed), aggregate(reruns)

    def seeds(runs: Sequence[dict[str, Any]]) -> str:
        numbers = sorted({s for run in runs for s in run["seeds"]})
        return f"seeds {numbers[0]} to {numbers[-1]}" if len(numbers) > 1 else f"seed {numbers[0]}"

    head = ["memory", "architecture", f"committed IQM [95%], {seeds(committed)}",
            f"rerun IQM [95%], {seeds(reruns)}", "every rerun seed",
            "rerun IQM inside the committed interval", "intervals overlap"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    inside = shown = overlap = 0
    for run in reruns:
        cell = (run["track"], run["memory"], run["model"])
        if cell not in before:
            raise ValueError(f"rerun of {' / '.join(cell)} has no committed run file to compare with")
        was, now = before[cell], after[cell]
        where = placement(now["iqm"], was["lo"], was["hi"])
        overlaps = now["lo"] <= was["hi"] and was["lo"] <= now["hi"]
        inside += where.inside
        shown += where.inside_shown
        overlap += overlaps
        row = [f"`{run['memory']}`", run["model"],
               f"{was['iqm']:.2f} [{was['lo']:.2f}, {was['hi']:.2f}]",
               f"**{now['iqm']:.2f} [{now['lo']:.2f}, {now['hi']:.2f}]**",
               ", ".join(f"{f['score']:.2f}" for f in run["final"]),
               where.text, "yes" if overlaps else "no"]
        lines.append("| " + " | ".join(row) + " |")
    n = len(reruns)
    return [*lines, "", f"Of {n} reruns, {inside} have their IQM inside the committed interval at full "
            f"precision, {shown} at two decimals; {overlap} of the {n} intervals overlap the committed one."]
