"""How the study scores a perfect-memory cell on a benchmark track whose env forgets: the
policy plays with its own perfect record (``recall``), the run file says so
(``final_agent``), the audit refuses a file scored otherwise, and ``memtab study
--rescore`` scores such a file again from its saved policies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memtab_env.study import load_study
from memtab_env.study.grid import StudyError
from memtab_env.study.runs import collect_runs, load_run, run_path
from memtab_env.study.scores import final_agent

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "study.yaml"
REFERENCE = ("memtab-2p-none", "perfect__MLP.json")


@pytest.fixture(scope="module")
def study():
    return load_study(CONFIG)


@pytest.mark.parametrize(("memory", "track", "expected"), [
    ("perfect", "memtab-2p-none", {"recall": True}),
    ("none", "memtab-2p-none", {}),
    ("window:4", "memtab-2p-none", {"window": 4}),
    ("window:4", "memtab-2p", {"window": 4}),
    ("perfect", "memtab-2p", {}),
    ("perfect", "pelmanism-pairs-2p", {}),
])
def test_a_cell_plays_a_track_with_the_memory_it_was_trained_on(memory, track, expected):
    assert final_agent(memory, track) == expected


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "study" / REFERENCE[0]
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "results" / "study" / REFERENCE[0] / REFERENCE[1], folder / REFERENCE[1])
    return folder / REFERENCE[1]


def test_the_committed_reference_was_scored_with_recall_and_passes(tmp_path, study):
    path = _copy(tmp_path)
    run = load_run(path)
    assert run["final_scale"] == "benchmark" and run["final_agent"] == {"recall": True}
    assert len(collect_runs(path.parents[1], study, ROOT / "results")) == 1


REFUSED = r"final_agent must be \{\}, \{\"recall\": true\} or"


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda run: run.pop("final_agent"), r"field final_agent: \{\}, a cell trained under 'perfect' plays"),
    (lambda run: run.update(final_agent={"recall": False}), REFUSED),
    (lambda run: run.update(final_agent="recall"), REFUSED),
    (lambda run: run.update(final_agent={"window": True}), REFUSED),
    (lambda run: run.update(final_agent={"window": 4}), r"field final_agent: \{'window': 4\}, a cell trained "
                                                         r"under 'perfect' plays"),
])
def test_a_reference_scored_otherwise_is_refused(tmp_path, study, edit, reason):
    path = _copy(tmp_path)
    run = json.loads(path.read_text())
    edit(run)
    path.write_text(json.dumps(run))
    with pytest.raises(StudyError, match=reason):
        collect_runs(path.parents[1], study, ROOT / "results")


def test_rescore_plays_the_saved_policies_again_with_recall(tmp_path, study, monkeypatch):
    from memtab_env.study import run as study_run
    from memtab_env.study import scores

    path = _copy(tmp_path)
    stale = json.loads(path.read_text())
    stale.pop("final_agent")
    path.write_text(json.dumps(stale))
    out = path.parents[1]
    assert run_path(out, *REFERENCE[0:1], "perfect", "MLP") == path
    calls = []

    def fake(policy, track_id, deals, agent_kwargs=None):
        calls.append((policy.name, track_id, deals, agent_kwargs))
        return {"score": 0.5, "win_rate": 0.5, "win_rate_random": 0.5}

    monkeypatch.setattr(scores, "benchmark_score", fake)
    with pytest.raises(StudyError, match="rescoring needs its policies beside it; missing perfect__MLP__s0"):
        study_run.rescore_cell(study, "memtab-2p-none", "perfect", "MLP", out, log=lambda line: None)
    for seed in stale["seeds"]:
        path.with_name(f"perfect__MLP__s{seed}.zip").write_bytes(b"")
    assert study_run.rescore_cell(study, "memtab-2p-none", "perfect", "MLP", out, log=lambda line: None)
    assert calls == [(f"perfect__MLP__s{s}.zip", "memtab-2p-none", stale["final_deals"], {"recall": True})
                     for s in stale["seeds"]]
    run = load_run(path)
    assert run["final_agent"] == {"recall": True} and [f["score"] for f in run["final"]] == [0.5] * len(calls)
    assert run["curves"] == stale["curves"] and "final_platform" in run
    calls.clear()
    assert not study_run.rescore_cell(study, "memtab-2p-none", "perfect", "MLP", out, log=lambda line: None)
    assert calls == []
