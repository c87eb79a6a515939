"""``memtab site`` without a browser: what the builder writes (pages, data as JSON and as
scripts, records with their sidecars), the audit it shares with the leaderboard, the
folders it refuses, the agent descriptions, and the Python side of the viewer's board
(:mod:`memtab_env.site.board`) on hand-built games."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from memtab_env import cli
from memtab_env.games.memtab.rules import MemTab
from memtab_env.site import build_site
from memtab_env.site.agents import describe_agent
from memtab_env.site.board import position_cards, viewer_frames
from memtab_env.site.build import SiteError

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("index.html", "agent.html", "study.html", "viewer.html", "site.css", "common.js", "rules.js",
         "viewer.js", "leaderboard.js", "agent.js", "study.js")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A small results tree: a track with records, one without, a forged result, two study runs."""
    root = tmp_path_factory.mktemp("results") / "results"
    (root / "memtab-2p").mkdir(parents=True)
    for name in ("random.json", "random.records.jsonl.gz"):
        shutil.copy(ROOT / "results" / "memtab-2p" / name, root / "memtab-2p" / name)
    shutil.copytree(ROOT / "results" / "board-2p", root / "board-2p")
    forged = json.loads((root / "board-2p" / "greedy.json").read_text())
    forged["agent"]["label"] = "forged"
    forged["runs"][0]["opponents"]["random"]["wins"] -= 1
    (root / "board-2p" / "forged.json").write_text(json.dumps(forged))
    study = root / "study" / "memtab-2p-none"
    study.mkdir(parents=True)
    for name in ("none__GRU.json", "perfect__MLP.json"):
        shutil.copy(ROOT / "results" / "study" / "memtab-2p-none" / name, study / name)
    grid = root / "grid" / "memtab-2p-none-grid"
    grid.mkdir(parents=True)
    shutil.copy(ROOT / "results" / "grid" / "memtab-2p-none-grid" / "none__GRU.json", grid / "none__GRU.json")
    return root


@pytest.fixture(scope="module")
def site(results, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "site"
    return out, build_site(results, out)


def _script_data(path: Path, variable: str) -> object:
    text = path.read_text()
    prefix = f"window.{variable} = "
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix):-2])


def test_pages_and_data_are_written(site):
    out, report = site
    for name in PAGES:
        assert (out / name).is_file(), name
    for name, variable in (("site", "MEMTAB_SITE"), ("study", "MEMTAB_STUDY"), ("boards", "MEMTAB_BOARDS")):
        data = json.loads((out / "data" / f"{name}.json").read_text())
        assert _script_data(out / "data" / f"{name}.js", variable) == data
    data = json.loads((out / "data" / "site.json").read_text())
    assert {(r["track"], r["label"]) for r in data["results"]} == {
        ("memtab-2p", "random"), ("board-2p", "greedy"), ("board-2p", "random")}
    row = next(r for r in data["results"] if r["track"] == "memtab-2p")
    assert row["records"] == "records/memtab-2p/random.records.jsonl.gz" and row["games"] == 1200
    assert row["normalised"]["value"] == pytest.approx(0.0, abs=0.01)
    assert set(row["opponents"]) == {"random", "greedy", "expert"}
    assert sorted(data["agents"]) == ["greedy", "random"]
    study = json.loads((out / "data" / "study.json").read_text())
    # every committed study present, the MemTab grid first; each cell names its study
    assert [(c["study"], c["track"], c["memory"], c["model"]) for c in study["cells"]] == [
        ("grid", "memtab-2p-none-grid", "none", "GRU"), ("study", "memtab-2p-none", "none", "GRU"),
        ("study", "memtab-2p-none", "perfect", "MLP")]
    assert study["studies"] == [
        {"folder": "grid", "config": "configs/study_memtab.yaml", "tracks": ["memtab-2p-none-grid"]},
        {"folder": "study", "config": "configs/study.yaml", "tracks": ["memtab-2p-none"]}]
    cell = study["cells"][1]
    assert len(cell["final"]) == len(cell["seeds"]) and len(cell["centre"]) == len(cell["steps"])
    assert all(lo <= c <= hi for lo, c, hi in zip(cell["lo"], cell["centre"], cell["hi"], strict=True))
    # ranks within each study (one track each here: no table), never across studies
    assert study["across"] == [{"study": "grid", "tracks": ["memtab-2p-none-grid"], "rows": []},
                               {"study": "study", "tracks": ["memtab-2p-none"], "rows": []}]


def test_the_study_page_refuses_a_track_in_two_studies() -> None:
    from memtab_env.site.study import study_data
    from memtab_env.study import collect_runs

    runs = collect_runs(ROOT / "results" / "study" / "memtab-2p-none")[:1]
    with pytest.raises(ValueError, match="'memtab-2p-none' is in two studies, 'a' and 'b'"):
        study_data([("a", "a.yaml", runs), ("b", "b.yaml", runs)])
    assert study_data([("a", "a.yaml", []), ("b", "b.yaml", runs)])["studies"][0]["folder"] == "b"


