"""``LEADERBOARD.md``, rebuilt from the committed result files.

Every ``*.json`` under the results folder is read as a result (``memtab-result/1``) and
validated (schema, env version, track version, the track's seeds). A result that names a
records file is *audited*: every record is replayed through the rules engine
(:func:`memtab_env.record.replay`) and the figures are recomputed from the replayed
games (:func:`memtab_env.protocol.evaluate.summarise`); a record that does not replay,
or figures its records do not give, reject the result. A result must use at least the
protocol's deals of its track; one agent label appears once per track, labels being
compared as they read (:func:`memtab_env.protocol.results.label_key`).

The page is a pure function of the result files (sorted paths, fixed formatting, no
dates), so rebuilding it twice gives the same bytes.
"""

from __future__ import annotations

import copy
import json
import math
import re
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtab_env import untrusted
from memtab_env.errors import MemTabError, RecordError
from memtab_env.protocol import metrics
from memtab_env.protocol.evaluate import summarise, summary
from memtab_env.protocol.results import ResultError, label_key, load_result, track_of
from memtab_env.protocol.tracks import TRACKS, Track
from memtab_env.record import iter_records
from memtab_env.record import replay as replay_record

#: relative tolerance when comparing a result's figures with its recomputed ones
TOLERANCE = 1e-9


@dataclass
class Entry:
    """One accepted result."""

    path: Path
    result: dict[str, Any]
    audited_games: int  # games replayed from records (0: no records)

    @property
    def label(self) -> str:
        return str(self.result["agent"]["label"])


