"""``results/game_endings.py``: how benchmark games end, counted from their records."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from memtab_env.errors import RecordError
from memtab_env.protocol import evaluate as ev
from memtab_env.protocol.tracks import get_track
from memtab_env.record import read_records

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("game_endings", ROOT / "results/game_endings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(seat: int, winners: list[int], instant: bool, flips: list[tuple[int, int]],
            scores: list[int], opponent: str = "greedy", deal: int = 0) -> dict:
    return {"format": "memtab-record/1", "game": "memtab", "env_id": "MemTab-v0",
            "options": {"num_players": 2}, "seed": deal, "num_players": 2, "first_player": 0,
            "layout": ["R1"] * 28, "actions": [{"player": p, "action": a} for p, a in flips],
            "result": {"over": True, "scores": scores, "winners": winners, "instant_win": instant},
            "agents": ["me", opponent] if seat == 0 else [opponent, "me"],
            "benchmark": {"opponent": opponent, "deal": deal, "rotation": seat,
                          "seats": [(s - seat) % 2 for s in range(2)]}}


def test_endings_count_wins_instant_endings_and_new_cards_from_the_agents_seat() -> None:
    endings = _script().endings
    games = [
        # seat 0 wins at once; it turns over positions 0, 1, 2 first, the opponent 3 and 0 (seen)
        _record(0, [0], True, [(0, 0), (0, 1), (0, 2), (1, 3), (1, 0), (1, 4), (0, 5)], [3, -1]),
        # seat 1 loses at once; it turns over 7 (new) and 6 (already seen)
        _record(1, [0], True, [(0, 6), (0, 8), (0, 9), (1, 7), (1, 6)], [2, 5]),
        # a shared win at the end of the cards is not a win; deal 5 is dropped with deals=3
        _record(0, [0, 1], False, [(0, 0), (1, 1)], [1, 1]),
        _record(0, [0], True, [(0, 0)], [9, 0], deal=5),
    ]
    figures = endings(games, deals=3)["me"]["greedy"]
    assert figures == {"games": 3.0, "win": pytest.approx(1 / 3), "instant_win": pytest.approx(1 / 3),
                       "instant_loss": pytest.approx(1 / 3), "flips": pytest.approx(14 / 3),
                       "new_cards": pytest.approx((4 + 1 + 1) / 3),
                       "opponent_new_cards": pytest.approx((2 + 3 + 1) / 3),
                       "score": pytest.approx((3 + 5 + 1) / 3),
                       "opponent_score": pytest.approx((-1 + 2 + 1) / 3)}
    assert endings(games)["me"]["greedy"]["games"] == 4


@pytest.mark.parametrize("track_id", ["memtab-2p-none", "memtab-4p"])
def test_endings_agree_with_the_evaluation_that_wrote_the_records(track_id: str) -> None:
    """The agent's seat is the rotation's (with 4 players, not ``seats[0]``): its wins and
    its games are the evaluation's."""
    track = get_track(track_id)
    result, records = ev.evaluate(track, [ev.resolve_agent("greedy", "memtab")], "greedy", 3)
    figures = _script().endings(records)["greedy"]
    assert set(figures) == set(result["runs"][0]["opponents"])
    games = 3 * track.num_players
    for opponent, f in figures.items():
        assert f["games"] == games
        # the evaluation's win rate counts a shared win as a share of one
        shared = sum(1 / len(r["result"]["winners"]) for r in records
                     if r["benchmark"]["opponent"] == opponent and len(r["result"]["winners"]) > 1
                     and r["benchmark"]["rotation"] in r["result"]["winners"])
        assert f["win"] + shared / games == pytest.approx(
            result["runs"][0]["opponents"][opponent]["win_rate"])


def test_a_record_that_is_not_a_benchmark_record_is_refused_by_name() -> None:
    record = _record(0, [0], True, [(0, 0)], [1, 0])
    bare = copy.deepcopy(record)
    del bare["benchmark"]
    with pytest.raises(RecordError, match="not a benchmark record"):
        _script().endings([bare])
    broken = copy.deepcopy(record)
    broken["actions"] = [{"player": -1, "action": 0}]
    with pytest.raises(RecordError, match=r"actions\[0\]\.player"):
        _script().endings([broken])


def test_the_script_prints_a_table_of_a_committed_records_file(capsys: pytest.CaptureFixture) -> None:
    path = ROOT / "results/memtab-2p-none/greedy.records.jsonl.gz"
    assert _script().main([str(path), "--deals", "10"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| agent | opponent | games | win rate | instant wins")
    rows = [line for line in out[2:] if line.startswith("| `greedy` |")]
    assert {row.split("|")[2].strip() for row in rows} == {"`random`", "`greedy`", "`expert`"}
    assert all(row.split("|")[3].strip() == "20" for row in rows)
    assert sum(1 for _ in read_records(path)) > 20
    with pytest.raises(SystemExit):
        _script().main([str(path), "--deals", "0"])
