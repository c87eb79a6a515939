"""Study run files audited like results: every stored score is recomputed from the win
rates (and the benchmark track's anchors) or the turns it derives from, impossible values
are refused, the curve's points and the steps agree with the run's config and the seeds
with the study's; a refused file is named with the reason and never reaches the page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memtab_env.protocol.leaderboard import audited_study_runs
from memtab_env.study import load_study
from memtab_env.study.grid import StudyError
from memtab_env.study.runs import collect_runs

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "study.yaml"
BENCH = ("memtab-2p-none", "none__GRU.json")  # scored by win rates against the benchmark anchors
SOLO = ("pelmanism-solo-none", "none__GRU.json")  # scored by turns


@pytest.fixture(scope="module")
def study():
    return load_study(CONFIG)


def _tree(tmp_path: Path, cell) -> Path:
    folder = tmp_path / "study" / cell[0]
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "results" / "study" / cell[0] / cell[1], folder / cell[1])
    return folder / cell[1]


def _audit(path: Path, study):
    return collect_runs(path.parents[1], study, ROOT / "results")


def _edit(path: Path, edit) -> None:
    run = json.loads(path.read_text())
    edit(run)
    path.write_text(json.dumps(run))


@pytest.mark.parametrize("cell", [BENCH, SOLO])
def test_the_committed_run_files_pass(tmp_path, study, cell):
    path = _tree(tmp_path, cell)
    assert len(_audit(path, study)) == 1


def _set(*keys, value):
    def edit(run):
        obj = run
        for k in keys[:-1]:
            obj = obj[k]
        obj[keys[-1]] = value(obj[keys[-1]]) if callable(value) else value
    return edit


BENCH_EDITS = [
    (_set("final", 0, "score", value=lambda s: s + 0.05), r"final\[0\].score: the file says"),
    (_set("final", 2, "score", value=5.0), r"final\[2\].score: 5.0 is above the highest score"),
    (_set("final", 1, "win_rate_random", value=1.5), r"final\[1\].win_rate_random: 1.5 is not a rate"),
    (_set("final", 1, "win_rate_greedy", value=float("nan")), "not valid JSON|NaN|finite"),
    (_set("final", 0, "win_rate_expert", value=lambda v: v + 0.1 if v < 0.9 else v - 0.1),
     r"final\[0\].win_rate: .* is not the mean of win_rate_random, win_rate_greedy, win_rate_expert"),
    (_set("curves", 0, 3, "score", value=lambda s: s + 0.01), r"curves\[0\]\[3\].score: the file says"),
    (_set("curves", 1, value=lambda c: c[:-1]), r"curves\[1\]: points at steps"),
    (_set("curves", 1, 2, "timesteps", value=lambda t: t + 1), r"curves\[1\]: points at steps"),
    (_set("timesteps", value=lambda t: t * 2), "field timesteps"),
    (_set("seeds", value=lambda s: s[:-1]), "seeds"),
    (_set("seeds", value=lambda s: [x + 100 for x in s]), "field seeds"),
    (_set("final_deals", value=20), "field final_deals"),
    (_set("config", "num_envs", value=10**9), "field config"),
    (_set("track", value="no-such-track"), "not a track of the study config"),
]


@pytest.mark.parametrize(("edit", "reason"), BENCH_EDITS)
def test_an_edited_benchmark_scored_run_is_refused(tmp_path, study, edit, reason):
    path = _tree(tmp_path, BENCH)
    _edit(path, edit)
    with pytest.raises(StudyError, match=reason) as info:
        _audit(path, study)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(("edit", "reason"), [
    (_set("final", 0, "score", value=lambda s: s + 1e-3), r"final\[0\].score: the file says"),
    (_set("final", 0, "turns", value=0.5), "turns is impossible"),
    (_set("final", 0, value=lambda f: {**f, "turns": 1.0, "score": 9.0}), "above the highest score"),
])
def test_an_edited_turns_scored_run_is_refused(tmp_path, study, edit, reason):
    path = _tree(tmp_path, SOLO)
    _edit(path, edit)
    with pytest.raises(StudyError, match=reason):
        _audit(path, study)


def test_a_forged_run_that_is_consistent_but_impossible_is_refused(tmp_path, study):
    """Turns of less than one with the scores recomputed from them: every figure agrees
    with the others, and the run is still refused."""
    from memtab_env.study.scores import normalised_turns

    path = _tree(tmp_path, SOLO)
    run = json.loads(path.read_text())
    options = {**study.tracks[SOLO[0]].options, "memory": run["memory"]}
    for f in run["final"]:
        f["turns"] = 0.5
        f["score"] = normalised_turns(0.5, options)
    path.write_text(json.dumps(run))
    with pytest.raises(StudyError, match="turns is impossible"):
        _audit(path, study)


def test_a_refused_run_file_never_reaches_the_page(tmp_path, study):
    ok = _tree(tmp_path, SOLO)
    bad = _tree(tmp_path, BENCH)
    (tmp_path / BENCH[0]).mkdir()
    for anchor in ("random.json", "search.json"):  # the benchmark results that anchor the scores
        shutil.copy(ROOT / "results" / BENCH[0] / anchor, tmp_path / BENCH[0] / anchor)
    _edit(bad, _set("final", 0, "score", value=lambda s: s + 0.2))
    rejected = []
    runs = audited_study_runs(tmp_path, CONFIG, lambda p, e: rejected.append((p, str(e))))
    assert [r["_path"] for r in runs] == [ok]
    assert rejected[0][0] == bad and "final[0].score" in rejected[0][1]
    with pytest.raises(StudyError, match="final"):
        audited_study_runs(tmp_path, CONFIG)


def test_a_second_run_of_a_cell_is_refused_naming_the_first(tmp_path, study):
    """Two run files of one cell (an ablation left in the study's folder, a copy) would
    make the tables show whichever sorts last; the second is refused instead."""
    first = _tree(tmp_path, SOLO)
    copy = tmp_path / "study" / "ablation" / SOLO[0] / SOLO[1]
    copy.parent.mkdir(parents=True)
    shutil.copy(first, copy)
    rejected = []
    runs = collect_runs(tmp_path / "study", study, ROOT / "results",
                        lambda p, e: rejected.append((p, str(e))))
    assert [r["_path"] for r in runs] == [copy]  # sorted by path: ablation/ first
    assert rejected[0][0] == first
    assert "a second run of cell pelmanism-solo-none / none / GRU" in rejected[0][1]
    assert str(copy) in rejected[0][1]


def test_the_committed_study_holds_one_run_per_cell():
    runs = audited_study_runs(ROOT / "results", CONFIG)
    cells = [(r["track"], r["memory"], r["model"]) for r in runs]
    assert len(cells) == len(set(cells)) == 36


def test_without_the_study_config_nothing_is_shown_unaudited(tmp_path):
    _tree(tmp_path, SOLO)
    with pytest.raises(StudyError, match="audited against the study config"):
        audited_study_runs(tmp_path, tmp_path / "none.yaml")


@pytest.mark.parametrize(("edit", "reason"), [
    (None, None),
    (_set("final", 0, "score", value=lambda s: s + 0.01), r"final\[0\].score: the file says"),
    (_set("final", 1, "win_rate", value=1.5), r"final\[1\].win_rate: 1.5 is not a rate"),
    (_set("final_scale", value="leaderboard"), "final_scale must be one of"),
])
def test_finals_on_the_benchmark_scale_are_recomputed_from_their_win_rate(tmp_path, study, edit, reason):
    path = _tree(tmp_path, BENCH)
    assert json.loads(path.read_text())["final_scale"] == "benchmark"  # rescored from the proxy
    if edit is None:
        assert len(_audit(path, study)) == 1
        return
    _edit(path, edit)
    with pytest.raises(StudyError, match=reason):
        _audit(path, study)
