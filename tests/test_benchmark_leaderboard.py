"""The leaderboard: a deterministic rebuild that replays records and refuses tampering; the
committed results and LEADERBOARD.md agree."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from memtab_env.protocol import leaderboard
from memtab_env.protocol.cli import evaluate_main, leaderboard_main
from memtab_env.protocol.results import ResultError, load_result, read_record_file, track_of
from memtab_env.protocol.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def results(tmp_path, monkeypatch):
    """A results folder with two audited results on a 2-deal version of memtab-2p."""
    track = dataclasses.replace(TRACKS["memtab-2p"], deals=2, anchors={"random": 0.05, "search": 0.7})
    monkeypatch.setitem(TRACKS, "memtab-2p", track)
    folder = tmp_path / "results"
    for agent in ("greedy", "random"):
        assert evaluate_main(["--agent", agent, "--track", "memtab-2p", "--no-progress",
                              "--out", str(folder / f"{agent}.json"),
                              "--records", str(folder / f"{agent}.records.jsonl.gz")]) == 0
    return folder


def _lb(folder: Path, *extra: str) -> int:
    out = folder.parent / "LEADERBOARD.md"
    return leaderboard_main(["--results", str(folder), "--out", str(out), *extra])


def _edit_records(path: Path, edit) -> None:
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    records = [json.loads(line) for line in lines]
    edit(records)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))


def test_rebuild_is_deterministic(results):
    assert _lb(results) == 0
    page = (results.parent / "LEADERBOARD.md").read_text()
    assert "`greedy`" in page and "`random`" in page and "yes (12 games)" in page
    assert page.index("| 1 | `greedy`") < page.index("| 2 | `random`")  # better first
    assert _lb(results) == 0
    assert (results.parent / "LEADERBOARD.md").read_text() == page
    assert _lb(results, "--check") == 0


def test_tampered_record_is_refused(results, capsys):
    def swap_card(records):
        a = records[3]["actions"][0]
        a["card"] = "R8" if a["card"] != "R8" else "B8"

    _edit_records(results / "greedy.records.jsonl.gz", swap_card)
    assert _lb(results) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and "does not replay" in out and "record 3" in out
    assert not (results.parent / "LEADERBOARD.md").exists()


def test_tampered_result_is_refused(results, capsys):
    path = results / "random.json"
    obj = json.loads(path.read_text())
    fig = obj["runs"][0]["opponents"]["greedy"]
    fig["win_rate"], fig["win_rate_ci"] = 0.75, [0.5, 0.9]
    path.write_text(json.dumps(obj))
    assert _lb(results) == 1
    out = capsys.readouterr().out
    assert "field runs[0].opponents.greedy" in out and "random.json:" in out


@pytest.mark.parametrize("edit,message", [
    (lambda recs: recs.pop(5), "missing"),
    (lambda recs: recs.append(recs[0]), "second record of the same game"),
    (lambda recs: recs[0]["benchmark"].update(seats=[1, 0]), "are not rotation"),
    (lambda recs: recs[0].update(agents=recs[0]["agents"][::-1]), "expected"),
    (lambda recs: recs[0]["result"].update(winners=[0, 1]), "does not replay"),
])
def test_records_that_do_not_make_the_evaluation(results, edit, message):
    _edit_records(results / "greedy.records.jsonl.gz", edit)
    path = results / "greedy.json"
    with pytest.raises(ResultError, match=message):
        leaderboard.audit(path, load_result(path))


def test_skip_invalid_writes_the_rest(results):
    (results / "broken.json").write_text("{")
    assert _lb(results) == 1
    assert not (results.parent / "LEADERBOARD.md").exists()
    assert _lb(results, "--skip-invalid") == 1
    page = (results.parent / "LEADERBOARD.md").read_text()
    assert "`greedy`" in page


def test_too_few_deals_and_duplicates_are_refused(results, tmp_path):
    short = tmp_path / "short"
    assert evaluate_main(["--agent", "expert", "--track", "memtab-2p", "--games", "1",
                          "--out", str(short / "expert.json"), "--no-progress"]) == 0
    with pytest.raises(ResultError, match="fewer than"):
        leaderboard.collect(short)
    (results / "copy").mkdir()
    copy = json.loads((results / "greedy.json").read_text())
    copy["records"] = None
    (results / "copy" / "greedy.json").write_text(json.dumps(copy))
    with pytest.raises(ResultError, match="second result"):
        leaderboard.collect(results)


# --- the committed results ---------------------------------------------------------------

COMMITTED = sorted(p for p in (ROOT / "results").rglob("*.json")  # study run files aside, as collect does
                   if not leaderboard._not_a_result(p)) if (ROOT / "results").is_dir() else []


@pytest.mark.skipif(not COMMITTED, reason="no committed results")
def test_committed_leaderboard_is_current():
    from memtab_env.study import collect_runs

    entries = leaderboard.collect(ROOT / "results", replay=False)
    study_runs = collect_runs(ROOT / "results" / "study")
    assert leaderboard.render(entries, ROOT, study_runs) == (ROOT / "LEADERBOARD.md").read_text(), (
        "stale LEADERBOARD.md: run memtab leaderboard")


@pytest.mark.skipif(not COMMITTED, reason="no committed results")
def test_committed_anchors_match_their_results():
    for path in COMMITTED:
        result = load_result(path)
        track = track_of(result)
        if result["agent"]["label"] in ("random", track.strongest):
            assert result["runs"][0]["overall"]["win_rate"] == track.anchors[result["agent"]["label"]]


@pytest.mark.skipif(not (ROOT / "results/memtab-2p/greedy.json").is_file(), reason="no committed results")
def test_a_committed_result_replays():
    path = ROOT / "results/memtab-2p/greedy.json"
    assert leaderboard.audit(path, load_result(path)) == 1200


def test_record_folders_and_tournaments_among_results_are_not_results(results):
    assert evaluate_main(["--agent", "expert", "--track", "memtab-2p", "--out", str(results / "expert.json"),
                          "--records", str(results / "expert-records"), "--no-progress"]) == 0
    (results / "t.json").write_text(json.dumps({"format": "memtab-tournament/1"}))
    entries = leaderboard.collect(results)
    assert sorted(e.label for e in entries) == ["expert", "greedy", "random"]
    assert {e.label: e.audited_games for e in entries}["expert"] == 12


@pytest.mark.skipif(not COMMITTED, reason="no committed results")
@pytest.mark.parametrize("agent", ["random", "greedy", "expert", "search"])
def test_committed_games_replay_with_todays_agents(agent):
    """The committed memtab-2p games are what the built-in agents play now (first 2 deals);
    if this fails, a reference agent changed: run results/regenerate.sh."""
    from memtab_env.protocol import evaluate as ev

    path = ROOT / "results/memtab-2p" / f"{agent}.json"
    if not path.is_file():
        pytest.skip(f"no committed result for {agent}")
    committed = {}
    for rec in read_record_file(path.parent / f"{agent}.records.jsonl.gz"):
        b = rec["benchmark"]
        if b["deal"] < 2:
            committed[b["opponent"], b["deal"], b["rotation"]] = rec["actions"]
    track = TRACKS["memtab-2p"]
    _, records = ev.evaluate(track, [ev.resolve_agent(agent, "memtab")], agent, 2)
    now = {(r["benchmark"]["opponent"], r["benchmark"]["deal"], r["benchmark"]["rotation"]): r["actions"]
           for r in records}
    stale = sorted(k for k in now if now[k] != committed.get(k))
    assert not stale, f"{agent} now plays differently in {stale}: run results/regenerate.sh"
