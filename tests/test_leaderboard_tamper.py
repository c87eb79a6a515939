"""Tampering with a result, as a hostile submitter would: every figure the leaderboard shows
is recomputed (from the records, or from the figures it follows from), so an edited figure
is refused naming its field; impossible values are refused even without records; a result
relabelled as another agent is refused by ``--reproduce``; hostile paths and labels do
no harm."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from memtab_env.protocol import leaderboard
from memtab_env.protocol.cli import evaluate_main, leaderboard_main
from memtab_env.protocol.results import ResultError, load_result
from memtab_env.protocol.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def results(tmp_path, monkeypatch):
    """memtab-2p with 2 deals: ``greedy`` (audited), ``multi`` (two runs of greedy, so the
    IQM is shown; audited) and ``bare``, ``greedy``'s result without its records."""
    track = dataclasses.replace(TRACKS["memtab-2p"], deals=2, anchors={"random": 0.05, "search": 0.7})
    monkeypatch.setitem(TRACKS, "memtab-2p", track)
    folder = tmp_path / "results"
    assert evaluate_main(["--agent", "greedy", "--track", "memtab-2p", "--no-progress",
                          "--out", str(folder / "greedy.json"),
                          "--records", str(folder / "greedy.records.jsonl.gz")]) == 0
    assert evaluate_main(["--agent", "greedy", "--agent", "expert", "--name", "multi", "--track",
                          "memtab-2p", "--no-progress", "--out", str(folder / "multi.json"),
                          "--records", str(folder / "multi.records.jsonl.gz")]) == 0
    bare = json.loads((folder / "greedy.json").read_text())
    bare["records"], bare["agent"]["label"] = None, "bare"
    (folder / "bare.json").write_text(json.dumps(bare, indent=1))
    return folder


def _edit(path: Path, edit) -> None:
    obj = json.loads(path.read_text())
    edit(obj)
    path.write_text(json.dumps(obj, indent=1))


def _set(path: tuple, value):
    def edit(obj):
        *head, last = path
        for k in head:
            obj = obj[k]
        obj[last] = value(obj[last]) if callable(value) else value
    return edit


def _audit(path: Path) -> int:
    return leaderboard.audit(path, load_result(path), root=path.parent)


def test_untouched_results_are_accepted(results):
    assert sorted(e.label for e in leaderboard.collect(results)) == ["bare", "greedy", "multi"]


# every figure a row shows, and the fields it is computed from
SHOWN = [
    ("runs", 0, "overall", "win_rate"),
    ("runs", 0, "overall", "win_rate_ci", 0),
    ("runs", 0, "overall", "win_rate_ci", 1),
    ("runs", 0, "overall", "n_eff"),
    ("runs", 0, "overall", "score_diff"),
    ("runs", 0, "opponents", "random", "win_rate"),
    ("runs", 0, "opponents", "greedy", "win_rate_ci", 1),
    ("runs", 0, "opponents", "expert", "win_rate_ci", 0),
    ("runs", 0, "opponents", "expert", "n_eff"),
    ("runs", 0, "opponents", "expert", "score_diff"),
    ("runs", 0, "normalised_score"),
    ("runs", 0, "normalised_ci", 0),
    ("runs", 0, "normalised_ci", 1),
    ("summary", "win_rate"),
    ("summary", "normalised_score"),
]
MULTI = [
    ("summary", "normalised_iqm"),
    ("summary", "normalised_iqm_ci", 0),
    ("summary", "normalised_iqm_ci", 1),
    ("summary", "runs"),
    ("runs", 1, "overall", "win_rate"),
    ("runs", 1, "normalised_score"),
]


def _nudge(v):
    return v + 0.01 if v < 0.5 else v - 0.01


