"""Fuzzing every parser of files from others with mutated valid files (hypothesis): a
malformed file is answered with the project's own error naming the file, never with a
raw Python exception, a hang, or a silently accepted value."""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtab_env import agents
from memtab_env.boards import load_board
from memtab_env.errors import InvalidOptionError, MemTabError, RecordError
from memtab_env.play import make_raw_env, play_game
from memtab_env.protocol import leaderboard
from memtab_env.protocol.results import ResultError, load_result, validate_result
from memtab_env.record import iter_records, replay

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "results" / "memtab-4p" / "expert.json"  # a result without records
BOARD = ROOT / "memtab_env" / "data" / "board_default.json"

#: examples per fuzz test (FUZZ_EXAMPLES=2000 for a longer hunt)
SETTINGS = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=list(HealthCheck))


def _records() -> list[dict[str, Any]]:
    out = []
    for game, n in (("memtab", 2), ("pelmanism", 2), ("memory_board", 2)):
        env = make_raw_env(game, num_players=n, memory="perfect")
        rec = play_game(env, [agents.make("random", game=game) for _ in range(n)], seed=3)
        rec["agents"] = ["random"] * n
        out.append(rec)
    return out


RECORDS = _records()

# --- mutations ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def byte_edits(draw: Any, data: bytes) -> bytes:
    """``data`` with a few bytes deleted, inserted, replaced, or the end cut off."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "replace", "truncate"]))
        i = draw(st.integers(0, max(len(out) - 1, 0)))
        if op == "delete" and out:
            del out[i:i + draw(st.integers(1, 16))]
        elif op == "insert":
            out[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "replace" and out:
            out[i] = draw(st.integers(0, 255))
        else:
            del out[i:]
    return bytes(out)


@st.composite
def tree_edits(draw: Any, obj: Any) -> Any:
    """``obj`` (a JSON value) with a few fields replaced, deleted or added at random paths."""
    obj = json.loads(json.dumps(obj))
    for _ in range(draw(st.integers(1, 3))):
        node = obj
        for _ in range(draw(st.integers(0, 5))):
            kids = list(node) if isinstance(node, dict) else list(range(len(node)))
            if not kids:
                break
            k = draw(st.sampled_from(kids))
            if not isinstance(node[k], (dict, list)):
                break
            node = node[k]
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            op = draw(st.sampled_from(["replace", "delete", "add"]))
            if op == "replace":
                node[key] = draw(json_values)
            elif op == "delete":
                del node[key]
            else:
                node[draw(st.text(max_size=6))] = draw(json_values)
        elif isinstance(node, list) and node:
            i = draw(st.integers(0, len(node) - 1))
            node[i] = draw(json_values)
    return obj


def _dumps(obj: Any) -> str:
    return json.dumps(obj, allow_nan=True)


def _project_error(call, exc_type: type[MemTabError], path: Path | None = None) -> None:
    try:
        call()
    except exc_type as exc:
        if path is not None:
            assert str(path) in str(exc) or path.name in str(exc), exc
    except MemTabError as exc:  # pragma: no cover - a wrong subclass is a failure too
        raise AssertionError(f"{type(exc).__name__} instead of {exc_type.__name__}: {exc}") from exc


# --- results -----------------------------------------------------------------------------

def _load_and_audit(path: Path) -> None:
    result = load_result(path)
    leaderboard.audit(path, result, root=path.parent)
    for run in result["runs"]:
        assert 0.0 <= run["overall"]["win_rate"] <= 1.0
        assert math.isfinite(run["overall"]["score_diff"])


@SETTINGS
@given(data=st.data())
def test_results_with_mutated_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("r") / "result.json"
    path.write_bytes(data.draw(byte_edits(RESULT.read_bytes())))
    _project_error(lambda: _load_and_audit(path), ResultError, path)


@SETTINGS
@given(data=st.data())
def test_results_with_mutated_fields(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("r") / "result.json"
    path.write_text(_dumps(data.draw(tree_edits(json.loads(RESULT.read_text())))))
    _project_error(lambda: _load_and_audit(path), ResultError, path)


@SETTINGS
@given(value=json_values)
def test_validate_result_takes_any_json(value):
    _project_error(lambda: validate_result(value), ResultError)


# --- records -----------------------------------------------------------------------------

def _read_and_replay(path: Path) -> None:
    for where, rec in iter_records(path):
        try:
            replay(rec)
        except RecordError as exc:  # as `memtab replay` reports it: where, then why
            raise RecordError(f"{where}: {exc}") from exc


@SETTINGS
@given(data=st.data(), suffix=st.sampled_from([".jsonl", ".jsonl.gz", ".json"]))
def test_record_files_with_mutated_bytes(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("rec") / f"records{suffix}"
    if suffix == ".json":
        raw = json.dumps(RECORDS[0]).encode()
    else:
        raw = "".join(json.dumps(r) + "\n" for r in RECORDS).encode()
        if suffix.endswith(".gz"):
            raw = gzip.compress(raw, mtime=0)
    path.write_bytes(data.draw(byte_edits(raw)))
    _project_error(lambda: _read_and_replay(path), RecordError, path)


@SETTINGS
@given(data=st.data(), which=st.integers(0, len(RECORDS) - 1))
def test_records_with_mutated_fields(data, which):
    rec = data.draw(tree_edits(RECORDS[which]))
    _project_error(lambda: replay(json.loads(_dumps(rec).replace("NaN", "null"))), RecordError)


@SETTINGS
@given(value=json_values)
def test_replay_takes_any_json(value):
    _project_error(lambda: replay(value), RecordError)


def test_a_record_naming_a_board_file_is_refused():
    rec = json.loads(json.dumps(RECORDS[2]))
    rec["options"]["board"] = "/dev/zero"
    with pytest.raises(RecordError, match="board"):
        replay(rec)


# --- boards ------------------------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_boards_with_mutated_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("b") / "board.json"
    path.write_bytes(data.draw(byte_edits(BOARD.read_bytes())))
    _project_error(lambda: load_board(path), InvalidOptionError, path)


@SETTINGS
@given(data=st.data())
def test_boards_with_mutated_fields(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("b") / "board.json"
    path.write_text(_dumps(data.draw(tree_edits(json.loads(BOARD.read_text())))))
    _project_error(lambda: load_board(path), InvalidOptionError, path)


# --- files that are not files ------------------------------------------------------------

@pytest.mark.parametrize("content", [b"", b"   \n", b"\xff\xfe{}", b"[" * 50_000, b'{"a": 1e999}',
                                     b'{"a": 1, "a": 2}', b"1" * 10_000, b"{} {}"])
def test_every_parser_answers_hostile_json(tmp_path, content):
    for name, call, exc in (
        ("result.json", load_result, ResultError),
        ("board.json", load_board, InvalidOptionError),
        ("record.json", lambda p: list(iter_records(p)), RecordError),
        ("records.jsonl", lambda p: list(iter_records(p)), RecordError),
    ):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(exc) as err:
            call(path)
        assert str(path) in str(err.value)


def test_every_parser_refuses_folders_and_devices(tmp_path):
    folder = tmp_path / "x.json"
    folder.mkdir()
    for path in (folder, Path("/dev/null"), tmp_path / "missing.json"):
        with pytest.raises(ResultError, match=str(path)):
            load_result(path)
        with pytest.raises(InvalidOptionError, match=str(path)):
            load_board(path)
    with pytest.raises(RecordError, match="not a regular file"):
        list(iter_records("/dev/null"))


def test_a_gzip_bomb_stops_at_the_limit(tmp_path, monkeypatch):
    from memtab_env import untrusted

    monkeypatch.setattr(untrusted, "MAX_RECORDS_BYTES", 1 << 20)
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress((b" " * (1 << 16) + b"\n") * 64))
    with pytest.raises(RecordError, match="more than"):
        list(iter_records(path))


def test_a_truncated_gzip_names_the_file(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in RECORDS))[:-20])
    with pytest.raises(RecordError, match=r"cut\.jsonl\.gz.*cut short"):
        list(iter_records(path))


# --- configs and run files -----------------------------------------------------------------

CONFIG = ROOT / "configs" / "quick.yaml"
LATEST = {"step": 256, "model": "step_000000000256.zip", "replay_buffer": None,
          "pool": ["snapshot_000000000000.zip", "snapshot_000000000128.zip"]}
MANIFEST = {"format": "memtab-run-manifest/1",
            "files": {"checkpoints/step_000000000256.zip": "0" * 64, "model.zip": "a" * 64}}


def _config_error(call, path: Path) -> None:
    from memtab_env.train.config import ConfigError

    _project_error(call, ConfigError, path)


@SETTINGS
@given(data=st.data())
def test_configs_with_mutated_bytes(tmp_path_factory, data):
    from memtab_env.train.config import load_yaml, validate_config

    path = tmp_path_factory.mktemp("c") / "config.yaml"
    path.write_bytes(data.draw(byte_edits(CONFIG.read_bytes())))
    _config_error(lambda: validate_config(load_yaml(path)), path)


@SETTINGS
@given(data=st.data())
def test_configs_with_mutated_fields(tmp_path_factory, data):
    import yaml

    from memtab_env.train.config import load_yaml, validate_config

    path = tmp_path_factory.mktemp("c") / "config.yaml"
    tree = yaml.safe_load(CONFIG.read_text())
    path.write_text(yaml.safe_dump(data.draw(tree_edits({k: v for k, v in tree.items()
                                                         if not str(k).startswith("_")}))))
    _config_error(lambda: validate_config(load_yaml(path)), path)


@SETTINGS
@given(data=st.data(), which=st.sampled_from(["latest", "manifest"]))
def test_run_files_with_mutated_bytes_and_fields(tmp_path_factory, data, which):
    from memtab_env.train.manifest import Manifest
    from memtab_env.train.run import read_latest

    run = tmp_path_factory.mktemp("run")
    (run / "checkpoints").mkdir()
    obj = LATEST if which == "latest" else MANIFEST
    path = run / "checkpoints" / "latest.json" if which == "latest" else run / "manifest.json"
    raw = json.dumps(obj).encode()
    if data.draw(st.booleans()):
        path.write_bytes(data.draw(byte_edits(raw)))
    else:
        path.write_text(_dumps(data.draw(tree_edits(obj))))
    call = (lambda: read_latest(run / "checkpoints")) if which == "latest" else (lambda: Manifest.load(run))
    _config_error(call, path)
