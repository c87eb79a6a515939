"""Tournaments: openskill orders a clearly stronger agent first; the payoff matrix is
consistent; the command writes its summary and plot."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memtab_env.errors import InvalidOptionError
from memtab_env.protocol.backends import AgentSpec
from memtab_env.protocol.cli import tournament_main
from memtab_env.protocol.tournament import payoff, rate, tournament, tournament_jobs
from memtab_env.protocol.tracks import get_track


def test_ratings_order_a_clearly_stronger_agent_first():
    summary = tournament(get_track("memtab-2p"), [AgentSpec("random"), AgentSpec("greedy")], 4)
    assert summary["order"] == ["greedy", "random"]
    assert summary["ratings"]["greedy"]["mu"] > summary["ratings"]["random"]["mu"]
    assert summary["games"] == 8


def test_rate_treats_ties_as_ties():
    ratings = rate([([0, 1], [0, 1])] * 5, 2)  # five shared wins
    assert ratings[0]["mu"] == pytest.approx(ratings[1]["mu"])
    ratings = rate([([0, 1, 2], [2])] * 10, 3)  # seat 2 always wins alone, 0 and 1 tie behind
    assert ratings[2]["mu"] > ratings[0]["mu"] == pytest.approx(ratings[1]["mu"])


def test_payoff_is_antisymmetric_and_counts_games():
    # (agents by seat, winners as seats): 0 beats 1, 1 beats 0, 0 and 2 share a win
    games = [([0, 1], [0]), ([1, 0], [0]), ([0, 2], [0, 1])]
    m, n = payoff(games, 3)
    assert m[0, 1] == 0.5 and m[0, 2] == 0.5 and np.isnan(m[1, 2])
    assert n[0, 1] == 2 and n[1, 2] == 0
    ok = ~np.isnan(m)
    assert np.allclose((m + m.T)[ok & ~np.eye(3, dtype=bool)], 1.0)


def test_four_player_tables_are_all_combinations():
    agents = [AgentSpec(a) for a in ("random", "greedy", "expert", "search", "random")]
    with pytest.raises(InvalidOptionError, match="at least 4"):
        tournament_jobs(get_track("memtab-4p"), agents[:3], 1, 1)
    jobs = tournament_jobs(get_track("memtab-4p"), agents, 2, 1)
    assert len(jobs) == 5 * 2  # C(5, 4) tables x 2 chunks of one deal
    assert all(j.rotations == (0, 1, 2, 3) for j in jobs)


def test_same_tournament_same_ratings():
    agents = [AgentSpec("random"), AgentSpec("greedy"), AgentSpec("expert")]
    a = tournament(get_track("memtab-2p"), agents, 2)
    assert a == tournament(get_track("memtab-2p"), agents, 2)


def test_cli_tournament_writes_summary_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "t.json"
    code = tournament_main(["--agents", "random,greedy,best=expert", "--track", "memtab-2p", "--games", "2",
                            "--out", str(out), "--no-progress"])
    assert code == 0
    summary = json.loads(out.read_text())
    assert [a["label"] for a in summary["agents"]] == ["random", "greedy", "best"]
    assert summary["order"][-1] == "random"
    assert (tmp_path / "t.png").stat().st_size > 1000
    text = capsys.readouterr().out
    assert "Plackett-Luce" in text and "payoff" in text


def test_cli_tournament_writes_files_only_where_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = tournament_main(["--agents", "random,greedy", "--track", "memtab-2p", "--games", "1",
                            "--no-progress"])
    assert code == 0 and list(tmp_path.iterdir()) == []
    assert "Plackett-Luce" in capsys.readouterr().out