@pytest.mark.parametrize("field", SHOWN)
def test_an_edited_figure_of_an_audited_result_is_refused(results, field):
    path = results / "greedy.json"
    _edit(path, _set(field, _nudge))
    with pytest.raises(ResultError) as err:
        _audit(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("field", MULTI)
def test_an_edited_figure_over_runs_is_refused(results, field):
    path = results / "multi.json"
    _edit(path, _set(field, _nudge if field[-1] != "runs" else 3))
    with pytest.raises(ResultError):
        _audit(path)


def test_the_summary_is_recomputed_even_where_runs_agree(results):
    """The hole this suite was written for: IQM edited by hand, runs untouched."""
    path = results / "multi.json"
    _edit(path, _set(("summary", "normalised_iqm"), lambda v: v + 1.0))
    with pytest.raises(ResultError, match=r"summary\.normalised_iqm"):
        _audit(path)
    assert leaderboard_main(["--results", str(results), "--out", str(results.parent / "LB.md")]) == 1
    assert not (results.parent / "LB.md").exists()


DERIVED = [
    ("runs", 0, "overall", "win_rate"),
    ("runs", 0, "overall", "win_rate_ci", 0),
    ("runs", 0, "overall", "score_diff"),
    ("runs", 0, "opponents", "greedy", "win_rate_ci", 1),
    ("runs", 0, "normalised_score"),
    ("runs", 0, "normalised_ci", 1),
    ("summary", "win_rate"),
    ("summary", "normalised_score"),
]


@pytest.mark.parametrize("field", DERIVED)
def test_figures_that_follow_from_others_are_recomputed_without_records(results, field):
    path = results / "bare.json"
    _edit(path, _set(field, _nudge))
    with pytest.raises(ResultError, match=field[-1] if isinstance(field[-1], str) else field[-2]):
        _audit(path)


IMPOSSIBLE = [
    (("runs", 0, "opponents", "random", "win_rate"), 5.0, "outside"),
    (("runs", 0, "opponents", "random", "win_rate"), -0.1, "outside"),
    (("runs", 0, "opponents", "random", "wins"), -1, "non-negative"),
    (("runs", 0, "opponents", "random", "losses"), 10**6, "add up"),
    (("runs", 0, "opponents", "random", "n_eff"), 1e9, "outside"),
    (("runs", 0, "opponents", "random", "score_diff"), 1e6, "outside"),
    (("runs", 0, "opponents", "random", "win_rate_by_seat"), [2.0, 0.0], "outside"),
    (("runs", 0, "overall", "win_rate_ci"), [0.9, 0.1], "not an interval"),
    (("runs", 0, "overall", "games"), 0, "games"),
    (("runs", 0, "normalised_score"), "high", "finite number"),
    (("agent", "runs", 0, "sha256"), "xyz", "hex"),
    (("agent", "label"), "", "1 to 100 characters"),
    (("agent", "label"), "a\nb", "printable"),
    (("extra",), 1, "unknown field"),
    (("runs", 0, "opponents", "random", "bonus"), 1, "unknown field"),
]


@pytest.mark.parametrize("field,value,message", IMPOSSIBLE)
def test_impossible_values_are_refused_without_records(results, field, value, message):
    path = results / "bare.json"
    _edit(path, _set(field, value))
    with pytest.raises(ResultError, match=message) as err:
        load_result(path)
    text = str(err.value)
    assert text.startswith(f"{path}:") and "field " in text  # file, line and field


def test_nan_and_infinity_are_refused(results):
    path = results / "bare.json"
    path.write_text(path.read_text().replace('"n_eff": ', '"n_eff": NaN, "x": ', 1))
    with pytest.raises(ResultError, match="NaN"):
        load_result(path)


def test_errors_name_the_line(results):
    path = results / "bare.json"
    _edit(path, _set(("runs", 0, "opponents", "expert", "win_rate"), 1.5))
    text = path.read_text()
    with pytest.raises(ResultError) as err:
        load_result(path)
    line = int(str(err.value)[len(str(path)) + 1:].split(":")[0])
    assert '"win_rate": 1.5' in text.splitlines()[line - 1]


def test_the_page_shows_the_recomputed_figures(results):
    """A figure within the tolerance but written differently is shown as recomputed."""
    path = results / "greedy.json"
    _edit(path, _set(("summary", "win_rate"), lambda v: v * (1 + 1e-12)))
    entries = {e.label: e for e in leaderboard.collect(results)}
    recomputed = entries["greedy"].result["summary"]["win_rate"]
    assert recomputed == entries["bare"].result["summary"]["win_rate"]


# --- who played --------------------------------------------------------------------------

def test_a_relabelled_result_is_refused_by_reproduce(results):
    """greedy's games relabelled as expert's (labels, specs and records all edited
    consistently): replaying accepts it, re-playing with the named agent does not."""
    path = results / "greedy.json"
    _edit(path, lambda o: (o["agent"].update(label="fake-expert"),
                           o["agent"]["runs"][0].update(spec="expert")))
    rpath = results / "greedy.records.jsonl.gz"
    lines = gzip.decompress(rpath.read_bytes()).decode().splitlines()
    recs = [json.loads(x) for x in lines]
    for r in recs:
        r["agents"] = ["fake-expert" if s == 0 else r["benchmark"]["opponent"]
                       for s in r["benchmark"]["seats"]]
    rpath.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in recs).encode()))
    assert _audit(path) == 12  # legal games that give the figures
    with pytest.raises(ResultError, match="not reproduced by the agent the result names"):
        leaderboard.audit(path, load_result(path), root=results, reproduce=12)


