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

``FIGURES`` are those of :func:`memtab_env.protocol.metrics.figures`. A file that is not
JSON, lacks a field, has a field of the wrong type, is of another format version, names
an env id this package does not play (another env version), or a track that differs
from this package's track table is rejected with :class:`ResultError` naming the file
and the field.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from memtab_env import untrusted
from memtab_env.atomic import write_json
from memtab_env.errors import MemTabError
from memtab_env.protocol.tracks import EVAL_SEED_START, EVAL_SEED_STOP, TRACKS, Track
from memtab_env.record import read_records, write_records
from memtab_env.registry import game_spec

RESULT_FORMAT = "memtab-result/1"

_FIGURE_FIELDS: dict[str, type | tuple[type, ...]] = {
    "deals": int,
    "games": int,
    "win_rate": (int, float),
    "win_rate_ci": list,
    "n_eff": (int, float),
    "score_diff": (int, float),
    "score_diff_ci": (list, type(None)),
}
_OPPONENT_FIELDS: dict[str, type | tuple[type, ...]] = {
    **_FIGURE_FIELDS,
    "wins": int,
    "shared_wins": int,
    "losses": int,
    "win_rate_by_seat": list,
}
_TOP_FIELDS = ("format", "package_version", "game", "env_id", "track", "seeds", "agent", "runs",
               "summary", "records")
_RUN_FIELDS = ("opponents", "overall", "normalised_score", "normalised_ci")
_AGENT_RUN_FIELDS = ("spec", "kind", "kwargs", "sha256")
_SUMMARY_FIELDS = ("runs", "win_rate", "normalised_score", "normalised_iqm", "normalised_iqm_ci",
                   "iqm_method")
#: most runs of one agent in a result
MAX_RUNS = 1000
_HEX = re.compile(r"[0-9a-f]{64}")


class ResultError(MemTabError, ValueError):
    """A result file that is malformed, from another version, or that its records
    contradict."""


