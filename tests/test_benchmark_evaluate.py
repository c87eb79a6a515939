"""Evaluation: seat rotation rotates, the same seeds give the same results on every run and
backend, and the command line writes a valid result with its records."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memtab_env.protocol import evaluate as ev
from memtab_env.protocol.backends import AgentSpec, InProcessBackend, make_backend
from memtab_env.protocol.cli import evaluate_main
from memtab_env.protocol.results import load_result, read_record_file
from memtab_env.protocol.tracks import TRACKS, get_track


def _evaluate(agent: str, track_id: str, deals: int, backend=None):
    track = get_track(track_id)
    return ev.evaluate(track, [ev.resolve_agent(agent, track.game)], agent, deals, backend)


def test_seat_rotation_really_rotates_two_players():
    result, records = _evaluate("random", "memtab-2p", 3)
    assert len(records) == 3 * 3 * 2  # opponents x deals x rotations
    for rec in records:
        b = rec["benchmark"]
        r = b["rotation"]
        assert rec["agents"][r] == "random" and b["seats"][r] == 0
        assert all(a == b["opponent"] for s, a in enumerate(rec["agents"]) if s != r)
        assert rec["seed"] == TRACKS["memtab-2p"].seeds()[b["deal"]]
        if b["opponent"] == "greedy" and r == 1:
            # greedy really sits in seat 0 and moves first: its first flip is the lowest position
            assert rec["actions"][0]["action"] == 0
    by_deal = {}
    for rec in records:
        key = (rec["benchmark"]["opponent"], rec["benchmark"]["deal"])
        by_deal.setdefault(key, []).append(rec)
    for recs in by_deal.values():
        assert sorted(r["benchmark"]["rotation"] for r in recs) == [0, 1]
        assert recs[0]["layout"] == recs[1]["layout"]  # duplicate: the same deal in every rotation
    assert len(result["runs"][0]["opponents"]["greedy"]["win_rate_by_seat"]) == 2


def test_seat_rotation_four_players():
    _, records = _evaluate("greedy", "memtab-4p", 1)
    rotations = [rec["benchmark"]["rotation"] for rec in records if rec["benchmark"]["opponent"] == "random"]
    assert rotations == [0, 1, 2, 3]
    for rec in records:
        r = rec["benchmark"]["rotation"]
        assert rec["agents"][r] == "greedy"
        assert rec["benchmark"]["seats"] == [(s - r) % 4 for s in range(4)]


def test_same_seeds_same_result_across_runs():
    a = _evaluate("expert", "memtab-2p", 3)
    b = _evaluate("expert", "memtab-2p", 3)
    assert a == b


def test_chunking_does_not_change_results(monkeypatch):
    base = _evaluate("random", "memtab-2p", 4)

    class Chunky(InProcessBackend):
        def chunk_size(self, deals: int) -> int:
            return 3

    assert _evaluate("random", "memtab-2p", 4, Chunky()) == base


def test_multiprocessing_backend_gives_identical_results():
    base = _evaluate("expert", "memtab-2p", 2)
    backend = make_backend("multiprocessing", workers=2)
    assert _evaluate("expert", "memtab-2p", 2, backend) == base


def test_ray_backend_gives_identical_results():
    ray = pytest.importorskip("ray")
    base = _evaluate("expert", "memtab-2p", 2)
    backend = make_backend("ray", workers=2)
    try:
        assert _evaluate("expert", "memtab-2p", 2, backend) == base
    finally:
        backend.close()
        if ray.is_initialized():
            ray.shutdown()


def test_several_runs_get_an_iqm(monkeypatch):
    track = dataclasses.replace(TRACKS["memtab-2p"], anchors={"random": 0.1, "search": 0.8})
    monkeypatch.setitem(TRACKS, "memtab-2p", track)
    runs = [ev.resolve_agent("greedy", "memtab", label="m"), ev.resolve_agent("random", "memtab", label="m")]
    result, _ = ev.evaluate(track, runs, "m", 2)
    norms = [run["normalised_score"] for run in result["runs"]]
    assert norms[0] > norms[1]
    s = result["summary"]
    assert s["runs"] == 2 and s["normalised_iqm"] == pytest.approx(sum(norms) / 2)
    lo, hi = s["normalised_iqm_ci"]
    assert lo <= s["normalised_iqm"] <= hi


def test_unknown_agent_and_track_are_clear():
    from memtab_env.errors import InvalidOptionError

    with pytest.raises(InvalidOptionError, match="available"):
        ev.resolve_agent("nosuchagent", "memtab")
    with pytest.raises(InvalidOptionError, match="no model file"):
        ev.resolve_agent("missing/model.zip", "memtab")
    with pytest.raises(InvalidOptionError, match="tracks"):
        get_track("memtab-9p")
    with pytest.raises(InvalidOptionError, match="version"):
        get_track("memtab-2p/v7")


def test_agent_spec_labels():
    assert AgentSpec("greedy").name == "greedy"
    assert AgentSpec("/x/model.zip", "mine").name == "mine"


def test_cli_evaluate_writes_result_and_records(tmp_path, capsys):
    out, recs = tmp_path / "res" / "greedy.json", tmp_path / "res" / "greedy.records.jsonl.gz"
    code = evaluate_main(["--agent", "greedy", "--track", "memtab-2p", "--games", "2", "--out", str(out),
                          "--records", str(recs), "--no-progress"])
    assert code == 0
    text = capsys.readouterr().out
    assert "win rate" in text and "greedy" in text and "expert" in text
    result = load_result(out)
    assert result["records"] == "greedy.records.jsonl.gz"
    assert result["seeds"] == TRACKS["memtab-2p"].seeds(2)
    assert result["agent"]["runs"][0] == {"spec": "greedy", "kind": "builtin", "kwargs": {}, "sha256": None}
    assert len(list(read_record_file(recs))) == 2 * 2 * 3
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temp files left
    json.loads(out.read_text())


def test_cli_records_folder(tmp_path):
    folder = tmp_path / "recs"
    assert evaluate_main(["--agent", "random", "--track", "board-2p", "--games", "1", "--records",
                          str(folder), "--no-progress"]) == 0
    assert len(list(folder.glob("game_*.json"))) == 1 * 2 * 2


def test_trained_model_from_a_path(tmp_path):
    """A saved model is evaluated from the path the user names, and its hash recorded."""
    pytest.importorskip("memtab_env.agents.sb3_policy")
    sb3c = pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    import memtab_env  # noqa: F401  (registers MemTab-v0)

    model = sb3c.MaskablePPO("MlpPolicy", gym.make("MemTab-v0", opponents="random"),
                             n_steps=32, batch_size=32, seed=0)
    path = tmp_path / "tiny.zip"
    model.save(path)
    spec, desc = ev.resolve_agent(str(path), "memtab")
    assert desc["kind"] == "file" and len(desc["sha256"]) == 64 and spec.name == "tiny"
    result, _ = ev.evaluate(get_track("memtab-2p"), [(spec, desc)], "tiny", 1)
    assert result["runs"][0]["overall"]["games"] == 6


def test_cli_from_records_recomputes_the_same_result(tmp_path):
    common = ["--agent", "greedy", "--track", "memtab-2p", "--games", "2", "--no-progress"]
    recs = tmp_path / "g.records.jsonl.gz"
    assert evaluate_main([*common, "--out", str(tmp_path / "a.json"), "--records", str(recs)]) == 0
    assert evaluate_main([*common, "--out", str(tmp_path / "b.json"), "--from-records", str(recs),
                          "--records", str(tmp_path / "b.records.jsonl.gz")]) == 0
    a, b = load_result(tmp_path / "a.json"), load_result(tmp_path / "b.json")
    assert a.pop("records") == "g.records.jsonl.gz" and b.pop("records") == "b.records.jsonl.gz"
    assert a == b