def test_an_honest_result_is_reproduced(results):
    path = results / "multi.json"
    assert leaderboard.audit(path, load_result(path), root=results, reproduce=24) == 24


def test_reproduce_refuses_another_package_version(results):
    path = results / "greedy.json"
    _edit(path, _set(("package_version",), "0.0.1"))
    with pytest.raises(ResultError, match="0.0.1"):
        leaderboard.audit(path, load_result(path), root=results, reproduce=1)


def test_reproduce_from_the_command_line(results, capsys):
    out = results.parent / "LB.md"
    assert leaderboard_main(["--results", str(results), "--out", str(out), "--reproduce", "2",
                             "--reproduce-seed", "1"]) == 0
    assert "2 reproduced by the named agent" in capsys.readouterr().out


def test_a_model_result_needs_its_model_hash(results):
    path = results / "greedy.json"
    _edit(path, lambda o: o["agent"]["runs"][0].update(kind="file", spec="m.zip", sha256=None))
    with pytest.raises(ResultError, match="sha256"):
        load_result(path)


# --- paths stay home ---------------------------------------------------------------------

@pytest.mark.parametrize("records", ["../outside.records.jsonl.gz", "/etc/passwd", "/dev/zero",
                                     "sub/../../x.jsonl"])
def test_a_records_path_outside_the_tree_is_refused(results, records):
    shutil.copy(results / "greedy.records.jsonl.gz", results.parent / "outside.records.jsonl.gz")
    path = results / "greedy.json"
    _edit(path, _set(("records",), records))
    with pytest.raises(ResultError, match="outside"):
        _audit(path)


