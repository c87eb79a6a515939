"""Build the static site (:mod:`memtab_env.site`) from a results folder."""

from __future__ import annotations

import base64
import json
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from memtab_env import __version__
from memtab_env.protocol.leaderboard import Entry, collect, mean_figures, mean_score_diff, normalised_figure
from memtab_env.protocol.results import ResultError
from memtab_env.protocol.tracks import TRACKS
from memtab_env.site.agents import describe_agent

#: the file that marks a folder as a site this command wrote (and may rewrite)
MARKER = ".memtab-site"
#: the folders the builder owns inside the site (emptied on every build)
OWNED = ("data", "records")
#: the pages: file -> (title, the navigation entry it is, the scripts it runs in order)
PAGES = {
    "index.html": ("Leaderboard", "index.html", ("data/site.js", "common.js", "leaderboard.js")),
    "agent.html": ("Agent", None, ("data/site.js", "common.js", "agent.js")),
    "study.html": ("Memory study", "study.html", ("data/study.js", "common.js", "study.js")),
    "viewer.html": ("Record viewer", "viewer.html",
                    ("data/site.js", "data/boards.js", "common.js", "rules.js", "viewer.js")),
}
#: the header's navigation: (page, label)
NAV = (("index.html", "Leaderboard"), ("study.html", "Memory study"), ("viewer.html", "Record viewer"))


def page_html(name: str) -> str:
    """The HTML of page ``name`` of :data:`PAGES`: one shell (header, navigation, an empty
    ``main`` the page's script fills), the same for every page."""
    title, current, scripts = PAGES[name]
    here = ' aria-current="page"'
    nav = "\n".join(f'    <a href="{href}"{here if href == current else ""}>{label}</a>'
                    for href, label in NAV)
    tags = "\n".join(f'<script src="{src}"></script>' for src in scripts)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · memtab-env</title>
<link rel="stylesheet" href="site.css">
</head>
<body>
<header class="top">
  <a class="brand" href="index.html">memtab-env</a>
  <nav>
{nav}
  </nav>
