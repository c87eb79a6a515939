"""Golden figures: the benchmark protocol's figures for the built-in agents on the first
deals of one track, and the README's quick command at a short budget.

    python -m tests.golden.figures evaluation [--accept]
    python -m tests.golden.figures recurrent [--accept]
    python -m tests.golden.figures quick [--accept]

Without ``--accept`` the figures are recomputed and compared (exit 1 on a difference).
``evaluation.json`` is keyed by the track's versioned key (``memtab-2p/v1``): ``--accept``
refuses to change its figures under the same key (a change of the evaluation's streams
bumps the track's version, ``docs/versioning.md``). ``recurrent_evaluation.json`` holds
the same figures for a shipped recurrent policy (``rppo-memtab-none``) on the first deals
of ``memtab-2p-none``: its games follow the float arithmetic of the platform (its most
probable flip is often within rounding of the next), so they are compared on the platform
that wrote them. ``quick_short.json`` holds training figures, which follow the env's
streams and the platform. These two are kept per CPU (model name and vector instruction
set): ``<name>.json`` from the platform that played the leaderboard's records,
``<name>.<cpu>.json`` from others; ``--accept`` writes (or rewrites) the file of the CPU
it runs on.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from memtab_env.platform_info import platform_info

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
EVALUATION_FILE = HERE / "evaluation.json"
QUICK_FILE = HERE / "quick_short.json"
RECURRENT_FILE = HERE / "recurrent_evaluation.json"
#: the golden evaluation: the track, its first deals, the built-in agents evaluated
#: (``search`` is a reference agent too but takes minutes)
TRACK, DEALS, AGENTS = "memtab-2p", 10, ("random", "greedy", "expert")
#: the golden evaluation of a shipped recurrent policy: its track and first deals
RECURRENT_AGENT, RECURRENT_TRACK = "rppo-memtab-none", "memtab-2p-none"
#: the README's quick command at a short budget (everything else as configs/quick.yaml)
QUICK_CONFIG, QUICK_STEPS = "configs/quick.yaml", 20_480
#: the platform fields a training run must share to reproduce bit for bit (and the CPU's
#: vector instruction set, ``cpu_isa``, where the committed file records it)
SAME_PLATFORM = ("python", "versions", "cpu")


def _records_sha256(records: list[dict[str, Any]]) -> str:
    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps({k: v for k, v in r.items() if k != "package_version"}, sort_keys=True).encode())
    return h.hexdigest()


def evaluation_records(agent: str, track_id: str = TRACK) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(result, records)`` of ``agent`` on the first :data:`DEALS` deals of ``track_id``."""
    from memtab_env.protocol.evaluate import evaluate, resolve_agent
    from memtab_env.protocol.tracks import get_track

    track = get_track(track_id)
    spec = resolve_agent(agent, track.game)
    return evaluate(track, [spec], agent, deals=DEALS)


def evaluation_figures() -> dict[str, Any]:
    """The golden evaluation as written to ``evaluation.json`` (without the platform)."""
    from memtab_env.protocol.tracks import get_track

    out: dict[str, Any] = {"track": get_track(TRACK).key, "deals": DEALS, "agents": {}}
    for agent in AGENTS:
        result, records = evaluation_records(agent)
        out["agents"][agent] = {"runs": result["runs"], "summary": result["summary"],
                                "records_sha256": _records_sha256(records)}
    return out


def recurrent_figures() -> dict[str, Any]:
    """The golden evaluation of :data:`RECURRENT_AGENT` (without the platform)."""
    from memtab_env.protocol.tracks import get_track

    result, records = evaluation_records(RECURRENT_AGENT, RECURRENT_TRACK)
    return {"track": get_track(RECURRENT_TRACK).key, "deals": DEALS, "agent": RECURRENT_AGENT,
            "runs": result["runs"], "summary": result["summary"], "records_sha256": _records_sha256(records)}


def committed_records(agent: str, track_id: str = TRACK) -> list[dict[str, Any]]:
    """The leaderboard's committed records of ``agent`` on the first :data:`DEALS` deals of
    ``track_id``, in the order an evaluation plays them."""
    path = ROOT / "results" / track_id / f"{agent}.records.jsonl.gz"
    with gzip.open(path, "rt") as f:
        records = [json.loads(line) for line in f]
    return [r for r in records if r["benchmark"]["deal"] < DEALS]