def test_a_symlink_out_of_the_tree_is_refused(results, tmp_path):
    elsewhere = tmp_path / "elsewhere.jsonl.gz"
    shutil.copy(results / "greedy.records.jsonl.gz", elsewhere)
    (results / "link.records.jsonl.gz").symlink_to(elsewhere)
    path = results / "greedy.json"
    _edit(path, _set(("records",), "link.records.jsonl.gz"))
    with pytest.raises(ResultError, match="outside"):
        _audit(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_pipe_is_never_read(results):
    os.mkfifo(results / "pipe.records.jsonl")
    os.mkfifo(results / "pipe.json")
    path = results / "greedy.json"
    _edit(path, _set(("records",), "pipe.records.jsonl"))
    with pytest.raises(ResultError, match="not a regular file"):
        _audit(path)
    rejected = []
    entries = leaderboard.collect(results, on_error=lambda p, e: rejected.append((p.name, str(e))))
    assert {e.label for e in entries} == {"bare", "multi"}
    assert {name for name, _ in rejected} == {"greedy.json", "pipe.json"}


def test_a_folder_named_like_a_result_is_reported(results):
    (results / "folder.json").mkdir()
    rejected = []
    leaderboard.collect(results, on_error=lambda p, e: rejected.append(str(e)))
    assert any("folder" in r for r in rejected)


# --- labels and the page -----------------------------------------------------------------

@pytest.mark.parametrize("label", ["a|b", "`x`", "<script>alert(1)</script>", "**bold** [l](http://x)",
                                   "``"])
def test_labels_cannot_break_the_page(results, label):
    path = results / "bare.json"
    _edit(path, _set(("agent", "label"), label))
    entries = leaderboard.collect(results)
    page = leaderboard.render(entries, results.parent)
    rows = [line for line in page.splitlines() if label.replace("|", "\\|") in line]
    assert len(rows) == 1
    row = rows[0]
    cells = row.replace("\\|", "").split("|")
    assert len(cells) == len(next(x for x in page.splitlines() if x.startswith("| #")).split("|"))
    assert leaderboard.md_code(label) in row


# --- skip-invalid builds the rest --------------------------------------------------------

def test_skip_invalid_builds_the_rest_whatever_is_broken(results):
    (results / "empty.json").write_text("")
    (results / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (results / "huge.json").write_text('{"format": "memtab-result/1", "seeds": [' + "9" * 5000 + "]}")
    (results / "latin1.json").write_bytes(b'{"format": "\xe9"}')
    bad = copy.deepcopy(json.loads((results / "bare.json").read_text()))
    bad["runs"] = "many"
    bad["agent"]["label"] = "other"
    (results / "types.json").write_text(json.dumps(bad))
    out = results.parent / "LB.md"
    assert leaderboard_main(["--results", str(results), "--out", str(out), "--skip-invalid"]) == 1
    page = out.read_text()
    assert "`greedy`" in page and "`multi`" in page and "`bare`" in page


def test_a_model_file_result_is_reproduced_from_the_model_next_to_it(results):
    from memtab_env.agents.shipped import shipped_path

    model = results / "my-ppo.zip"
    shutil.copy(shipped_path("ppo-memtab"), model)
    assert evaluate_main(["--agent", str(model), "--name", "my-ppo", "--track", "memtab-2p", "--no-progress",
                          "--out", str(results / "my-ppo.json"),
                          "--records", str(results / "my-ppo.records.jsonl.gz")]) == 0
    path = results / "my-ppo.json"
    assert leaderboard.audit(path, load_result(path), root=results, reproduce=3) == 12
    model.write_bytes(model.read_bytes() + b"\0")  # another model under the same name
    with pytest.raises(ResultError, match="sha256"):
        leaderboard.audit(path, load_result(path), root=results, reproduce=1)
    model.unlink()
    with pytest.raises(ResultError, match="no model file"):
        leaderboard.audit(path, load_result(path), root=results, reproduce=1)


def test_replay_reports_every_file_and_reproduces(results, tmp_path, capsys):
    from memtab_env.cli import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "memtab-record/1"}\n{not json\n')
    good = results / "greedy.records.jsonl.gz"
    assert main(["replay", str(bad), str(good), str(tmp_path / "missing.jsonl"), "--reproduce", "2"]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:1: record 0: REJECTED" in out and f"{bad}: REJECTED: {bad}:2: not valid JSON" in out
    assert f"{good}: ok" in out and "missing.jsonl: REJECTED" in out and "2 of 3 file(s)" in out
    recs = [json.loads(x) for x in gzip.decompress(good.read_bytes()).decode().splitlines()]
    recs[0]["agents"] = ["random" if a == "greedy" else a for a in recs[0]["agents"]]
    relabelled = tmp_path / "relabelled.jsonl"
    relabelled.write_text("".join(json.dumps(r) + "\n" for r in recs[:1]))
    assert main(["replay", str(relabelled)]) == 0  # legal games
    assert main(["replay", str(relabelled), "--reproduce", "1"]) == 1
    assert "not reproduced by the agents it names" in capsys.readouterr().out


def test_a_link_out_of_the_tree_inside_a_records_folder_is_refused(results, tmp_path):
    assert evaluate_main(["--agent", "random", "--name", "folder", "--track", "memtab-2p", "--no-progress",
                          "--out", str(results / "folder.json"),
                          "--records", str(results / "folder-recs")]) == 0
    path = results / "folder.json"
    assert _audit(path) == 12
    outside = tmp_path / "outside.json"
    game = results / "folder-recs" / "game_000000.json"
    outside.write_bytes(game.read_bytes())
    game.unlink()
    game.symlink_to(outside)
    with pytest.raises(ResultError, match="outside"):
        _audit(path)
