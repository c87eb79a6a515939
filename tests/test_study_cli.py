"""``memtab study`` for a user: options with the valid names in their help, a progress
line per cell before it compiles, a smoke preset, and a user's run kept out of the
committed study (no training here: the cells are stubbed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from memtab_env.study import load_study, normalised_turns
from memtab_env.study import run as study_run

ROOT = Path(__file__).resolve().parents[1]
CONFIG = {
    "seeds": [0, 1],
    "models": {"GRU": {"memory_model": "GRU"}, "MLP": {"memory_model": "MLP"}},
    "memories": ["none"],
    "reference": {"model": "MLP", "memory": "perfect"},
    "tracks": {"solo": {"env_id": "Pelmanism-v0", "score": "solo-turns", "timesteps": 32,
                        "options": {"num_players": 1, "deck": "pairs:3", "reward": "turns"}}},
}


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> list:
    """A user's folder with a study config ``mine.yaml``; ``run_cell`` stubbed: the list
    gets (track, memory, model, seeds, timesteps, out, output printed before the call)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(CONFIG))
    calls: list = []

    def fake_run_cell(study, track, memory, model, out, results, log=print):
        calls.append((track, memory, model, study.seeds, study.tracks[track].timesteps, out,
                      capsys.readouterr().out))
        log(f"{track} {memory} {model}: final IQM +0.000")
        return {}

    monkeypatch.setattr(study_run, "run_cell", fake_run_cell)
    return calls