def _need(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise ResultError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise ResultError(f"{where}.{key}: missing")
    value = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) or not isinstance(value, kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise ResultError(f"{where}.{key}: expected {names}, got {type(value).__name__} {value!r:.60}")
    return value


def _exact_fields(obj: dict[str, Any], fields: Iterable[str], where: str) -> None:
    extra = sorted(set(obj) - set(fields))
    if extra:
        raise ResultError(f"{where}.{extra[0]}: unknown field; allowed: {', '.join(fields)}")


def _finite(value: Any, where: str, lo: float = -math.inf, hi: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ResultError(f"{where}: expected a finite number, got {value!r:.60}")
    if not lo <= value <= hi:
        raise ResultError(f"{where}: {value!r} is outside [{lo}, {hi}]")
    return float(value)


def _interval(value: Any, where: str, lo: float = -math.inf, hi: float = math.inf,
              around: float | None = None) -> list[float]:
    if not isinstance(value, list) or len(value) != 2:
        raise ResultError(f"{where}: expected [lo, hi], got {value!r:.60}")
    a = _finite(value[0], f"{where}[0]", lo, hi)
    b = _finite(value[1], f"{where}[1]", lo, hi)
    if a > b or (around is not None and not a <= around <= b):
        raise ResultError(f"{where}: {value!r:.60} is not an interval"
                          + ("" if around is None else f" around {around!r}"))
    return [a, b]


def _check_figures(figs: Any, fields: dict[str, Any], deals: int, games: int, seats: int,
                   diff_bound: float, where: str) -> None:
    """Types, then what values can be: rates in [0, 1], intervals around their value,
    ``n_eff`` in [deals, games], counts that add up to the games, score differences
    within the game's score range."""
    if not isinstance(figs, dict):
        raise ResultError(f"{where}: expected an object of figures, got {type(figs).__name__}")
    for key, kind in fields.items():
        _need(figs, key, kind, where)
    _exact_fields(figs, fields, where)
    if figs["deals"] != deals or figs["games"] != games:
        raise ResultError(
            f"{where}.games: {figs['games']} games over {figs['deals']} deals, but the seeds list "
            f"{deals} deals ({games} games)"
        )
    rate = _finite(figs["win_rate"], f"{where}.win_rate", 0.0, 1.0)
    _interval(figs["win_rate_ci"], f"{where}.win_rate_ci", 0.0, 1.0, rate)
    _finite(figs["n_eff"], f"{where}.n_eff", float(min(deals, games)), float(games))
    diff = _finite(figs["score_diff"], f"{where}.score_diff", -diff_bound, diff_bound)
    if figs["score_diff_ci"] is not None:
        _interval(figs["score_diff_ci"], f"{where}.score_diff_ci", around=diff)
    if "wins" in fields:
        counts = [figs[k] for k in ("wins", "shared_wins", "losses")]
        if min(counts) < 0 or sum(counts) != games:
            raise ResultError(f"{where}.wins: wins, shared wins and losses {counts} must be "
                              f"non-negative and add up to the {games} games")
        low = figs["wins"] + figs["shared_wins"] / max(seats, 1)
        high = figs["wins"] + figs["shared_wins"] / 2
        if not low - 1e-6 <= rate * games <= high + 1e-6:
            raise ResultError(f"{where}.win_rate: {rate!r} is impossible with {counts[0]} wins and "
                              f"{counts[1]} shared wins in {games} games")
        by_seat = figs["win_rate_by_seat"]
        if len(by_seat) != seats:
            raise ResultError(f"{where}.win_rate_by_seat: {len(by_seat)} values for {seats} seats")
        for k, v in enumerate(by_seat):
            _finite(v, f"{where}.win_rate_by_seat[{k}]", 0.0, 1.0)
        if not math.isclose(sum(by_seat) / seats, rate, rel_tol=1e-9, abs_tol=1e-9):
            raise ResultError(f"{where}.win_rate_by_seat: their mean {sum(by_seat) / seats!r} is not "
                              f"the win rate {rate!r}")


def validate_result(obj: Any, source: str = "result") -> dict[str, Any]:
    """Check ``obj`` against the schema, this package's env and track versions, and the
    values figures can take (rates in [0, 1], finite numbers, counts that add up);
    return it, or raise :class:`ResultError` saying what is wrong where. Figures that
    follow from others are checked by :func:`memtab_env.protocol.leaderboard.audit`."""
    if not isinstance(obj, dict):
        raise ResultError(f"{source}: a result is a JSON object, got {type(obj).__name__}")
    fmt = obj.get("format")
    if fmt != RESULT_FORMAT:
        raise ResultError(f"{source}.format: unknown result format {fmt!r:.60}; this package reads "
                          f"{RESULT_FORMAT!r}")
    for key in _TOP_FIELDS:
        if key not in obj:
            raise ResultError(f"{source}.{key}: missing")
    _exact_fields(obj, _TOP_FIELDS, source)
    _need(obj, "package_version", str, source)
    game = _need(obj, "game", str, source)
    env_id = _need(obj, "env_id", str, source)
    try:
        spec = game_spec(game)
    except MemTabError as exc:
        raise ResultError(f"{source}.game: {exc}") from exc
    if env_id != spec.env_id:
        raise ResultError(
            f"{source}.env_id: result is for env {env_id!r:.60}, this package plays {game!r} as "
            f"{spec.env_id!r}; results of other env versions are not comparable"
        )
    tr = _need(obj, "track", dict, source)
    tid = _need(tr, "id", str, f"{source}.track")
    if tid not in TRACKS:
        raise ResultError(f"{source}.track.id: unknown track {tid!r:.60}; tracks: {list(TRACKS)}")
    track = TRACKS[tid]
    if tr.get("version") != track.version:
        raise ResultError(
            f"{source}.track.version: result is for track {tid} v{tr.get('version')!r:.20}, this "
            f"package has v{track.version}"
        )
    mine = track.describe()
    for key, value in mine.items():
        if tr.get(key) != value:
            raise ResultError(
                f"{source}.track.{key}: {tr.get(key)!r:.80} differs from this package's track {track.key} "
                f"({value!r})"
            )
    _exact_fields(tr, mine, f"{source}.track")
    if game != track.game:
        raise ResultError(f"{source}.game: {game!r} is not the game of track {track.id} ({track.game!r})")
    seeds = _need(obj, "seeds", list, source)
    if not seeds:
        raise ResultError(f"{source}.seeds: empty")
    if len(seeds) > EVAL_SEED_STOP - EVAL_SEED_START or any(
            isinstance(s, bool) or not isinstance(s, int) for s in seeds) or seeds != track.seeds(len(seeds)):
        raise ResultError(
            f"{source}.seeds: not the evaluation deals of track {track.id} (seeds {track.seeds(1)[0]}, "
            f"{track.seeds(1)[0] + 1}, ... in order)"
        )
    deals, n = len(seeds), track.num_players
    lo, hi = game_score_bounds(track)
    diff_bound = hi - lo
    agent = _need(obj, "agent", dict, source)
    _exact_fields(agent, ("label", "runs"), f"{source}.agent")
    why = label_problem(_need(agent, "label", str, f"{source}.agent"))
    if why is not None:
        raise ResultError(f"{source}.agent.label: {why}")
    agent_runs = _need(agent, "runs", list, f"{source}.agent")
    runs = _need(obj, "runs", list, source)
    if not runs or len(runs) != len(agent_runs) or len(runs) > MAX_RUNS:
        raise ResultError(f"{source}.runs: {len(runs)} run figure(s) for {len(agent_runs)} agent run(s) "
                          f"(1 to {MAX_RUNS})")
    for i, (a, run) in enumerate(zip(agent_runs, runs, strict=True)):
        where = f"{source}.agent.runs[{i}]"
        _need(a, "spec", str, where)
        if not isinstance(a, dict) or a.get("kind") not in ("builtin", "file"):
            got = a.get("kind") if isinstance(a, dict) else a
            raise ResultError(f"{where}.kind: expected 'builtin' or 'file', got {got!r:.60}")
        kw = _need(a, "kwargs", dict, where)
        forbidden = sorted({"trust_pickle", "path"} & set(kw))
        if forbidden:
            raise ResultError(f"{where}.kwargs: a result cannot ask for {forbidden} (a model is named by "
                              "its spec and loaded as data)")
        _exact_fields(a, _AGENT_RUN_FIELDS, where)
        sha = a.get("sha256")
        if a["kind"] == "file" and not (isinstance(sha, str) and _HEX.fullmatch(sha)):
            raise ResultError(f"{where}.sha256: a model file's result needs the SHA-256 of the file "
                              f"(64 lowercase hex digits), got {sha!r:.80}")
        if sha is not None and not (isinstance(sha, str) and _HEX.fullmatch(sha)):
            raise ResultError(f"{where}.sha256: expected null or 64 lowercase hex digits, got {sha!r:.80}")
        where = f"{source}.runs[{i}]"
        if not isinstance(run, dict):
            raise ResultError(f"{where}: expected an object, got {type(run).__name__}")
        for key in _RUN_FIELDS:
            if key not in run:
                raise ResultError(f"{where}.{key}: missing")
        _exact_fields(run, _RUN_FIELDS, where)
        opps = _need(run, "opponents", dict, where)
        if list(opps) != list(track.opponents):
            raise ResultError(
                f"{where}.opponents: {list(opps)!r:.80} but track {track.id} has {list(track.opponents)}"
            )
        for o, figs in opps.items():
            _check_figures(figs, _OPPONENT_FIELDS, deals, deals * n, n, diff_bound, f"{where}.opponents.{o}")
        _check_figures(_need(run, "overall", dict, where), _FIGURE_FIELDS, deals,
                       deals * n * len(opps), n, diff_bound, f"{where}.overall")
        if run["normalised_score"] is not None:
            _finite(run["normalised_score"], f"{where}.normalised_score")
            _interval(run["normalised_ci"], f"{where}.normalised_ci")
        elif run["normalised_ci"] is not None:
            raise ResultError(f"{where}.normalised_ci: must be null when normalised_score is")
    summ = _need(obj, "summary", dict, source)
    for key in _SUMMARY_FIELDS:
        if key not in summ:
            raise ResultError(f"{source}.summary.{key}: missing")
    _exact_fields(summ, _SUMMARY_FIELDS, f"{source}.summary")
    records = obj.get("records")
    if records is not None and not isinstance(records, str):
        raise ResultError(f"{source}.records: expected a path or null, got {type(records).__name__}")
    return obj


#: longest agent label
MAX_LABEL = 100
#: ASCII look-alikes (after case folding; from the Unicode confusables table, UTS #39),
#: folded by :func:`label_key`
_LOOK_ALIKE = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("i", "l"), ("|", "l"), ("_", "-"))


def label_problem(label: str) -> str | None:
    """None if ``label`` can name an agent, else why not. A label is 1 to
    :data:`MAX_LABEL` printable ASCII characters (space to ``~``): anything else could
    read like another label (a Cyrillic ``а`` for a Latin ``a``, a fullwidth ``ｇ``, a
    zero-width space) and is refused, naming the character and, where Unicode's NFKC
    form makes it ASCII, what it reads as."""
    import unicodedata

    if not 1 <= len(label) <= MAX_LABEL:
        return f"{label!r:.60} must be 1 to {MAX_LABEL} characters, not {len(label)}"
    for k, c in enumerate(label):
        if " " <= c <= "~":
            continue
        name = unicodedata.name(c, f"U+{ord(c):04X}")
        plain = unicodedata.normalize("NFKC", c)
        reads = f", which reads as {plain!r}" if plain.isascii() and plain.isprintable() and plain else ""
        return (f"{label!r:.60}: character {k} is {c!r} ({name}){reads}; a label is printable ASCII "
                "(letters, digits, space and ASCII punctuation), so that no two labels read alike")
    if label != label.strip() or "  " in label:
        return f"{label!r:.60}: no leading, trailing or double spaces (they cannot be seen on the page)"
    return None


def label_key(label: str) -> str:
    """What ``label`` reads as: case folded, then the ASCII look-alikes of the Unicode
    confusables table folded (``0``/``o``, ``1``/``l``/``i``/``|``, ``rn``/``m``,
    ``vv``/``w``, ``_``/``-``). Two labels with one key are one agent to the leaderboard.
    The fold errs towards collisions (``i`` and ``l`` are one letter here, because ``I``
    reads like ``l`` and like ``i``): a submitter whose label collides picks another."""
    key = label.casefold()
    for a, b in _LOOK_ALIKE:
        key = key.replace(a, b)
    return key


def game_score_bounds(track: Track) -> tuple[float, float]:
    """The lowest and highest score a player can have on ``track`` (the game's info)."""
    from memtab_env.registry import load

    spec = game_spec(track.game)
    engine = load(spec.engine)
    opts = {k: v for k, v in track.options.items() if k in engine.default_options}
    return tuple(engine(**opts).info.score_bounds)  # type: ignore[return-value]


_FIELD_PART = re.compile(r"\.([^.\[:]+)|\[(\d+)\]")


def _with_line(exc: ResultError, source: str, text: str) -> ResultError:
    """``exc`` (whose message starts ``SOURCE.field...: ``) as ``SOURCE:LINE: field F: ...``."""
    msg = str(exc)
    if not msg.startswith(source):
        return exc
    rest = msg[len(source):]
    field: list[str | int] = []
    pos = 0
    while m := _FIELD_PART.match(rest, pos):
        field.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    line = untrusted.line_of(text, field)
    return ResultError(f"{untrusted.where(source, line, field)}{rest[pos:]}")


def load_result(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate the result file ``path`` (:class:`ResultError` naming the file,
    the line and the field if it is not one). The file is untrusted data
    (:mod:`memtab_env.untrusted`: a regular file within the size limit, strict JSON)."""
    source = os.fspath(path)
    text = untrusted.decode(untrusted.read_bytes(path, ResultError), source, ResultError)
    obj = untrusted.loads_json(text, source, ResultError)
    try:
        return validate_result(obj, source)
    except ResultError as exc:
        raise _with_line(exc, source, text) from None


def save_result(path: str | os.PathLike[str], result: dict[str, Any]) -> None:
    """Validate and write ``result`` atomically (never a half-written file)."""
    write_json(path, validate_result(result, str(path)))


def track_of(result: dict[str, Any]) -> Track:
    """The track of a validated result."""
    return TRACKS[result["track"]["id"]]


def write_record_file(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write game records atomically (see :func:`memtab_env.record.write_records`)."""
    write_records(records, path)


def read_record_file(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Read game records (see :func:`memtab_env.record.read_records`)."""
    return read_records(path)
