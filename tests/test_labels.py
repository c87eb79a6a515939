"""Labels that cannot be confused: a label is printable ASCII (a Cyrillic, fullwidth or
invisible character is refused naming it), and the leaderboard's one-label-per-track
check compares labels as they read (case, ASCII look-alikes), so two copies of one result
under look-alike labels are never both listed."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtab_env.errors import InvalidOptionError
from memtab_env.protocol import leaderboard
from memtab_env.protocol.cli import evaluate_main
from memtab_env.protocol.results import MAX_LABEL, ResultError, label_key, label_problem, load_result
from memtab_env.protocol.tracks import TRACKS


@pytest.fixture(scope="module")
def greedy(tmp_path_factory):
    """greedy's result on memtab-2p over 2 deals, without records (figures only)."""
    folder = tmp_path_factory.mktemp("labels")
    mp = pytest.MonkeyPatch()
    mp.setitem(TRACKS, "memtab-2p", dataclasses.replace(TRACKS["memtab-2p"], deals=2))
    try:
        assert evaluate_main(["--agent", "greedy", "--track", "memtab-2p", "--no-progress",
                              "--out", str(folder / "greedy.json")]) == 0
    finally:
        mp.undo()
    return folder / "greedy.json"


@pytest.fixture()
def results(greedy, tmp_path, monkeypatch):
    monkeypatch.setitem(TRACKS, "memtab-2p", dataclasses.replace(TRACKS["memtab-2p"], deals=2))
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(greedy, folder / "greedy.json")
    return folder


def _copy_as(results, label, name="copy.json"):
    obj = json.loads((results / "greedy.json").read_text())
    obj["agent"]["label"] = label
    (results / name).write_text(json.dumps(obj, ensure_ascii=False))
    return results / name


@pytest.mark.parametrize(("label", "named"), [
    ("gre\u0435dy", "CYRILLIC SMALL LETTER IE"),
    ("gr\u0435\u0435dy", "CYRILLIC SMALL LETTER IE"),
    ("\u0261reedy", "LATIN SMALL LETTER SCRIPT G"),
    ("\uff47reedy", "FULLWIDTH LATIN SMALL LETTER G), which reads as 'g'"),
    ("gree\u200bdy", "ZERO WIDTH SPACE"),
    ("greedy\u00a0", "NO-BREAK SPACE), which reads as ' '"),
    ("gr\u0435edy-\u0430", "CYRILLIC SMALL LETTER IE"),
])
def test_a_look_alike_non_ascii_label_is_refused_naming_the_character(results, label, named):
    path = _copy_as(results, label)
    with pytest.raises(ResultError, match="field agent.label: .*" + re.escape(named)):
        load_result(path)
    rejected = []
    entries = leaderboard.collect(results, on_error=lambda p, e: rejected.append((p, str(e))))
    assert [e.label for e in entries] == ["greedy"]
    assert rejected and rejected[0][0] == path


@pytest.mark.parametrize("label", ["GREEDY", "Greedy", "greedy ", "gree dy", "gr33dy", "greedy_1", "greedy-l",
                                   "greedy-I", "greedy-|"])
def test_look_alike_ascii_labels_are_one_agent(results, label):
    """Labels that differ only in case or in ASCII look-alikes are the same agent: the
    second copy is refused as a duplicate, saying which label it reads like."""
    _copy_as(results, "greedy-1", name="a.json")
    path = _copy_as(results, label, name="b.json")
    if label_problem(label) is not None:  # trailing space: refused on its own
        with pytest.raises(ResultError, match="spaces"):
            load_result(path)
        return
    if label_key(label) not in (label_key("greedy"), label_key("greedy-1")):
        assert sorted(e.label for e in leaderboard.collect(results)) == sorted(["greedy", "greedy-1", label])
        return
    with pytest.raises(ResultError, match=r"a second result for agent .* reads like"):
        leaderboard.collect(results)


def test_the_exact_same_label_twice_is_a_duplicate(results):
    _copy_as(results, "greedy")
    with pytest.raises(ResultError, match="a second result for agent 'greedy' on track memtab-2p; the first"):
        leaderboard.collect(results)


def test_evaluate_refuses_a_look_alike_name_before_playing(tmp_path):
    with pytest.raises(InvalidOptionError, match="--name: .*CYRILLIC SMALL LETTER A"):
        evaluate_main(["--agent", "greedy", "--track", "memtab-2p", "--name", "gr\u0430edy", "--no-progress",
                       "--out", str(tmp_path / "r.json")])
    assert not (tmp_path / "r.json").exists()


@given(st.text(min_size=1, max_size=40))
def test_a_label_is_accepted_only_when_printable_ascii(label):
    why = label_problem(label)
    plain = all(" " <= c <= "~" for c in label) and label == label.strip() and "  " not in label
    assert (why is None) == plain


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=40))
def test_case_and_look_alikes_never_make_two_agents(label):
    assert label_key(label) == label_key(label.swapcase())
    assert label_key(label) == label_key(label.replace("l", "1").replace("o", "0").replace("-", "_"))


def test_labels_too_long_are_refused():
    assert label_problem("x" * MAX_LABEL) is None
    assert "1 to 100 characters" in label_problem("x" * (MAX_LABEL + 1))
    assert "1 to 100 characters" in label_problem("")