def _compare(file_value: Any, recomputed: Any, where: str, source: str = "its records give") -> None:
    """Raise :class:`ResultError` at the first field where ``file_value`` differs from
    ``recomputed`` (floats within :data:`TOLERANCE`)."""
    if isinstance(recomputed, dict):
        if not isinstance(file_value, dict) or set(file_value) != set(recomputed):
            got = sorted(file_value) if isinstance(file_value, dict) else file_value
            raise ResultError(f"{where}: fields {got!r:.80} differ from the recomputed {sorted(recomputed)}")
        for k in recomputed:
            _compare(file_value[k], recomputed[k], f"{where}.{k}", source)
    elif isinstance(recomputed, list):
        if not isinstance(file_value, list) or len(file_value) != len(recomputed):
            raise ResultError(f"{where}: {file_value!r:.80} but {source} {recomputed!r:.80}")
        for k, (a, b) in enumerate(zip(file_value, recomputed, strict=True)):
            _compare(a, b, f"{where}[{k}]", source)
    elif isinstance(recomputed, float) and isinstance(file_value, (int, float)) \
            and not isinstance(file_value, bool):
        if not math.isclose(file_value, recomputed, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            raise ResultError(f"{where}: the file says {file_value!r}, {source} {recomputed!r}")
    elif type(file_value) is not type(recomputed) or file_value != recomputed:
        raise ResultError(f"{where}: the file says {file_value!r:.80}, {source} {recomputed!r:.80}")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def derived(track: Track, runs: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """Check and recompute, run by run, every figure that follows from others: the
    intervals of the win rates (from ``win_rate`` and ``n_eff``), the overall win rate and
    score difference (the mean over opponents, each on the same deals), the normalised
    score and its interval (from the track's anchors). Returns the runs with those
    figures recomputed; :class:`ResultError` names the first field that differs."""
    out = copy.deepcopy(runs)
    for i, run in enumerate(out):
        where = f"{source}: runs[{i}]"
        figs = {f"opponents.{o}": f for o, f in run["opponents"].items()}
        figs["overall"] = run["overall"]
        for name, f in figs.items():
            lo, hi = metrics.wilson_interval(f["win_rate"], f["n_eff"])
            if not (_close(f["win_rate_ci"][0], lo) and _close(f["win_rate_ci"][1], hi)):
                raise ResultError(f"{where}.{name}.win_rate_ci: the file says {f['win_rate_ci']!r}, its "
                                  f"win_rate and n_eff give {[lo, hi]!r}")
            f["win_rate_ci"] = [lo, hi]
        opps = list(run["opponents"].values())
        for key in ("win_rate", "score_diff"):
            mean = sum(f[key] for f in opps) / len(opps)
            if not _close(run["overall"][key], mean):
                raise ResultError(f"{where}.overall.{key}: the file says {run['overall'][key]!r}, the "
                                  f"mean over opponents is {mean!r}")
        norm = track.normalised(run["overall"]["win_rate"])
        ci = None if norm is None else [track.normalised(x) for x in run["overall"]["win_rate_ci"]]
        _compare(run["normalised_score"], norm, f"{where}.normalised_score", "its win rate gives")
        _compare(run["normalised_ci"], ci, f"{where}.normalised_ci", "its win rate interval gives")
        run["normalised_score"], run["normalised_ci"] = norm, ci
    return out


def audit(path: Path, result: dict[str, Any], replay_records: bool = True,
          root: Path | None = None, reproduce: int = 0, reproduce_seed: int | None = None) -> int:
    """Audit ``result`` (read from ``path`` in the results tree ``root``, default the
    result's folder): replay its records, recompute every figure the leaderboard shows
    (the runs from the records, or, without records, the figures that follow from
    others; the summary from the runs) and refuse the result where its file says
    otherwise; with ``reproduce``, re-play that many recorded games with the agent the
    result names (:mod:`memtab_env.protocol.reproduce`). On success the result holds
    the recomputed figures. Returns the number of games replayed (0 without records).
    Raises :class:`ResultError`. ``replay_records=False`` only counts the records (a
    quick look, not an audit)."""
    root = (root or path.parent).resolve()
    track = track_of(result)
    records: list[tuple[str, dict[str, Any]]] = []
    if result.get("records"):
        rpath = untrusted.resolve_inside(result["records"], path.parent, [root], ResultError, str(path),
                                         ("records",))
        try:
            for k, (where, rec) in enumerate(iter_records(rpath, root)):
                if not replay_records:
                    records.append((where, {}))
                    continue
                try:
                    replay_record(rec, root=root, base=rpath.parent)
                except RecordError as exc:
                    b = rec.get("benchmark") if isinstance(rec, dict) else None
                    game = (f" (opponent {b.get('opponent')!r:.40}, deal {b.get('deal')!r:.20}, "
                            f"rotation {b.get('rotation')!r:.20})" if isinstance(b, dict) else "")
                    raise ResultError(f"{path}: record {k}{game} at {where} does not replay: {exc}") from exc
                records.append((where, rec))
        except RecordError as exc:
            raise ResultError(f"{path}: its records cannot be read: {exc}") from exc
        if not replay_records:
            return len(records)
        try:
            runs = summarise(track, len(result["seeds"]), len(result["runs"]), [r for _, r in records],
                             result["agent"]["label"])
        except ResultError as exc:
            raise ResultError(f"{path}: its records ({rpath.name}) do not make this evaluation: "
                              f"{exc}") from exc
        _compare(result["runs"], runs, f"{path}: runs")
    else:
        runs = derived(track, result["runs"], str(path))
    recomputed = summary(runs)
    _compare(result["summary"], recomputed, f"{path}: summary", "its runs give")
    result["runs"], result["summary"] = runs, recomputed
    if reproduce and records:
        from memtab_env.protocol.reproduce import reproduce_result

        reproduce_result(path, result, records, reproduce, root, reproduce_seed)
    return len(records)


#: formats of JSON files that may sit among the results (records written as a folder of
#: ``.json`` files, tournament summaries) and are not results: skipped, not rejected
NOT_RESULTS = ("memtab-record/", "memtab-tournament/", "memtab-study-run/")


def _not_a_result(path: Path) -> bool:
    try:
        obj = untrusted.load_json(path, ResultError)
    except ResultError:
        return False
    fmt = obj.get("format") if isinstance(obj, dict) else None
    return isinstance(fmt, str) and fmt.startswith(NOT_RESULTS)


def collect(results_dir: Path, on_error: Callable[[Path, Exception], None] | None = None,
            replay: bool = True, reproduce: int = 0, reproduce_seed: int | None = None) -> list[Entry]:
    """Validate and audit every result under ``results_dir`` (sorted by path; records and
    tournament summaries among them are skipped; links that lead outside the folder
    are refused). A rejected result raises :class:`ResultError`, or, with
    ``on_error``, is reported and skipped. ``replay=False`` skips replaying the records
    (for quick checks; the command always replays); ``reproduce`` re-plays that many
    recorded games per result with the agent it names."""
    entries: list[Entry] = []
    seen: dict[tuple[str, str], tuple[Path, str]] = {}
    root = Path(results_dir).resolve()
    for path in sorted(Path(results_dir).rglob("*.json")):
        try:
            untrusted.resolve_inside(path.relative_to(results_dir).as_posix(), Path(results_dir), [root],
                                     ResultError, str(path), ("path",))
            if _not_a_result(path):
                continue
            result = load_result(path)
            track = track_of(result)
            if len(result["seeds"]) < track.deals:
                raise ResultError(f"{path}: field seeds: {len(result['seeds'])} deals, fewer than the "
                                  f"{track.deals} of the protocol of track {track.id}; not comparable")
            label = result["agent"]["label"]
            key = (track.id, label_key(label))
            if key in seen:
                first, first_label = seen[key]
                alike = "" if first_label == label else \
                    f" (labels are compared as they read: {label!r} reads like {first_label!r})"
                raise ResultError(f"{path}: field agent.label: a second result for agent {label!r} on "
                                  f"track {key[0]}{alike}; the first is {first}")
            audited = audit(path, result, replay, root, reproduce, reproduce_seed)
            seen[key] = (path, label)
            entries.append(Entry(path, result, audited))
        except MemTabError as exc:
            if on_error is None:
                raise
            on_error(path, exc)
    return entries


def md_code(text: str) -> str:
    """``text`` as a Markdown code span that is safe inside a table cell: a fence longer
    than any run of backticks in it, pipes escaped, control characters shown as escapes
    (so a label can neither end the span, split the row, nor start a new line)."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text).replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or text.startswith(" ") or text.endswith(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _rate(fig: dict[str, Any]) -> str:
    if fig.get("win_rate_ci") is None:
        return f"{_pct(fig['win_rate'])} (mean of runs)"
    lo, hi = fig["win_rate_ci"]
    return f"{_pct(fig['win_rate'])} [{_pct(lo)}, {_pct(hi)}]"


def _num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def normalised_figure(result: dict[str, Any]) -> tuple[float | None, list[float] | None, bool]:
    """The normalised score of an accepted result as ``(value, [lo, hi], is_iqm)``: one
    run: its score and the interval from its win rate; several: the IQM over runs and its
    stratified bootstrap interval; ``(None, None, False)`` before the track's anchors."""
    s = result["summary"]
    if len(result["runs"]) >= 2 and s.get("normalised_iqm") is not None:
        return s["normalised_iqm"], list(s["normalised_iqm_ci"]), True
    run = result["runs"][0]
    if run["normalised_score"] is None:
        return None, None, False
    return run["normalised_score"], list(run["normalised_ci"]), False


def _norm(result: dict[str, Any]) -> tuple[float | None, str]:
    """Sort key and cell of the normalised score (:func:`normalised_figure`)."""
    value, ci, is_iqm = normalised_figure(result)
    if value is None or ci is None:
        return None, "–"
    return value, f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" + (" (IQM)" if is_iqm else "")


def study_seed_notes(study_runs: Sequence[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(shipped policy name, benchmark track) -> "best of N seeds; cell IQM X [lo, hi]"
    for every shipped
    policy that is the best seed of a memory study cell (``agents.shipped.STUDY_SEEDS``)
    whose run file is among ``study_runs``; the IQM and interval are the cell's, from
    :func:`memtab_env.study.aggregate`. A shipped seed that is not the cell's best is
    labelled "seed s of N" instead; a cell whose final scores are the study's JAX proxy
    (older run files) says so."""
    from memtab_env.agents.shipped import STUDY_SEEDS
    from memtab_env.study import aggregate
    from memtab_env.study.tables import final_scale

    cells = aggregate(study_runs)
    notes = {}
    for name, (scored_on, track, memory, model, seed) in STUDY_SEEDS.items():
        run = next((r for r in study_runs if (r["track"], r["memory"], r["model"]) == (track, memory, model)),
                   None)
        if run is None or seed not in run["seeds"]:
            continue
        scores = [f["score"] for f in run["final"]]
        cell = cells[(track, memory, model)]
        best = scores[run["seeds"].index(seed)] == max(scores)
        which = f"best of {len(scores)} seeds" if best else f"seed {seed} of {len(scores)}"
        scale = " on the study's JAX proxy" if final_scale(run) == "jax-proxy" else ""
        notes[(name, scored_on)] = (f"{which}; cell IQM {cell['iqm']:.2f} [{cell['lo']:.2f}, "
                                    f"{cell['hi']:.2f}]{scale}")
    return notes


def _note(result: dict[str, Any], notes: dict[tuple[str, str], str]) -> str:
    """`` (note)`` for a result of one shipped study seed on the track its cell is scored
    on, else empty."""
    specs = {(run["kind"], run["spec"]) for run in result["agent"]["runs"]}
    if len(specs) == 1:
        kind, spec = specs.pop()
        if kind == "builtin" and (spec, result["track"]["id"]) in notes:
            return f" ({notes[(spec, result['track']['id'])]})"
    return ""


def mean_figures(runs: Sequence[dict[str, Any]], key: str | None) -> dict[str, Any]:
    """Figures of a single run, or the mean win rate of several runs (no interval: the
    IQM of the normalised score carries the interval over runs)."""
    figs = [r["overall"] if key is None else r["opponents"][key] for r in runs]
    if len(figs) == 1:
        return figs[0]
    return {"win_rate": sum(f["win_rate"] for f in figs) / len(figs), "win_rate_ci": None}


def mean_score_diff(result: dict[str, Any]) -> float:
    """The score difference of a result: the mean over its runs of each run's overall one."""
    return sum(run["overall"]["score_diff"] for run in result["runs"]) / len(result["runs"])


def render(entries: Sequence[Entry], out_dir: Path,
           study_runs: Sequence[dict[str, Any]] = ()) -> str:
    """The Markdown page (deterministic: a function of ``entries`` and the memory
    study's run files, :func:`memtab_env.study.leaderboard_section`)."""
    lines = [
        "# Leaderboard",
        "",
        "Generated by `memtab leaderboard` from the result files under `results/`; do not edit by "
        "hand. The protocol (tracks, deals, duplicate format, metrics) is [BENCHMARK.md](BENCHMARK.md).",
        "Win rates are percentages with 95% intervals (clustered Wilson, by deal); a shared win "
        "counts 1/k. Normalised: 0 = `random`, 1 = the track's strongest reference agent. "
        "*Audited*: the result's game records were replayed through the rules engine and "
        "give its figures.",
        "",
    ]
    by_track: dict[str, list[Entry]] = {}
    for e in entries:
        by_track.setdefault(e.result["track"]["id"], []).append(e)
    for tid, track in TRACKS.items():
        rows = by_track.get(tid, [])
        seeds = track.seeds()
        lines += [
            f"## {track.id} (v{track.version}): {track.description}",
            "",
            f"`{track.env_id}` with `{json.dumps(dict(track.options))}`; {track.deals} deals "
            f"(seeds {seeds[0]} .. {seeds[-1]}), each played once per seat rotation against every "
            "reference opponent; "
            f"normalised score anchors: `random` {_num(track.anchors.get('random'), 4)}, "
            f"`{track.strongest}` {_num(track.anchors.get(track.strongest), 4)} (mean win rate).",
            "",
        ]
        if not rows:
            lines += ["No results yet.", ""]
            continue
        notes = study_seed_notes(study_runs)
        rows.sort(key=lambda e: (-(_norm(e.result)[0] if _norm(e.result)[0] is not None else -math.inf),
                                 -e.result["summary"]["win_rate"], e.label))
        head = ["#", "agent", "runs", "deals", "win rate", *[f"vs {o}" for o in track.opponents],
                "normalised", "score diff", "audited", "result"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for rank, e in enumerate(rows, 1):
            r = e.result
            diff = mean_score_diff(r)
            try:
                rel = e.path.resolve().relative_to(out_dir.resolve())
            except ValueError:
                rel = e.path
            cells = [
                str(rank), md_code(e.label) + _note(r, notes), str(len(r["runs"])), str(len(r["seeds"])),
                _rate(mean_figures(r["runs"], None)),
                *[_rate(mean_figures(r["runs"], o)) for o in track.opponents],
                _norm(r)[1], f"{diff:+.2f}",
                f"yes ({e.audited_games} games)" if e.audited_games else "no records",
                f"[json]({urllib.parse.quote(rel.as_posix())})",
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += _across_tracks(entries)
    from memtab_env.study import leaderboard_section

    lines += leaderboard_section(study_runs)
    return "\n".join(lines).rstrip() + "\n"


def _across_tracks(entries: Sequence[Entry]) -> list[str]:
    """IQM of normalised scores over runs x tracks, per agent of one game with results on
    two tracks or more, with the stratified bootstrap interval (strata: tracks)."""
    groups: dict[tuple[str, str], dict[str, list[float]]] = {}
    for e in entries:
        norms = [run["normalised_score"] for run in e.result["runs"]]
        if None in norms:
            continue
        groups.setdefault((e.result["game"], e.label), {})[e.result["track"]["id"]] = norms
    rows = []
    for (game, label), per_track in sorted(groups.items()):
        if len(per_track) < 2:
            continue
        strata = [per_track[t] for t in TRACKS if t in per_track]
        point, lo, hi = metrics.stratified_bootstrap(strata)
        runs = sum(len(s) for s in strata)
        ci = f"[{lo:.2f}, {hi:.2f}]" if any(len(s) > 1 for s in strata) else "– (one run per track)"
        tracks = ", ".join(t for t in TRACKS if t in per_track)
        cells = [game, md_code(label), tracks, str(runs), f"{point:.2f}", ci]
        rows.append((-point, game, label, "| " + " | ".join(cells) + " |"))
    if not rows:
        return []
    rows.sort()
    return [
        "## Across tracks",
        "",
        "Per agent (of one game) with results on two tracks or more: the IQM of its normalised "
        "scores over all runs and tracks, with a 95% stratified bootstrap interval over runs "
        f"(strata: tracks; {metrics.BOOTSTRAP_REPS} replicates, seed {metrics.BOOTSTRAP_SEED}).",
        "",
        "| game | agent | tracks | runs | IQM normalised | 95% interval |",
        "|---|---|---|---|---|---|",
        *[r[-1] for r in rows],
        "",
    ]


def build(results_dir: str | Path = "results", out: str | Path = "LEADERBOARD.md",
          on_error: Callable[[Path, Exception], None] | None = None, reproduce: int = 0,
          reproduce_seed: int | None = None, study_config: str | Path | None = None
          ) -> tuple[str, list[Entry]]:
    """Collect, audit and render; returns ``(markdown, entries)`` (writing is the caller's)."""
    results_dir, out = Path(results_dir), Path(out)
    if not results_dir.is_dir():
        raise ResultError(f"no results folder at {results_dir}")
    entries = collect(results_dir, on_error, reproduce=reproduce, reproduce_seed=reproduce_seed)
    return render(entries, out.parent, audited_study_runs(results_dir, study_config, on_error)), entries


def audited_study_runs(results_dir: Path, study_config: str | Path | None = None,
               on_error: Callable[[Path, Exception], None] | None = None) -> list[dict[str, Any]]:
    """The memory study's run files under ``results_dir/study``, each audited against the
    study config (``study_config``, default ``configs/study.yaml`` beside the results
    folder) and the benchmark results that anchor its scores
    (:func:`memtab_env.study.runs.audit_run`). A refused run file raises, or, with
    ``on_error``, is reported and left off the page."""
    from memtab_env.study import collect_runs, load_study
    from memtab_env.study.grid import StudyError

    folder = Path(results_dir) / "study"
    if not folder.is_dir():
        return []
    config = Path(study_config) if study_config else \
        Path(results_dir).resolve().parent / "configs" / "study.yaml"
    if not config.is_file():
        raise StudyError(f"{folder}: study run files are audited against the study config, and there is "
                         f"none at {config}")
    return collect_runs(folder, load_study(config), results_dir, on_error)
