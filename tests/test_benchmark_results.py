"""Result files: malformed, other-version and other-track files are rejected clearly;
writes are atomic."""

from __future__ import annotations

import copy
import json

import pytest

from memtab_env.errors import RecordError
from memtab_env.protocol import evaluate as ev
from memtab_env.protocol.results import (
    ResultError,
    load_result,
    read_record_file,
    save_result,
    validate_result,
    write_record_file,
)
from memtab_env.protocol.tracks import get_track


@pytest.fixture(scope="module")
def result():
    track = get_track("memtab-2p")
    res, _ = ev.evaluate(track, [ev.resolve_agent("greedy", "memtab")], "greedy", 2)
    return res


def _broken(result, edit):
    bad = copy.deepcopy(result)
    edit(bad)
    return bad


@pytest.mark.parametrize("edit,message", [
    (lambda r: r.update(format="memtab-result/2"), "unknown result format 'memtab-result/2'"),
    (lambda r: r.update(env_id="MemTab-v1"), "other env versions"),
    (lambda r: r["track"].update(version=2), "this package has v1"),
    (lambda r: r["track"].update(id="memtab-7p"), "unknown track"),
    (lambda r: r["track"]["options"].update(memory="none"), "track.options"),
    (lambda r: r.update(seeds=[5, 6]), "not the evaluation deals"),
    (lambda r: r.pop("agent"), r"agent: missing"),
    (lambda r: r["runs"][0]["opponents"].pop("expert"), "opponents"),
    (lambda r: r["runs"][0]["opponents"]["greedy"].update(win_rate="high"), "expected int or float"),
    (lambda r: r["runs"][0]["opponents"]["greedy"].update(games=7), "7 games"),
    (lambda r: r["runs"][0]["overall"].update(win_rate=1.5), r"win_rate: 1\.5 is outside \[0\.0, 1"),
    (lambda r: r["runs"][0]["overall"].update(win_rate_ci=[0.9, 0.1]), "not an interval"),
    (lambda r: r["agent"]["runs"][0].update(kind="pickle"), "kind"),
])
def test_bad_results_are_rejected_with_the_reason(result, edit, message):
    with pytest.raises(ResultError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate_result(_broken(result, edit), "x.json")


def test_good_result_round_trips(result, tmp_path):
    path = tmp_path / "r.json"
    save_result(path, result)
    assert load_result(path) == result


def test_truncated_and_missing_files(result, tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(result)[:500])
    with pytest.raises(ResultError, match="not valid JSON"):
        load_result(path)
    with pytest.raises(ResultError, match="no such file"):
        load_result(tmp_path / "nothing.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ResultError, match="JSON object"):
        load_result(tmp_path / "list.json")


def test_invalid_result_is_not_written(result, tmp_path):
    path = tmp_path / "r.json"
    with pytest.raises(ResultError):
        save_result(path, _broken(result, lambda r: r.update(format="nope")))
    assert not path.exists()


def test_record_file_write_is_atomic(tmp_path):
    path = tmp_path / "recs.jsonl.gz"
    write_record_file([{"a": 1}], path)

    def interrupted():
        yield {"a": 2}
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_record_file(interrupted(), path)
    assert list(read_record_file(path)) == [{"a": 1}]  # the old file, whole
    assert [p.name for p in tmp_path.iterdir()] == ["recs.jsonl.gz"]  # no temp file left


def test_unreadable_record_files(tmp_path):
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(RecordError, match="gzip"):
        list(read_record_file(bad))
    with pytest.raises(RecordError, match="no such file"):
        list(read_record_file(tmp_path / "none.jsonl.gz"))