</header>
<main id="main"><noscript>This page is drawn by JavaScript; please enable it.</noscript></main>
{tags}
</body>
</html>
"""


class SiteError(ResultError):
    """The site cannot be written where it was asked to go."""


@dataclass
class SiteReport:
    """What a build wrote: the accepted results, the refused ones (path, reason) and the
    records files copied with their sidecars."""

    out: Path
    entries: list[Entry]
    refused: list[tuple[str, str]] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    study_cells: int = 0


def _figure(fig: dict[str, Any]) -> dict[str, Any]:
    ci = fig.get("win_rate_ci")
    return {"value": fig["win_rate"], "ci": list(ci) if ci is not None else None}


def _track_data(track_id: str) -> dict[str, Any]:
    t = TRACKS[track_id]
    seeds = t.seeds()
    return {"id": t.id, "version": t.version, "game": t.game, "env_id": t.env_id,
            "description": t.description, "options": dict(t.options), "opponents": list(t.opponents),
            "deals": t.deals, "seeds": [seeds[0], seeds[-1]], "strongest": t.strongest,
            "anchors": dict(t.anchors)}


def _write_data(out: Path, name: str, variable: str, obj: Any) -> None:
    """``NAME.json`` and ``NAME.js`` (``window.VARIABLE = ...``, for file://) in ``out``'s data folder."""
    text = json.dumps(obj, indent=None, separators=(",", ":"), sort_keys=False, allow_nan=False)
    (out / "data" / f"{name}.json").write_text(text + "\n", encoding="utf-8")
    (out / "data" / f"{name}.js").write_text(f"window.{variable} = {text};\n", encoding="utf-8")


def _copy_records(src: Path, rel: str, out: Path) -> None:
    """The records file as ``out/rel`` and its sidecar ``out/rel.js``, which hands the
    viewer the file's bytes where ``fetch`` cannot read them (file://)."""
    dest = out / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()
    dest.write_bytes(data)
    b64 = base64.b64encode(data).decode("ascii")
    (out / f"{rel}.js").write_text(f"memtabRecordsLoaded({json.dumps(rel)}, \"{b64}\");\n", encoding="utf-8")


def _prepare(out: Path) -> None:
    """Create ``out`` or reuse a site written before; refuse any other non-empty folder."""
    if out.exists() and not out.is_dir():
        raise SiteError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteError(f"{out}: a non-empty folder that is not a site written by `memtab site` "
                        f"(no {MARKER} file); choose a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    for name in OWNED:
        shutil.rmtree(out / name, ignore_errors=True)
        (out / name).mkdir()
    (out / MARKER).write_text("written by memtab site; rebuilt in place by it\n", encoding="utf-8")


def build_site(results_dir: str | Path = "results", out: str | Path = "site") -> SiteReport:
    """Audit every result under ``results_dir`` as ``memtab leaderboard`` does, and write
    the site to ``out`` (see :mod:`memtab_env.site`). Refused results are reported, never
    shown as entries. Raises :class:`SiteError` for an unusable ``out``."""
    results_dir, out = Path(results_dir), Path(out)
    if not results_dir.is_dir():
        raise SiteError(f"no results folder at {results_dir}")
    refused: list[tuple[str, str]] = []

    def on_error(path: Path, exc: Exception) -> None:
        refused.append((path.relative_to(results_dir).as_posix(), str(exc)))

    entries = collect(results_dir, on_error)
    _prepare(out)
    static = resources.files("memtab_env.site") / "static"
    for item in static.iterdir():
        if item.is_file() and item.name.rsplit(".", 1)[-1] in ("css", "js"):
            (out / item.name).write_bytes(item.read_bytes())
    for name in PAGES:
        (out / name).write_text(page_html(name), encoding="utf-8")
    report = SiteReport(out, entries, refused)

    results, agents = [], {}
    for e in entries:
        r = e.result
        rel = e.path.relative_to(results_dir).as_posix()
        records = None
        if r.get("records"):
            src = (e.path.parent / r["records"]).resolve()
            records = "records/" + src.relative_to(results_dir.resolve()).as_posix()
            if records not in report.records:
                _copy_records(src, records, out)
                report.records.append(records)
        track = TRACKS[r["track"]["id"]]
        value, ci, is_iqm = normalised_figure(r)
        results.append({
            "track": track.id, "label": e.label, "file": rel, "records": records,
            "games": e.audited_games, "audited": e.audited_games > 0,
            "runs": len(r["runs"]), "deals": len(r["seeds"]),
            "win_rate": _figure(mean_figures(r["runs"], None)),
            "opponents": {o: _figure(mean_figures(r["runs"], o)) for o in track.opponents},
            "normalised": {"value": value, "ci": ci, "iqm": is_iqm},
            "score_diff": mean_score_diff(r),
        })
        agent = agents.setdefault(e.label, {"label": e.label, "games": [], "runs": []})
        if r["game"] not in agent["games"]:
            agent["games"].append(r["game"])
        for run in r["agent"]["runs"]:
            key = (r["game"], run["spec"], run["kind"], run.get("sha256"))
            if key not in [(a["game"], a["spec"], a["kind"], a["sha256"]) for a in agent["runs"]]:
                agent["runs"].append({"game": r["game"], **describe_agent(r["game"], run)})

    _write_data(out, "site", "MEMTAB_SITE", {
        "package_version": __version__,
        "tracks": [_track_data(t) for t in TRACKS],
        "results": results,
        "agents": agents,
        "refused": [{"file": f, "reason": why} for f, why in refused],
    })
    from memtab_env.site.study import study_data
    from memtab_env.study import COMMITTED_STUDIES, collect_runs

    study = study_data([(folder, config, collect_runs(results_dir / folder))
                        for folder, config in COMMITTED_STUDIES if (results_dir / folder).is_dir()])
    report.study_cells = len(study["cells"])
    _write_data(out, "study", "MEMTAB_STUDY", study)
    from memtab_env.boards import default_board

    _write_data(out, "boards", "MEMTAB_BOARDS", {"default": default_board().to_dict()})
    return report


def site_main(argv: list[str] | None = None) -> int:
    """``memtab site``: build the static site."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="memtab site",
        description="Build the static benchmark site (leaderboard, agent pages, memory study, record "
                    "viewer) from a results folder, with the audit of `memtab leaderboard`: a refused "
                    "result never appears. Open OUT/index.html from disk or serve OUT as it is "
                    "(GitHub Pages); docs/site.md explains the site.")
    ap.add_argument("--results", default="results", help="results folder (default results)")
    ap.add_argument("--out", required=True, help="folder to write the site to (new, empty, or a site "
                                                 "written before)")
    args = ap.parse_args(argv)
    report = build_site(args.results, args.out)
    for path, why in report.refused:
        print(f"REFUSED {path}: {why}")
    print(f"{len(report.entries)} result(s) accepted, {len(report.refused)} refused; "
          f"{len(report.records)} records file(s); {report.study_cells} study cell(s)")
    print(f"site written to {report.out}; open {report.out / 'index.html'}")
    return 0