def test_a_refused_result_is_reported_not_listed(site):
    out, report = site
    assert [p for p, _ in report.refused] == ["board-2p/forged.json"]
    assert "wins" in report.refused[0][1]
    data = json.loads((out / "data" / "site.json").read_text())
    assert "forged" not in {r["label"] for r in data["results"]}
    assert [r["file"] for r in data["refused"]] == ["board-2p/forged.json"]


def test_records_are_copied_with_a_sidecar_of_their_bytes(site, results):
    out, report = site
    assert report.records == ["records/memtab-2p/random.records.jsonl.gz"]
    rel = report.records[0]
    original = (results / "memtab-2p" / "random.records.jsonl.gz").read_bytes()
    assert (out / rel).read_bytes() == original
    text = (out / f"{rel}.js").read_text()
    prefix = f'memtabRecordsLoaded({json.dumps(rel)}, "'
    assert text.startswith(prefix) and text.endswith('");\n')
    assert base64.b64decode(text[len(prefix):-4]) == original


def test_the_site_is_rebuilt_in_place_and_other_folders_are_refused(results, tmp_path):
    out = tmp_path / "site"
    build_site(results, out)
    stale = out / "records" / "old.jsonl"
    stale.write_text("{}\n")
    (out / "CNAME").write_text("example.org\n")  # a file of the user's own stays
    build_site(results, out)
    assert not stale.exists() and (out / "CNAME").is_file()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(SiteError, match="not a site written by `memtab site`"):
        build_site(results, other)
    with pytest.raises(SiteError, match="no results folder"):
        build_site(tmp_path / "missing", tmp_path / "x")


def test_command_line(results, tmp_path, capsys):
    assert cli.main(["site", "--results", str(results), "--out", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "3 result(s) accepted, 1 refused" in out and "REFUSED board-2p/forged.json" in out
    assert cli.main(["site", "--results", str(tmp_path / "nope"), "--out", str(tmp_path / "t")]) == 2


def test_agent_descriptions():
    expert = describe_agent("memtab", {"spec": "expert", "kind": "builtin", "kwargs": {}, "sha256": None})
    assert expert["about"] and "class ExpertAgent" in expert["source"]["text"]
    assert expert["config"] is None and expert["evaluations"] == []
    shipped = describe_agent("memtab", {"spec": "ppo-memtab", "kind": "builtin", "kwargs": {},
                                        "sha256": "0" * 64})
    assert shipped["config"]["title"] == "agents/policies/ppo_memtab.yaml"
    files = [e["file"] for e in shipped["evaluations"]]
    assert files == ["ppo_memtab_eval.json", "ppo_memtab_search_eval.json"]
    assert {r["opponent"] for r in shipped["evaluations"][0]["results"]} >= {"random", "greedy", "expert"}
    model = describe_agent("memtab", {"spec": "x.zip", "kind": "file", "kwargs": {}, "sha256": "a" * 64})
    assert model["source"] is None and "SHA-256" in model["about"]


# MemTab, hand-built: R2 at 0 and 1, R3 at 2 and 3, ... (every kind twice, side by side)
LAYOUT = [code for code in ("R2", "R3", "R4", "R5", "R6", "R7", "R8",
                            "B2", "B3", "B4", "B5", "B6", "B7", "B8") for _ in range(2)]


@pytest.mark.parametrize(("flips", "cards"), [
    ([], {}),
    ([4], {4: "R4"}),
    ([4, 6], {4: "R4", 6: "R5"}),
    ([4, 6, 8], {8: "taken"}),  # flip 3 to player 0's tableau, flips 1 and 2 back face down
    ([0, 1], {0: "taken", 1: "taken"}),  # a pair: both leave the table
])
def test_position_cards_of_scripted_memtab_flips(flips, cards):
    game = MemTab(num_players=2)
    state = game.from_layout(LAYOUT)
    for f in flips:
        game.apply_inplace(state, f)
    assert position_cards(game, state) == [cards.get(q, "down") for q in range(28)]


def test_viewer_frames_follow_the_memory_model():
    record = {"format": "memtab-record/1", "game": "memtab", "env_id": "MemTab-v0",
              "options": {"memory": "none", "num_players": 2, "first_player": 0}, "num_players": 2,
              "first_player": 0, "layout": LAYOUT, "deal": "layout",
              "actions": [{"player": 0, "action": a, "card": LAYOUT[a]} for a in (4, 6, 8)]
              + [{"player": 1, "action": a, "card": LAYOUT[a]} for a in (10, 12, 14)],
              "result": {"over": False}}
    frames = list(viewer_frames(record))
    assert len(frames) == 7
    # after player 0's turn, player 1 (on turn) watched 4 and 6 go back: it remembers them
    assert np.flatnonzero(frames[3]["remembered"]).tolist() == [4, 6]
    assert frames[3]["current"] == 1 and frames[3]["scores"] == [6, 0]  # R6 to its tableau
    # under none, player 0 remembers only what was revealed by or since its own last action
    # (the flip of 8, now in its tableau): 10 and 12, not its own 4 and 6
    assert np.flatnonzero(frames[6]["remembered"]).tolist() == [10, 12]
    perfect = list(viewer_frames(record, memory="perfect"))
    assert np.flatnonzero(perfect[6]["remembered"]).tolist() == [4, 6, 10, 12]