def quick_short_figures(runs_dir: Path) -> dict[str, Any]:
    """Train the quick config for :data:`QUICK_STEPS` steps and return its evaluation."""
    from memtab_env.train.run import main

    run_dir = main(["--config", str(ROOT / QUICK_CONFIG), "--total_timesteps", str(QUICK_STEPS),
                    "--runs_dir", str(runs_dir), "--progress_bar", "false"])
    ev = json.loads((run_dir / "eval.json").read_text())
    results = {opp: {k: r[k] for k in ("games", "win_rate", "wins", "shared", "losses",
                                         "mean_score_diff", "win_rate_by_seat", "illegal_choices")}
               for opp, r in ev["results"].items()}
    return {"config": QUICK_CONFIG, "total_timesteps": QUICK_STEPS,
            "timesteps": ev["training"]["timesteps"], "results": results}


def _same(recorded: dict[str, Any], here: dict[str, Any], fields: tuple[str, ...]) -> bool:
    """Whether the platform block ``recorded`` equals ``here`` on ``fields``."""
    return all(recorded.get(k) == here.get(k) for k in fields)


def platform_files(path: Path) -> list[Path]:
    """The committed files of one platform-bound golden case: ``path`` (the platform
    that played the leaderboard's records) and ``<stem>.<cpu>.json`` for other CPUs."""
    return [p for p in (path, *sorted(path.parent.glob(f"{path.stem}.*.json"))) if p.exists()]


def committed_here(path: Path) -> tuple[Path, dict[str, Any]] | None:
    """The file of ``path``'s case written on this platform, and its contents: one that
    records this CPU's instruction set if there is one, else one written before that
    field was recorded that matches on the rest."""
    files = [(p, json.loads(p.read_text())) for p in platform_files(path)]
    here = platform_info()
    for p, data in files:
        if _same(data["platform"], here, (*SAME_PLATFORM, "cpu_isa")):
            return p, data
    for p, data in files:
        if "cpu_isa" not in data["platform"] and _same(data["platform"], here, SAME_PLATFORM):
            return p, data
    return None


def file_for_here(path: Path) -> Path:
    """Where ``--accept`` writes ``path``'s case on this platform: the file written on
    this CPU and instruction set, else ``path`` if there is none yet, else a new
    ``<stem>.<cpu>-<isa>.json`` (a file without a recorded instruction set is never
    rewritten from another machine of the same model name)."""
    here = platform_info()
    for p in platform_files(path):
        if _same(json.loads(p.read_text())["platform"], here, ("cpu", "cpu_isa")):
            return p
    if not path.exists():
        return path
    name = " ".join(str(part) for part in (here["cpu"], here["cpu_isa"]) if part)
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "cpu"
    return path.with_name(f"{path.stem}.{slug}.json")


def _write(path: Path, figures: dict[str, Any]) -> None:
    path.write_text(json.dumps({**figures, "platform": platform_info()}, indent=1, sort_keys=True) + "\n")


def _strip(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "platform"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden.figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", choices=("evaluation", "recurrent", "quick"))
    parser.add_argument("--accept", action="store_true", help="write the recomputed figures")
    args = parser.parse_args(argv)
    path = {"evaluation": EVALUATION_FILE, "recurrent": RECURRENT_FILE, "quick": QUICK_FILE}[args.which]
    if args.which == "evaluation":
        now = evaluation_figures()
    elif args.which == "recurrent":
        now = recurrent_figures()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            now = quick_short_figures(Path(tmp))
    if args.which != "evaluation":  # platform-bound: compared with this platform's file
        found = committed_here(path)
        if found and _strip(found[1]) == now:
            print(f"{found[0]}: unchanged")
            return 0
        path = file_for_here(path)
    old = _strip(json.loads(path.read_text())) if path.exists() else None
    if old == now:
        print(f"{path}: unchanged")
        return 0
    print(json.dumps(now, indent=1, sort_keys=True))
    print(f"{path}: {'differs from the committed figures' if old else 'missing'}")
    if not args.accept:
        return 1
    if args.which == "evaluation" and old and old.get("track") == now["track"]:
        print(f"refused: the figures of {now['track']} changed under the same track version; bump the "
              "track's version (memtab_env/protocol/tracks.py) and write a CHANGELOG line "
              "(docs/versioning.md)", file=sys.stderr)
        return 2
    _write(path, now)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
