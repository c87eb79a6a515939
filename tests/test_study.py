"""The memory study (memtab_env.study): its config checks, scores, run files, the
leaderboard section, and one tiny study end to end."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from memtab_env import study
from memtab_env.study import StudyError

ROOT = Path(__file__).resolve().parents[1]


def _shipped() -> dict:
    return yaml.safe_load((ROOT / "configs" / "study.yaml").read_text())


def test_the_shipped_study_config_is_the_protocol_the_issue_asks_for() -> None:
    s = study.load_study(ROOT / "configs" / "study.yaml")
    assert len(s.seeds) == 5
    assert {m["memory_model"] for m in s.models.values()} >= {
        "MLP", "Stack", "LSTM", "GRU", "FFM", "Attention"} and (
        {"LRU", "S6"} & {m["memory_model"] for m in s.models.values()})
    assert set(s.memories) == {"none", "window:4"} and s.reference == {"model": "MLP", "memory": "perfect"}
    grid = [t for t, track in s.tracks.items() if not track.follow_up]
    assert set(grid) == {"pelmanism-solo-none", "memtab-2p-none", "pelmanism-2p-none"}
    cells = s.cells(tracks=grid)
    assert len(cells) == 3 * (2 * len(s.models) + 1)
    # the two-player Pelmanism track plays the deck and options of the benchmark track it
    # is scored on (its 1 is the exact optimum), less the memory model
    from memtab_env.protocol.tracks import TRACKS

    pel = s.tracks["pelmanism-2p-none"]
    bench = TRACKS[pel.scored_on]
    assert bench.strongest == "optimal" and {"random", "greedy"} <= set(bench.opponents)
    assert pel.options == {k: v for k, v in bench.options.items() if k != "memory"}
    assert ("memtab-2p-none", "perfect", "MLP") in cells
    assert len(s.cells(tracks=["memtab-2p-none"], models=["GRU"])) == 2


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(seeds=[0, 0]), "seeds must be distinct"),
    (lambda d: d.update(colour="red"), "unknown field"),
    (lambda d: d["models"]["GRU"].update(memory_size=3), "unknown field"),
    (lambda d: d["models"]["GRU"].update(recurrent_size=0), "recurrent_size must be a positive integer"),
    (lambda d: d.update(memories=["none", "sometimes"]), "memory 'sometimes'"),
    (lambda d: d.update(reference={"model": "Oracle", "memory": "perfect"}), "reference must be"),
    (lambda d: d["tracks"]["memtab-2p-none"].update(score="vibes"), "score must be one of"),
    (lambda d: d["tracks"]["memtab-2p-none"]["options"].update(memory="none"), "must not set memory"),
    (lambda d: d["tracks"].update({"no-such-track": {**d["tracks"]["memtab-2p-none"]}}),
     "needs a benchmark track of that id"),
    (lambda d: d["tracks"]["pelmanism-solo-none"].update(benchmark="memtab-2p-none"),
     "benchmark is for score 'benchmark' only"),
    (lambda d: d["tracks"]["pelmanism-solo-none"].update(timesteps="many"), "must be int"),
    (lambda d: d["tracks"]["pelmanism-solo-none"].update(models=["Telepathy"]),
     "models must be a list of distinct names among"),
    (lambda d: d["tracks"]["pelmanism-solo-none"].update(memories=["none", "none"]),
     "memories must be a list of distinct names among"),
    (lambda d: d["tracks"]["pelmanism-solo-none"].update(ppo="kinds"), "field 'ppo' must be dict"),
    (lambda d: d["tracks"]["pelmanism-solo-none"].update(ppo={"total_timesteps": 5}),
     r"ppo must not set \['total_timesteps'\]"),
    (lambda d: d["tracks"]["memtab-2p-none-latch"].update(init="memtab-2p-none-latch-more"),
     "init must name a track earlier in the config"),
    (lambda d: d["tracks"]["memtab-2p-none"].update(init="pelmanism-solo-none"),
     "a track with init is a follow-up"),
    (lambda d: d["tracks"]["memtab-2p-none-latch-more"].update(memories=["window:4"]),
     r"does not train the cell\(s\) \[\('window:4', 'GRU'\)\]"),
    (lambda d: d["tracks"]["memtab-2p-none-latch-more"].update(options={"num_players": 3}),
     "plays another game or options"),
])
def test_study_config_errors_name_the_field(change, message) -> None:
    data = copy.deepcopy(_shipped())
    change(data)
    with pytest.raises(StudyError, match=message):
        study.study_from_dict(data, "study.yaml")
    with pytest.raises(StudyError, match="unknown model"):
        study.study_from_dict(_shipped()).cells(models=["Telepathy"])


def test_a_follow_up_track_trains_only_the_cells_it_names() -> None:
    data = copy.deepcopy(_shipped())
    data["tracks"] = {"long": {**data["tracks"]["pelmanism-solo-none"], "timesteps": 10_000,
                               "models": ["GRU", "LRU"], "memories": ["none"]},
                      "pelmanism-solo-none": data["tracks"]["pelmanism-solo-none"]}
    s = study.study_from_dict(data)
    assert s.tracks["long"].follow_up and not s.tracks["pelmanism-solo-none"].follow_up
    assert s.cells(tracks=["long"]) == [("long", "none", "GRU"), ("long", "none", "LRU")]
    assert ("pelmanism-solo-none", "perfect", "MLP") in s.cells()
    # a follow-up of a benchmark track is scored on that track's deals and anchors
    data["tracks"]["memtab-long"] = {**_shipped()["tracks"]["memtab-2p-none"], "models": ["GRU"],
                                     "benchmark": "memtab-2p-none"}
    assert study.study_from_dict(data).tracks["memtab-long"].scored_on == "memtab-2p-none"


def test_a_track_s_ppo_fields_override_the_study_s_in_its_cells() -> None:
    pytest.importorskip("jax")
    pytest.importorskip("memax")
    from memtab_env.study.run import ppo_config

    data = copy.deepcopy(_shipped())
    data["tracks"]["memtab-2p-none"]["ppo"] = {"encoder": "kinds", "learning_rate": 1e-3}
    s = study.study_from_dict(data)
    config = ppo_config(s, s.tracks["memtab-2p-none"], "none", "GRU", seed=2)
    assert (config.encoder, config.learning_rate, config.seed) == ("kinds", 1e-3, 2)
    assert config.num_envs == data["ppo"]["num_envs"]  # the study's, not overridden
    other = ppo_config(s, s.tracks["pelmanism-solo-none"], "none", "GRU")
    assert (other.encoder, other.learning_rate) == (data["ppo"]["encoder"], data["ppo"]["learning_rate"])
    data["tracks"]["memtab-2p-none"]["ppo"] = {"encoder": "hologram"}
    s = study.study_from_dict(data)
    with pytest.raises(StudyError, match="cell memtab-2p-none / none / GRU: encoder must be one of"):
        ppo_config(s, s.tracks["memtab-2p-none"], "none", "GRU")


def test_a_model_s_width_overrides_the_study_s_and_the_track_s() -> None:
    pytest.importorskip("jax")
    pytest.importorskip("memax")
    from memtab_env.study.run import ppo_config

    data = copy.deepcopy(_shipped())
    data["models"]["GRU"]["recurrent_size"] = 24
    data["tracks"]["memtab-2p-none"]["ppo"] = {"recurrent_size": 40}
    s = study.study_from_dict(data)
    assert ppo_config(s, s.tracks["memtab-2p-none"], "none", "GRU").recurrent_size == 24
    assert ppo_config(s, s.tracks["memtab-2p-none"], "none", "LSTM").recurrent_size == 40
    assert ppo_config(s, s.tracks["pelmanism-solo-none"], "none", "LSTM").recurrent_size == 32


@pytest.mark.parametrize("config", ["study_memtab.yaml", "study_pelmanism.yaml"])
def test_the_grid_configs_compare_ten_architectures_at_comparable_sizes(config: str) -> None:
    """``configs/study_memtab.yaml`` and ``study_pelmanism.yaml``: at least 10 memax
    architectures, memories ``none`` and a second model, the perfect-memory reference, 10
    seeds, and parameter counts within 25% of each other (the widths are chosen per
    architecture)."""
    pytest.importorskip("jax")
    pytest.importorskip("memax")
    from memtab_env.jax.ppo import count_parameters, make_policy
    from memtab_env.study.run import ppo_config

    s = study.load_study(ROOT / "configs" / config)
    assert len(s.seeds) == 10 and len({m["memory_model"] for m in s.models.values()}) >= 10
    assert s.memories[0] == "none" and len(s.memories) == 2
    assert s.reference == {"model": "MLP", "memory": "perfect"}
    (track_id, track), = [(t, k) for t, k in s.tracks.items() if not k.follow_up]
    counts = {m: count_parameters(make_policy(ppo_config(s, track, "none", m))) for m in s.models}
    assert max(counts.values()) <= 1.25 * min(counts.values()), counts


def test_the_pelmanism_grid_trains_the_memtab_grids_architectures_and_recipe() -> None:
    """``configs/study_pelmanism.yaml`` copies the MemTab grid's architectures, widths,
    memories and network fields (YAML has no include): held equal here, so that the two
    grids stay readable side by side."""
    memtab = study.load_study(ROOT / "configs" / "study_memtab.yaml")
    pelmanism = study.load_study(ROOT / "configs" / "study_pelmanism.yaml")
    assert pelmanism.models == memtab.models and pelmanism.memories == memtab.memories
    assert pelmanism.seeds == memtab.seeds and pelmanism.reference == memtab.reference
    assert pelmanism.ppo == {k: v for k, v in memtab.ppo.items() if k != "opponent_switches"}


@pytest.mark.parametrize(("results", "config"), study.COMMITTED_STUDIES)
def test_every_committed_run_file_was_trained_as_its_config_trains_the_cell(results: str, config: str
                                                                            ) -> None:
    """A study resumes by keeping the cells that have a run file: each committed one must
    be the cell its config trains now (seeds and every PPO field), or a rerun would keep a
    cell trained by another recipe."""
    pytest.importorskip("jax")
    from memtab_env.study.run import kept_run_differences

    s = study.load_study(ROOT / config)
    kept = [(cell, study.run_path(ROOT / "results" / results, *cell)) for cell in s.cells()]
    kept = [(cell, path) for cell, path in kept if path.exists()]
    assert kept
    for cell, path in kept:
        assert kept_run_differences(s, *cell, path) == [], path


def test_solo_scores_run_from_random_play_to_the_exact_optimum() -> None:
    from memtab_env.games.pelmanism.values import solo_optimal_expected_turns

    options = {"deck": "pairs:6"}
    assert study.solo_turns_bounds(options) == (36.0, pytest.approx(9.162481962481962))
    assert study.normalised_turns(36.0, options) == pytest.approx(0.0)
    assert study.normalised_turns(float(solo_optimal_expected_turns(6)), options) == pytest.approx(1.0)
    with pytest.raises(StudyError, match="deck of pairs"):
        study.solo_turns_bounds({"deck": "quartets:3"})


def test_benchmark_anchors_come_from_the_committed_results() -> None:
    (low, high), opponents = study.benchmark_anchors("memtab-2p-none", ROOT / "results")
    assert opponents == ["random", "greedy"]
    runs = {a: json.loads((ROOT / "results" / "memtab-2p-none" / f"{a}.json").read_text())["runs"][0]
            for a in ("random", "search")}
    assert low == pytest.approx(np.mean([runs["random"]["opponents"][o]["win_rate"] for o in opponents]))
    assert high == pytest.approx(np.mean([runs["search"]["opponents"][o]["win_rate"] for o in opponents]))
    assert 0 < low < high < 1


def _run(track: str, memory: str, model: str, scores: list[float]) -> dict:
    return {"format": study.RUN_FORMAT, "track": track, "memory": memory, "model": model,
            "description": "d.", "seeds": list(range(len(scores))), "timesteps": 1000,
            "final": [{"score": s} for s in scores],
            "curves": [[{"timesteps": 0, "score": 0.0}, {"timesteps": 1000, "score": s}] for s in scores]}


def test_run_files_are_checked_as_untrusted_data(tmp_path: Path) -> None:
    good = _run("memtab-2p-none", "none", "GRU", [0.1, 0.2, 0.3])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(good))
    assert study.load_run(path)["model"] == "GRU"
    for bad, message in [
        ({**good, "format": "memtab-study-run/9"}, "format must be"),
        ({**good, "final": good["final"][:2]}, "one entry per seed"),
        ({**good, "final": [{"score": float("nan")}] * 3}, "must be finite|NaN is not a JSON number"),
        ({**good, "curves": [[{"timesteps": "0", "score": 0.0}]] * 3}, "curves"),
        ({k: v for k, v in good.items() if k != "model"}, "missing field 'model'"),
        ({**good, "follow_up": "yes"}, "follow_up must be true or false"),
        ({**good, "final_scale": "mine"}, "final_scale must be one of"),
    ]:
        path.write_text(json.dumps(bad))
        with pytest.raises(StudyError, match=message):
            study.load_run(path)


def test_the_leaderboard_section_ranks_cells_by_iqm_with_intervals() -> None:
    runs = [_run("memtab-2p-none", "none", "GRU", [0.1, 0.2, 0.3, 0.4, 0.5]),
            _run("memtab-2p-none", "none", "MLP", [0.0, 0.0, 0.1, 0.0, 0.0]),
            _run("pelmanism-solo-none", "none", "GRU", [0.8, 0.9, 0.85, 0.7, 0.95]),
            _run("pelmanism-solo-none", "none", "MLP", [0.0, 0.01, 0.0, -0.01, 0.0])]
    lines = study.leaderboard_section(runs)
    text = "\n".join(lines)
    assert lines[0] == "## Memory study"
    table = [ln for ln in lines if ln.startswith("| 1 |") or ln.startswith("| 2 |")]
    assert "GRU" in table[0] and "MLP" in table[1]  # ranked by IQM
    # IQM of 0.1 .. 0.5 (trim a quarter each side): mean of 0.2, 0.3, 0.4
    assert "| 1 | `none` | GRU | 5 | 0.30 |" in text
    # across tracks: ranks, not pooled scores (the tracks' anchors differ)
    across = text.split("### Ranks across tracks")[1]
    assert "| `none` | GRU | 1 | 1 | 1.0 |" in across and "| `none` | MLP | 2 | 2 | 2.0 |" in across
    assert study.leaderboard_section([]) == []
    # the committed section names the committed run files; a user's tables name their own
    assert "run files under `results/study/`" in text and "--config configs/study.yaml`" in text
    mine = "\n".join(study.leaderboard_section(runs, "runs/study/mine/", "mine.yaml"))
    assert "run files under `runs/study/mine/`" in mine and "--config mine.yaml`" in mine
    # the text names the network the runs trained (run files without the field: `set`)
    assert "a memory per position behind the set encoder" in text
    kinds = [{**run, "config": {"encoder": "kinds"}} for run in runs]
    assert "behind the kinds encoder" in "\n".join(study.leaderboard_section(kinds))
    # a follow-up track is ranked on its own and left out of the across-tracks table
    long = {**_run("pelmanism-long", "none", "GRU", [0.9] * 5), "follow_up": True}
    text = "\n".join(study.leaderboard_section([*runs, long]))
    assert "### pelmanism-long" in text
    assert "pelmanism-long" not in text.split("### Ranks across tracks")[1]
    assert "### Ranks across tracks" not in "\n".join(study.leaderboard_section(runs[:2] + [long]))


def test_curves_are_drawn_as_the_iqm_with_its_bootstrap_interval_clipped_at_the_floor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    from memtab_env.study import figures

    # points: all seeds alike; 0.1 .. 0.5 (IQM 0.30); one seed collapsed far below random
    scores = np.array([[0.5, 0.1, 0.6], [0.5, 0.2, 0.6], [0.5, 0.3, -19.0], [0.5, 0.4, 0.6],
                       [0.5, 0.5, 0.6]])
    centre, lo, hi = figures.curve_band(scores)
    np.testing.assert_allclose(centre, [0.5, 0.3, 0.6])
    assert lo[0] == hi[0] == 0.5
    assert 0.1 < lo[1] < 0.3 < hi[1] < 0.5
    assert lo[2] < figures.FLOOR and hi[2] == pytest.approx(0.6)
    run = {"track": "t", "memory": "none", "model": "GRU",
           "curves": [[{"timesteps": 16 * j, "score": float(v)} for j, v in enumerate(seed)]
                      for seed in scores]}
    drawn = []
    monkeypatch.setattr(plt, "close", drawn.append)
    assert figures.draw_curves([run], tmp_path) == [tmp_path / "t.png"]
    (ax,) = drawn[0].axes
    assert ax.get_ylim()[0] == pytest.approx(figures.FLOOR - 0.05)
    assert "clipped at -1" in ax.get_ylabel()
    assert ax.xaxis.get_major_formatter()(400_000) == "400k"  # ticks that do not run together
    styles = [tuple(figures.line_style(i).values()) for i in range(30)]
    assert len(set(styles)) == 30  # 13 architectures are 13 lines told apart
    (line,) = ax.get_lines()[:1]
    np.testing.assert_allclose(line.get_ydata(), centre)
    run["curves"][2][2]["score"] = 0.6
    drawn.clear()
    figures.draw_curves([run], tmp_path)
    assert "clipped" not in drawn[0].axes[0].get_ylabel()


def test_final_scores_are_drawn_per_cell_as_the_iqm_its_interval_and_every_seed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    from memtab_env.study import figures

    runs = [_run("t", "none", "GRU", [0.1, 0.2, 0.3, 0.4, 0.5]),
            _run("t", "none", "MLP", [0.0, 0.0, 0.1, -0.1, -30.0]),
            _run("t", "window:4", "GRU", [0.9, 0.9, 0.8, 0.95, 0.85]),
            _run("u", "none", "GRU", [0.5] * 3)]
    drawn = []
    monkeypatch.setattr(plt, "close", drawn.append)
    assert figures.draw_finals(runs, tmp_path) == [tmp_path / "t-final.png", tmp_path / "u-final.png"]
    assert (tmp_path / "t-final.png").read_bytes()[:4] == b"\x89PNG"
    (ax,) = drawn[0].axes
    # the architectures in the order of the runs, one colour per memory model side by side
    assert [t.get_text() for t in ax.get_xticklabels()] == ["GRU", "MLP"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["memory none", "memory window:4"]
    cells = study.aggregate(runs)
    centres = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert len(centres) == 3
    for line, key in zip(centres, [("t", "none", "GRU"), ("t", "none", "MLP"), ("t", "window:4", "GRU")],
                         strict=True):
        assert line.get_ydata()[0] == pytest.approx(cells[key]["iqm"])
    (x_none, x_window) = (centres[0].get_xdata()[0], centres[2].get_xdata()[0])
    assert x_none < 0 < x_window  # GRU's two memory models either side of its tick
    # every seed a dot, the collapsed one drawn on the floor, and the axis says so
    dots = [c.get_offsets() for c in ax.collections if len(c.get_offsets()) == 5]
    assert len(dots) == 3
    np.testing.assert_allclose(np.asarray(dots[1])[:, 1], [0.0, 0.0, 0.1, -0.1, figures.FLOOR])
    assert len(set(np.asarray(dots[0])[:, 0])) == 5  # spread, not piled on one x
    assert "below -1" in ax.get_ylabel() and ax.get_ylim()[0] == pytest.approx(figures.FLOOR - 0.05)
    assert "below" not in drawn[1].axes[0].get_ylabel()
    assert drawn[1].axes[0].get_ylim()[0] == pytest.approx(-0.05)  # down to random play only

def test_a_tiny_study_trains_scores_saves_playable_policies_and_reports(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("memax")
    pytest.importorskip("matplotlib")
    import shutil

    from memtab_env.agents import make as make_agent

    from memtab_env.study.run import main

    results = tmp_path / "results"
    # the track's two anchors only: the leaderboard replays every game record it is given
    (results / "memtab-2p-none").mkdir(parents=True)
    for name in ("random.json", "random.records.jsonl.gz", "search.json", "search.records.jsonl.gz"):
        shutil.copy(ROOT / "results" / "memtab-2p-none" / name, results / "memtab-2p-none" / name)
    config = tmp_path / "study.yaml"
    config.write_text(yaml.safe_dump({
        "seeds": [0, 1],
        "models": {"GRU": {"memory_model": "GRU"}, "MLP": {"memory_model": "MLP"}},
        "memories": ["none"],
        "reference": {"model": "MLP", "memory": "perfect"},
        "ppo": {"num_envs": 4, "num_steps": 4, "num_minibatches": 2, "update_epochs": 1,
                "recurrent_size": 8, "set_layers": 1},
        "curve_points": 2, "curve_deals": 4, "final_deals": 6,
        "tracks": {
            "pelmanism-solo-none": {"env_id": "Pelmanism-v0", "score": "solo-turns", "timesteps": 32,
                                    "options": {"num_players": 1, "deck": "pairs:3", "reward": "turns"}},
            "memtab-2p-none": {"env_id": "MemTab-v0", "score": "benchmark", "timesteps": 16,
                               "options": {"num_players": 2}},
            "memtab-more": {"env_id": "MemTab-v0", "score": "benchmark", "timesteps": 16,
                            "benchmark": "memtab-2p-none", "options": {"num_players": 2},
                            "models": ["GRU"], "memories": ["none"], "init": "memtab-2p-none"}}}))
    args = ["--config", str(config), "--results", str(results), "--figures", str(tmp_path / "fig"),
            "--leaderboard", str(tmp_path / "LEADERBOARD.md"), "--models", "GRU", "--write-committed"]
    # a track that trains on from another needs that track's run first
    assert main([*args, "--tracks", "memtab-more"]) == 2
    assert "memtab-more / none / GRU starts from" in capsys.readouterr().out
    assert main(args) == 0
    runs = study.collect_runs(results / "study")
    assert [(r["track"], r["memory"], r["model"]) for r in runs] == [
        ("memtab-2p-none", "none", "GRU"), ("memtab-more", "none", "GRU"),
        ("pelmanism-solo-none", "none", "GRU")]
    first, more = runs[0], runs[1]
    # a benchmark track's final scores are the benchmark's own (every opponent, expert too)
    assert first["final_scale"] == "benchmark" and "win_rate_expert" in first["final"][0]
    from memtab_env.study.scores import benchmark_score

    zip0 = results / "study" / "memtab-2p-none" / first["policies"][0]
    assert first["final"][0] == benchmark_score(zip0, "memtab-2p-none", 6)
    import jax

    # each run file says what trained it: a rerun elsewhere is compared knowing that
    assert first["platform"]["versions"]["jax"] == jax.__version__
    assert first["platform"]["devices"].startswith(f"{len(jax.devices())} x ")
    # it starts from the other track's trained policies: its first curve point is their
    # last (the same weights on the same deals), and its steps count on from theirs
    assert more["init"] == {"track": "memtab-2p-none", "timesteps": 16} and more["timesteps"] == 32
    # one update of 16 steps, so its two curve points are its start and its end
    assert [p["timesteps"] for p in more["curves"][0]] == [16, 32]
    for a, b in zip(first["curves"], more["curves"], strict=True):
        assert b[0] == a[-1]
    from memtab_env.study.figures import earlier_runs

    assert earlier_runs(more, runs) == [first] and earlier_runs(first, runs) == []
    assert (tmp_path / "fig" / "memtab-more.png").read_bytes()[:4] == b"\x89PNG"
    solo = next(r for r in runs if r["track"] == "pelmanism-solo-none")
    assert [p["timesteps"] for p in solo["curves"][0]] == [0, 16, 32]
    assert solo["final"][0]["score"] == pytest.approx(study.normalised_turns(solo["final"][0]["turns"],
                                                                              {"deck": "pairs:3"}))
    agent = make_agent(str(results / "study" / "pelmanism-solo-none" / solo["policies"][1]))
    assert agent.config.seed == 1 and agent.config.env_options["memory"] == "none"
    assert (tmp_path / "fig" / "memtab-2p-none.png").read_bytes()[:4] == b"\x89PNG"
    board = (tmp_path / "LEADERBOARD.md").read_text()
    assert "## Memory study" in board and "### pelmanism-solo-none" in board
    # a user's copy of the study (its own --out) gets its tables: the ranks, then every cell
    shutil.copytree(results / "study", tmp_path / "mine")
    assert main([*args[:-1], "--out", str(tmp_path / "mine"), "--leaderboard", "", "--report-only"]) == 0
    tables = (tmp_path / "mine" / "study.md").read_text()
    assert "### pelmanism-solo-none: every cell" in tables
    row = next(line for line in tables.split("every cell")[-1].splitlines() if line.startswith("| `none`"))
    assert row.startswith(f"| `none` | GRU | {solo['parameters']:,} | **")
    assert "| win rate vs `random` |" in tables.split("### memtab-2p-none: every cell")[1]
    # a kept cell is not trained again; a broken run file is an error, not a silent skip
    assert main([*args, "--tracks", "pelmanism-solo-none"]) == 0
    (results / "study" / "memtab-2p-none" / "none__GRU.json").write_text('{"format": "memtab-study-run/1"}')
    assert main([*args, "--report-only"]) == 2


#: the MemTab recipe ablations whose figures docs/study.md (and the README, where it
#: quotes them) writes by hand: each run file's IQM, interval and every seed
MEMTAB_ABLATIONS = {
    "memtab-grid-reference-1m/random-throughout": ("perfect__MLP", True),
    "memtab-grid-reference-1m/greedy-from-100k+score-mix": ("perfect__MLP", True),
    "memtab-grid-reference-1m/greedy-from-100k": ("perfect__MLP", True),
    "memtab-grid-gru-none-1m/greedy-from-100k+score-mix": ("none__GRU", True),
    "memtab-grid-gru-none-1m/greedy-from-100k+perfect-memory-to-300k": ("none__GRU", False),
    "memtab-grid-gru-none-300k/greedy-from-100k+recall": ("none__GRU", False),
}


#: the grids' committed cells the README quotes too: every MemTab cell, some Pelmanism ones
GRID_IN_README = {
    f"memtab-2p-none-grid/{path.stem}"
    for path in (ROOT / "results/grid/memtab-2p-none-grid").glob("*.json")} | {
    f"pelmanism-solo-none-grid/none__{model}"
    for model in ("GRU", "DeltaNet", "Attention", "Window4", "MLP")} | {
    f"pelmanism-solo-none-grid/window4__{model}" for model in ("Attention", "MLP")}


@pytest.mark.parametrize("path", sorted(ROOT.glob("results/grid*/*/*.json")),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_docs_quote_every_committed_grid_cell_as_its_run_file_says(path: Path) -> None:
    """docs/study.md gives every committed cell of the grids (MemTab, Pelmanism solo) its
    IQM, interval and every seed, recomputed here from the run file (and the README the
    cells it quotes)."""
    from memtab_env.study.tables import aggregate

    run = study.load_run(path)
    (stats,) = aggregate([run]).values()
    iqm = f"{stats['iqm']:.2f} [{stats['lo']:.2f}, {stats['hi']:.2f}]"
    seeds = ", ".join(f"{f['score']:.2f}" for f in run["final"])
    docs = " ".join((ROOT / "docs/study.md").read_text().split())
    assert iqm in docs and seeds in docs, (iqm, seeds)
    if f"{path.parent.name}/{path.stem}" in GRID_IN_README:
        assert iqm in " ".join((ROOT / "README.md").read_text().split()), iqm


@pytest.mark.parametrize("variant", sorted(MEMTAB_ABLATIONS))
def test_the_docs_quote_the_memtab_ablations_as_their_run_files_say(variant: str) -> None:
    from memtab_env.study.tables import aggregate

    cell, in_readme = MEMTAB_ABLATIONS[variant]
    run = study.load_run(ROOT / "results/ablation" / variant / "memtab-2p-none-grid" / f"{cell}.json")
    (stats,) = aggregate([run]).values()
    iqm = f"{stats['iqm']:.2f} [{stats['lo']:.2f}, {stats['hi']:.2f}]"
    seeds = ", ".join(f"{f['score']:.2f}" for f in run["final"])
    docs = " ".join((ROOT / "docs/study.md").read_text().split())
    assert iqm in docs and seeds in docs, (iqm, seeds)
    if in_readme:
        assert iqm in " ".join((ROOT / "README.md").read_text().split()), iqm


def test_the_docs_cell_tables_are_the_run_files_tables() -> None:
    """docs/study.md's generated tables of the grids' cells are current: `python -m
    memtab_env.study.doc_tables docs/study.md` rewrites them from the run files."""
    from memtab_env.study.doc_tables import render_cell_blocks

    text = (ROOT / "docs/study.md").read_text()
    assert text.count("<!-- cells: ") == 2  # the MemTab grid and the Pelmanism grid
    assert text.count("<!-- reruns: ") == 1  # the Pelmanism grid on seeds 10 to 19
    assert render_cell_blocks(text, ROOT) == text, "run: python -m memtab_env.study.doc_tables docs/study.md"


def _detailed(memory: str, model: str, finals: list[dict], recall: list[list[float]] | None,
              curve: list[list[float]]) -> dict:
    steps = [1024 * (k + 1) for k in range(len(curve[0]))]
    run = {**_run("t", memory, model, [f["score"] for f in finals]), "final": finals,
           "parameters": 12345, "seconds": 1234.4,
           "curves": [[{"timesteps": t, "score": s} for t, s in zip(steps, seed, strict=True)]
                      for seed in curve]}
    if recall is not None:
        run["training"] = [[{"timesteps": t, "recall_accuracy": r} for t, r in zip(steps, seed, strict=True)]
                           for seed in recall]
    return run


def test_the_cell_table_reads_every_column_from_the_run_file() -> None:
    from memtab_env.study.tables import cells_table

    solo = [{"score": 0.5, "turns": 20.0}, {"score": 1.0, "turns": 9.0}, {"score": 0.9, "turns": 12.0}]
    # median recall 0.5, 0.995, 0.98 (a dip: not yet held), 0.995, 1.0 -> held from step 4,096
    recall = [[0.5, 0.995, 0.98, 0.995, 1.0], [0.4, 0.999, 0.97, 0.99, 1.0], [0.6, 0.99, 0.99, 1.0, 1.0]]
    # median curve 0.1, 0.92 (first at 0.9 or more), 0.85, 0.95, 0.95
    curve = [[0.1, 0.92, 0.85, 0.95, 0.95], [0.0, 0.95, 0.8, 0.9, 0.9], [0.2, 0.5, 0.9, 1.0, 1.0]]
    header, rule, row = cells_table([_detailed("none", "GRU", solo, recall, curve)])
    assert header.split(" | ")[4:6] == ["every seed (0 to 2)", "mean turns per seed"]
    assert rule == "|" + " --- |" * 9
    cells = row.strip("| ").split(" | ")
    assert cells == ["`none`", "GRU", "12,345", "**0.80 [0.50, 1.00]**", "0.50, 1.00, 0.90",
                     "9.00 to 20.00", "4,096", "2,048", "1,234 s"]
    # a level no curve point reaches, a recall never held, the perfect-memory reference
    (row,) = cells_table([_detailed("none", "GRU", solo, [[0.5] * 5] * 3, curve)], 0.99)[2:]
    assert row.endswith("| never | never | 1,234 s |")
    (row,) = cells_table([_detailed("perfect", "MLP", solo, [[0.0] * 5] * 3, curve)])[2:]
    assert "| (nothing to recall) |" in row
    # a file written before the training log, the parameter count and the wall clock
    old = _detailed("none", "GRU", solo, None, curve)
    del old["parameters"], old["seconds"]
    (row,) = cells_table([old])[2:]
    assert row.count("not recorded") == 3
    ragged = _detailed("none", "GRU", solo, recall, curve)
    ragged["training"][1] = ragged["training"][1][:3]
    assert "| not recorded |" in cells_table([ragged])[2]
    # a benchmark-scored cell: the win rate against each reference opponent, its range
    bench = [{"score": s, "win_rate_random": 0.99, "win_rate_greedy": g, "win_rate_expert": 0.4}
             for s, g in ((0.8, 0.5), (0.85, 0.6), (0.9, 0.55))]
    scored = {**_detailed("none", "GRU", bench, recall, curve), "final_scale": "benchmark"}
    header, _, row = cells_table([scored])
    assert header.split(" | ")[5:8] == ["win rate vs `random`", "vs `greedy`", "vs `expert`"]
    assert row.split(" | ")[5:8] == ["0.99", "0.50 to 0.60", "0.40"]
    assert cells_table([]) == []


def test_doc_tables_rewrites_stale_blocks_and_checks_them(tmp_path: Path, monkeypatch, capsys) -> None:
    from memtab_env.study.doc_tables import main

    monkeypatch.chdir(ROOT)
    doc = tmp_path / "doc.md"
    stale = ("# Grid\n\n<!-- cells: results/grid-pelmanism config=configs/study_pelmanism.yaml -->\n"
             "| an old table |\n<!-- /cells -->\n\nAfter.\n")
    doc.write_text(stale)
    assert main(["--check", str(doc)]) == 1 and doc.read_text() == stale
    assert f"{doc}: not current" in capsys.readouterr().out
    assert main([str(doc)]) == 0
    text = doc.read_text()
    assert "| an old table |" not in text and text.endswith("<!-- /cells -->\n\nAfter.\n")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == 27  # in the config's order
    assert rows[0].startswith("| `none` | MLP |") and rows[-1].startswith("| `perfect` | MLP |")
    assert main(["--check", str(doc)]) == 0
    (tmp_path / "plain.md").write_text("no tables\n")
    with pytest.raises(SystemExit):
        main([str(tmp_path / "plain.md")])
    assert "holds no '<!-- cells: FOLDER config=CONFIG -->' or" in capsys.readouterr().err


def test_the_reruns_table_sets_each_rerun_beside_its_committed_cell() -> None:
    from memtab_env.study.tables import reruns_table

    def cell(model: str, scores: list[float], first_seed: int) -> dict:
        seeds = list(range(first_seed, first_seed + len(scores)))
        return {**_run("t", "none", model, scores), "seeds": seeds}

    committed = [cell(m, [0.5] * 4, 0) for m in ("GRU", "LSTM", "FFM", "LRU", "S6")]  # each [0.50, 0.50]
    reruns = [cell("GRU", [0.5] * 4, 10),  # the same IQM: inside
              cell("LSTM", [0.5002] * 4, 10),  # a hair above: outside, inside at two decimals
              cell("FFM", [0.3] * 4, 10),  # far below, its interval apart
              cell("LRU", [0.52, 0.52, 0.52, 0.40], 10),  # IQM 0.52 above; interval [0.40, 0.52] overlaps
              cell("S6", [0.50003] * 4, 10)]  # too close to show at four decimals
    header, rule, *rows, blank, counts = reruns_table(committed, reruns)
    assert blank == ""
    assert counts == ("Of 5 reruns, 1 have their IQM inside the committed interval at full precision, "
                      "3 at two decimals; 2 of the 5 intervals overlap the committed one.")
    assert header.split(" | ")[2:4] == ["committed IQM [95%], seeds 0 to 3",
                                        "rerun IQM [95%], seeds 10 to 13"]
    assert rule == "|" + " --- |" * 7
    assert [row.strip("| ").split(" | ")[1:] for row in rows] == [
        ["GRU", "0.50 [0.50, 0.50]", "**0.50 [0.50, 0.50]**", "0.50, 0.50, 0.50, 0.50", "yes", "yes"],
        ["LSTM", "0.50 [0.50, 0.50]", "**0.50 [0.50, 0.50]**", "0.50, 0.50, 0.50, 0.50",
         "no: 0.0002 above (inside at two decimals)", "no"],
        ["FFM", "0.50 [0.50, 0.50]", "**0.30 [0.30, 0.30]**", "0.30, 0.30, 0.30, 0.30",
         "no: 0.2000 below", "no"],
        ["LRU", "0.50 [0.50, 0.50]", "**0.52 [0.40, 0.52]**", "0.52, 0.52, 0.52, 0.40",
         "no: 0.0200 above", "yes"],
        ["S6", "0.50 [0.50, 0.50]", "**0.50 [0.50, 0.50]**", "0.50, 0.50, 0.50, 0.50",
         "no: under 0.0001 above (inside at two decimals)", "no"]]
    with pytest.raises(ValueError, match="rerun of t / none / MGU has no committed run file"):
        reruns_table(committed, [cell("MGU", [0.5] * 4, 10)])
    assert reruns_table(committed, []) == []


def test_placement_reads_an_interval_at_full_precision_and_at_two_decimals() -> None:
    from memtab_env.study.tables import Placement, placement

    assert placement(0.5, 0.5, 0.6) == Placement(True, True, "yes")  # on an end is inside
    assert placement(0.6, 0.5, 0.6) == Placement(True, True, "yes")
    assert placement(0.4951, 0.4960, 0.6) == Placement(
        False, True, "no: 0.0009 below (inside at two decimals)")
    assert placement(0.4949, 0.4960, 0.6) == Placement(False, False, "no: 0.0011 below")
    assert placement(0.61, 0.5, 0.6) == Placement(False, False, "no: 0.0100 above")


def test_doc_tables_rewrites_a_stale_reruns_block(tmp_path: Path, monkeypatch) -> None:
    from memtab_env.study.doc_tables import main

    monkeypatch.chdir(ROOT)
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- reruns: results/ablation/pelmanism-grid-seeds-10-19 against=results/grid-pelmanism "
                   "config=configs/study_pelmanism.yaml -->\n| an old table |\n<!-- /reruns -->\n")
    assert main(["--check", str(doc)]) == 1
    assert main([str(doc)]) == 0 and main(["--check", str(doc)]) == 0
    rows = [line for line in doc.read_text().splitlines() if line.startswith("| `")]
    assert rows and rows[0].startswith("| `none` |")  # in the config's order
    assert "| an old table |" not in doc.read_text()


#: the committed run files trained before run files recorded the platform that trained
#: them (docs/study.md, "What a rerun reproduces"); the MemTab ones record the platform
#: that re-scored them (``final_platform``). No other run file may lack ``platform``.
TRAINED_BEFORE_THE_PLATFORM_FIELD = {
    "results/rerun/study/pelmanism-solo-none-long/none__GRU.json",
    "results/rerun/study/pelmanism-solo-none/none__GRU.json",
    *(f"results/study/{track}/none__GRU.json" for track in (
        "memtab-2p-none-latch-greedy-more", "memtab-2p-none-latch-greedy", "memtab-2p-none-latch-more",
        "memtab-2p-none-latch", "memtab-2p-none-long", "pelmanism-solo-none-long")),
    *(f"results/study/{track}/{memory}__{model}.json" for track in ("memtab-2p-none", "pelmanism-solo-none")
      for memory in ("none", "window4")
      for model in ("Attention", "FFM", "GRU", "LRU", "LSTM", "MLP", "Window4")),
    "results/study/memtab-2p-none/perfect__MLP.json", "results/study/pelmanism-solo-none/perfect__MLP.json",
}


def test_every_committed_run_file_records_the_platform_that_trained_it() -> None:
    lacking, rescored = set(), set()
    for path in sorted((ROOT / "results").rglob("*.json")):
        run = json.loads(path.read_text())
        if isinstance(run, dict) and run.get("format") == study.RUN_FORMAT and "platform" not in run:
            name = path.relative_to(ROOT).as_posix()
            lacking.add(name)
            if "final_platform" in run:
                rescored.add(name)
    assert len(TRAINED_BEFORE_THE_PLATFORM_FIELD) == 38
    assert lacking == TRAINED_BEFORE_THE_PLATFORM_FIELD, (
        "a run file without `platform` that is not one of the 38 older ones: "
        f"{sorted(lacking - TRAINED_BEFORE_THE_PLATFORM_FIELD)}; listed but recording it now: "
        f"{sorted(TRAINED_BEFORE_THE_PLATFORM_FIELD - lacking)}")
    assert rescored == {name for name in lacking if "/memtab-2p-none" in name}