def test_the_help_lists_the_valid_names(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(CONFIG))
    with pytest.raises(SystemExit):
        study_run.main(["--config", str(tmp_path / "mine.yaml"), "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "only these memory architectures (default: all): GRU, MLP" in text
    assert "only these env memory models (default: all): none, perfect" in text
    assert "only these tracks (default: all): solo" in text
    assert "--seeds N" in text and "--timesteps STEPS" in text and "smoke" in text


def test_a_user_run_writes_its_own_folder_with_a_line_per_cell(
        user: list, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert study_run.main(["--config", "mine.yaml", "--seeds", "3", "--timesteps", "64"]) == 0
    out = Path("runs") / "study" / "mine"
    assert [c[:6] for c in user] == [("solo", "none", "GRU", (0, 1, 2), 64, out),
                                     ("solo", "none", "MLP", (0, 1, 2), 64, out),
                                     ("solo", "perfect", "MLP", (0, 1, 2), 64, out)]
    # the line of a cell comes before it compiles, numbered among the cells
    assert user[0][6].strip().endswith("[1/3] solo none GRU: 3 seed(s) x 64 steps; compiling "
                                       "(the first update; cached for reruns) ...")
    assert "[2/3] solo none MLP: final IQM +0.000" in user[2][6]
    assert (tmp_path / out / "study.md").is_file()
    assert not (tmp_path / "results").exists() and not (tmp_path / "LEADERBOARD.md").exists()


def _kept_gru_run() -> tuple[Path, dict, dict]:
    """A run file of cell solo / none / GRU of ``mine.yaml``, trained as it trains the
    cell, written where a user's run keeps it: (path, run, the cell's PPO config)."""
    study = load_study("mine.yaml")
    config = study_run.ppo_config(study, study.tracks["solo"], "none", "GRU").to_json()
    options = study.tracks["solo"].options
    finals = [{"score": normalised_turns(t, options), "turns": t} for t in (5.0, 6.0)]
    run = {"format": "memtab-study-run/1", "track": "solo", "memory": "none", "model": "GRU",
           "seeds": [0, 1], "timesteps": 2048, "final": finals, "seconds": 1234.5,
           "curves": [[{"timesteps": 0, **finals[0]}, {"timesteps": 2048, **finals[1]}]] * 2,
           "final_deals": study.final_deals, "config": {k: v for k, v in config.items() if k != "seed"}}
    path = Path("runs") / "study" / "mine" / "solo" / "none__GRU.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(run))
    return path, run, config


def test_status_lists_the_cells_done_and_to_run_and_trains_nothing(
        user: list, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("jax")
    path, run, _ = _kept_gru_run()
    assert study_run.main(["--config", "mine.yaml", "--status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    iqm = normalised_turns(5.5, load_study("mine.yaml").tracks["solo"].options)  # two seeds: their mean
    low, high = sorted(f["score"] for f in run["final"])
    assert lines == [f"[1/3] solo none GRU: done, IQM {iqm:.2f} [{low:.2f}, {high:.2f}] over 2 seeds, "
                     "1,234 s",
                     "[2/3] solo none MLP: to run", "[3/3] solo perfect MLP: to run",
                     "1 of 3 cells done as the config trains them, 2 to run "
                     f"(run files under {path.parents[1]})"]
    assert user == [] and not (path.parents[1] / "study.md").exists()  # nothing trained or written
    # a file trained otherwise counts as to run, and says why
    assert study_run.main(["--config", "mine.yaml", "--status", "--seeds", "3", "--models", "GRU"]) == 0
    said = capsys.readouterr().out
    assert "trained otherwise than the study trains it now: seeds [0, 1] (the study: [0, 1, 2])" in said
    assert "0 of 1 cells done as the config trains them, 1 to run" in said
    with pytest.raises(SystemExit):  # one mode at a time
        study_run.main(["--config", "mine.yaml", "--status", "--report-only"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_kept_run_file_must_be_trained_as_the_config_trains_its_cell(
        user: list, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A cell with a run file is not trained again, unless the file was trained otherwise
    (other seeds, other PPO fields): then the run stops and names what differs."""
    pytest.importorskip("jax")
    path, run, config = _kept_gru_run()
    cell = ["--config", "mine.yaml", "--models", "GRU", "--memories", "none"]
    assert study_run.main(cell) == 0
    assert "[1/1] solo none GRU: done (run file exists)" in capsys.readouterr().out
    assert user == []
    assert study_run.main([*cell, "--seeds", "3"]) == 2
    assert "seeds [0, 1] (the study: [0, 1, 2])" in capsys.readouterr().out
    changed = {**CONFIG, "ppo": {"learning_rate": 1e-3, "lr_floor": 0.0}}
    Path("mine.yaml").write_text(yaml.safe_dump(changed))
    assert study_run.main(cell) == 2
    said = " ".join(capsys.readouterr().out.split())
    assert f"{path} was trained otherwise than the study trains this cell now: learning_rate " \
           f"{config['learning_rate']!r} (the study: 0.001). Delete it" in said
    assert "lr_floor" not in said  # the config sets it to the value the file records
    del run["config"]["lr_floor"]  # a file from before the field: its default
    path.write_text(json.dumps(run))
    Path("mine.yaml").write_text(yaml.safe_dump({**CONFIG, "ppo": {"lr_floor": 0.25}}))
    assert study_run.main(cell) == 2
    assert "lr_floor 0.0 (the study: 0.25)" in capsys.readouterr().out
    assert user == []


@pytest.mark.parametrize("option", [["--out", "results/study"], ["--out", "results/study/x"],
                                    ["--out", "results/grid"], ["--out", "results/grid-pelmanism/x"],
                                    ["--figures", "docs/study"], ["--leaderboard", "LEADERBOARD.md"],
                                    ["--out", "mine-results/study", "--results", "mine-results"]])
def test_the_committed_study_takes_an_explicit_flag(user: list, capsys: pytest.CaptureFixture,
                                                    option: list) -> None:
    assert study_run.main(["--config", "mine.yaml", *option]) == 2
    assert "takes --write-committed" in capsys.readouterr().out and user == []
    assert study_run.main(["--config", "mine.yaml", "--write-committed", "--figures", "figs",
                           "--leaderboard", "", *option[2:]]) == 0
    assert {c[5] for c in user} == {Path(option[-1] if option[-2] == "--results" else "results") / "study"}


def test_a_grid_is_written_to_its_own_committed_folder_with_the_flag(
        user: list, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A config of a committed grid (by its file name) writes under its results folder,
    figures and tables inside, LEADERBOARD.md untouched; reading its state needs no flag."""
    Path("study_memtab.yaml").write_text(Path("mine.yaml").read_text())
    assert study_run.main(["--config", "study_memtab.yaml", "--status"]) == 0  # the user's folder
    assert "(run files under runs/study/study_memtab)" in capsys.readouterr().out
    assert study_run.main(["--config", "study_memtab.yaml", "--out", "results/grid", "--status"]) == 0
    assert "0 of 3 cells done as the config trains them, 3 to run (run files under results/grid)" in \
        capsys.readouterr().out
    assert study_run.main(["--config", "study_memtab.yaml", "--models", "GRU", "--write-committed"]) == 0
    assert [c[5] for c in user] == [Path("results") / "grid"]
    assert (tmp_path / "results" / "grid" / "study.md").is_file()
    assert not (tmp_path / "LEADERBOARD.md").exists() and not (tmp_path / "docs").exists()
    assert study_run.committed_folder("configs/study_pelmanism.yaml") == "grid-pelmanism"
    assert study_run.committed_folder("mine.yaml") is None


def test_bad_overrides_name_the_option(user: list, capsys: pytest.CaptureFixture) -> None:
    assert study_run.main(["--config", "mine.yaml", "--seeds", "0"]) == 2
    assert "--seeds must be a positive integer, got 0" in capsys.readouterr().out
    assert study_run.main(["--config", "mine.yaml", "--models", "Transformer"]) == 2
    assert "unknown model(s) ['Transformer']; the study has ['GRU', 'MLP']" in capsys.readouterr().out


def test_the_smoke_preset_is_one_small_cell() -> None:
    """``--preset smoke``: one cell of two seeds at a budget of a few thousand steps (it
    ran in X minutes on this project's CPU machine: docs/study.md)."""
    smoke = load_study(ROOT / study_run.PRESETS["smoke"])
    cells = smoke.cells()
    assert len(cells) == 1
    assert len(smoke.seeds) * sum(smoke.tracks[t].timesteps for t, _, _ in cells) <= 8192
    assert load_study(ROOT / study_run.PRESETS["full"]).cells()  # the full preset is the study
