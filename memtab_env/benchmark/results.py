"""Result files (``memtab-result/1``): schema, validation with clear errors, atomic I/O,
and the game-record files a result may point to.

A result file is one JSON object: one agent (possibly several training runs of it) on one
track. Schema, version 1 (``BENCHMARK.md`` documents every field)::

    {
      "format": "memtab-result/1",
      "package_version": "0.1.0",            # memtab-env that produced it
      "game": "memtab", "env_id": "MemTab-v0",
      "track": {"id", "version", "game", "env_id", "options", "opponents",
                "deals", "strongest", "anchors"},   # the track as the package defines it
      "seeds": [1000000000, ...],            # deal i was dealt from seeds[i]
      "agent": {"label": "expert",
                "runs": [{"spec": "expert", "kind": "builtin" | "file",
                          "kwargs": {}, "sha256": null | "<hex of the model file>"}]},
      "runs": [{"opponents": {"random": FIGURES, ...},   # one entry per agent run
                "overall": FIGURES, "normalised_score": x | null,
                "normalised_ci": [lo, hi] | null}],
      "summary": {"runs": k, "win_rate": x, "normalised_score": x | null,
                  "normalised_iqm": x | null, "normalised_iqm_ci": [lo, hi] | null,
                  "iqm_method": "..."},
      "records": null | "expert.records.jsonl.gz"    # relative to the result file
    }

``FIGURES`` are those of :func:`memtab_env.benchmark.metrics.figures`. A file that is not
JSON, lacks a field, has a field of the wrong type, is of another format version, names
an env id this package does not play (another env version), or a track that differs
from this package's track table is rejected with :class:`ResultError` naming the file
and the field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memtab_env.benchmark.tracks import TRACKS, Track
from memtab_env.errors import MemTabError
from memtab_env.record import read_records, write_json_atomic, write_records
from memtab_env.registry import game_spec

RESULT_FORMAT = "memtab-result/1"

_FIGURE_FIELDS: dict[str, type | tuple[type, ...]] = {
    "deals": int,
    "games": int,
    "win_rate": (int, float),
    "win_rate_ci": list,
    "n_eff": (int, float),
    "score_diff": (int, float),
}
_OPPONENT_FIELDS: dict[str, type | tuple[type, ...]] = {
    **_FIGURE_FIELDS,
    "wins": int,
    "shared_wins": int,
    "losses": int,
    "win_rate_by_seat": list,
}


class ResultError(MemTabError, ValueError):
    """A result file that is malformed, from another version, or that its records
    contradict."""


def _need(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise ResultError(f"{where}: missing field {key!r}")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ResultError(f"{where}.{key}: expected {names}, got {type(value).__name__} {value!r:.60}")
    return value


def _check_figures(figs: Any, fields: dict[str, Any], deals: int, games: int, where: str) -> None:
    if not isinstance(figs, dict):
        raise ResultError(f"{where}: expected an object of figures, got {type(figs).__name__}")
    for key, kind in fields.items():
        _need(figs, key, kind, where)
    if figs["deals"] != deals or figs["games"] != games:
        raise ResultError(
            f"{where}: {figs['games']} games over {figs['deals']} deals, but the seeds list "
            f"{deals} deals ({games} games)"
        )
    lo_hi = figs["win_rate_ci"]
    if len(lo_hi) != 2 or not lo_hi[0] <= figs["win_rate"] <= lo_hi[1]:
        raise ResultError(f"{where}.win_rate_ci: {lo_hi!r} is not an interval around {figs['win_rate']!r}")


def validate_result(obj: Any, source: str = "result") -> dict[str, Any]:
    """Check ``obj`` against the schema and this package's env and track versions;
    return it, or raise :class:`ResultError` saying what is wrong where."""
    if not isinstance(obj, dict):
        raise ResultError(f"{source}: a result is a JSON object, got {type(obj).__name__}")
    fmt = obj.get("format")
    if fmt != RESULT_FORMAT:
        raise ResultError(f"{source}: unknown result format {fmt!r}; this package reads {RESULT_FORMAT!r}")
    game = _need(obj, "game", str, source)
    env_id = _need(obj, "env_id", str, source)
    try:
        spec = game_spec(game)
    except MemTabError as exc:
        raise ResultError(f"{source}: {exc}") from exc
    if env_id != spec.env_id:
        raise ResultError(
            f"{source}: result is for env {env_id!r}, this package plays {game!r} as {spec.env_id!r}; "
            "results of other env versions are not comparable"
        )
    tr = _need(obj, "track", dict, source)
    tid = _need(tr, "id", str, f"{source}.track")
    if tid not in TRACKS:
        raise ResultError(f"{source}: unknown track {tid!r}; tracks: {list(TRACKS)}")
    track = TRACKS[tid]
    if tr.get("version") != track.version:
        raise ResultError(
            f"{source}: result is for track {tid} v{tr.get('version')}, this package has v{track.version}"
        )
    mine = track.describe()
    for key, value in mine.items():
        if tr.get(key) != value:
            raise ResultError(
                f"{source}.track.{key}: {tr.get(key)!r} differs from this package's track {track.key} "
                f"({value!r})"
            )
    if game != track.game:
        raise ResultError(f"{source}: game {game!r} is not the game of track {track.id} ({track.game!r})")
    seeds = _need(obj, "seeds", list, source)
    if not seeds:
        raise ResultError(f"{source}.seeds: empty")
    if any(isinstance(s, bool) or not isinstance(s, int) for s in seeds) or seeds != track.seeds(len(seeds)):
        raise ResultError(
            f"{source}.seeds: not the evaluation deals of track {track.id} (seeds {track.seeds(1)[0]}, "
            f"{track.seeds(1)[0] + 1}, ... in order)"
        )
    deals, n = len(seeds), track.num_players
    agent = _need(obj, "agent", dict, source)
    _need(agent, "label", str, f"{source}.agent")
    agent_runs = _need(agent, "runs", list, f"{source}.agent")
    runs = _need(obj, "runs", list, source)
    if not runs or len(runs) != len(agent_runs):
        raise ResultError(f"{source}: {len(runs)} run figure(s) for {len(agent_runs)} agent run(s)")
    for i, (a, run) in enumerate(zip(agent_runs, runs, strict=True)):
        where = f"{source}.agent.runs[{i}]"
        _need(a, "spec", str, where)
        if a.get("kind") not in ("builtin", "file"):
            raise ResultError(f"{where}.kind: expected 'builtin' or 'file', got {a.get('kind')!r}")
        where = f"{source}.runs[{i}]"
        opps = _need(run, "opponents", dict, where)
        if list(opps) != list(track.opponents):
            raise ResultError(
                f"{where}.opponents: {list(opps)} but track {track.id} has {list(track.opponents)}"
            )
        for o, figs in opps.items():
            _check_figures(figs, _OPPONENT_FIELDS, deals, deals * n, f"{where}.opponents.{o}")
        _check_figures(_need(run, "overall", dict, where), _FIGURE_FIELDS, deals,
                       deals * n * len(opps), f"{where}.overall")
    _need(obj, "summary", dict, source)
    records = obj.get("records")
    if records is not None and not isinstance(records, str):
        raise ResultError(f"{source}.records: expected a path or null, got {type(records).__name__}")
    return obj


def load_result(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate the result file ``path`` (:class:`ResultError` if it is not one)."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise ResultError(f"{path}: no such file") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultError(f"{path}: not valid JSON ({exc}); was the file cut short?") from exc
    return validate_result(obj, str(path))


def save_result(path: str | os.PathLike[str], result: dict[str, Any]) -> None:
    """Validate and write ``result`` atomically (never a half-written file)."""
    write_json_atomic(path, validate_result(result, str(path)))


def track_of(result: dict[str, Any]) -> Track:
    """The track of a validated result."""
    return TRACKS[result["track"]["id"]]


def write_record_file(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write game records atomically (see :func:`memtab_env.record.write_records`)."""
    write_records(records, path)


def read_record_file(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Read game records (see :func:`memtab_env.record.read_records`)."""
    return read_records(path)
