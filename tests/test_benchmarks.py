"""The benchmark scripts under ``benchmarks/``: their settings, not their timings (speed
is measured there, as ratios, never asserted in tests)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (a script, not in the package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_throughput_benchmark_builds_both_sides_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench_jax_ppo``: for every network, the RecurrentPPO learner and the JAX PPO
    config it is timed against have the same threads, rollout shape, epochs, minibatches,
    width, a memory shared by actor and critic, and both mask illegal flips (read back
    from the built learners); another width or thread count on one side is caught."""
    pytest.importorskip("sb3_contrib")
    import torch

    bench = _script("bench_jax_ppo")
    # what --threads 1 sets (jax is already imported here: its flags are only read back)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _check_sides(bench)
        if len(os.sched_getaffinity(0)) > 1:
            torch.set_num_threads(2)
            built = bench.settings(bench.sb3_model("flat", 4, 8), bench.jax_config("flat", "GRU", 4, 8, 256))
            assert built["sb3"]["threads"] == 2 != built["jax"]["threads"]
    finally:
        torch.set_num_threads(threads)


def _check_sides(bench: ModuleType) -> None:
    for kind, width in bench.DEFAULT_WIDTH.items():
        built = bench.settings(bench.sb3_model(kind, 4, width), bench.jax_config(kind, "GRU", 4, width, 256))
        assert set(built["sb3"]) == set(built["jax"]) == set(bench.MATCHED)
        assert built["sb3"] == built["jax"], kind
        assert built["jax"]["masks_illegal"] and built["jax"]["shared_memory"]
    other = bench.settings(bench.sb3_model("flat", 4, 64), bench.jax_config("flat", "GRU", 4, 128, 256))
    assert other["sb3"]["width"] == 64 != other["jax"]["width"]


def test_the_throughput_benchmark_times_recurrent_ppo_long_enough() -> None:
    bench = _script("bench_jax_ppo")
    assert bench.MIN_SB3_TIMESTEPS >= 8192
    with pytest.raises(SystemExit):
        bench.main(["--sb3-timesteps", "4096"])


def test_xla_threads_reads_the_single_thread_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _script("bench_jax_ppo")
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    assert bench.xla_threads() == 1
    monkeypatch.setenv("XLA_FLAGS", "")
    assert bench.xla_threads() == len(os.sched_getaffinity(0))


@pytest.mark.slow
def test_the_device_check_runs_tiny_on_a_cpu(capsys: pytest.CaptureFixture) -> None:
    """``benchmarks/device_check.py --tiny``: the script an accelerator machine runs works
    end to end here and prints both figures (their values mean nothing at this size)."""
    pytest.importorskip("memax")
    check = _script("device_check")
    assert check.main(["--tiny", "--encoders", "flat"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("JAX ") and "env flips/s  MemTab-v0 2p, obs, B=16:" in out
    assert "PPO steps/s  flat GRU, 4 games x 8 steps:" in out and "first update" in out


@pytest.mark.parametrize("config", ["configs/study.yaml", "configs/study_memtab.yaml",
                                    "configs/study_pelmanism.yaml"])
def test_every_recipe_ablation_variant_is_a_valid_config_of_every_study_cell(config: str) -> None:
    """``ablate_recipe``: each variant's fields over the study's ``ppo`` give a checked
    PPO config in every cell of the study (a misspelt field or a bad value fails here,
    not an hour into a run), and each variant changes the config unless the study already
    sets what it names. A variant that switches the opponents is refused, by name, only
    where those opponents already play or where the game has none; one with the recall
    loss only where the network has no memories' readout to train (an encoder other than
    ``kinds``)."""
    pytest.importorskip("jax")
    import dataclasses

    from memtab_env.study import load_study
    from memtab_env.study.grid import StudyError
    from memtab_env.study.run import ppo_config

    variants = _script("ablate_recipe").VARIANTS
    study = load_study(ROOT / config)
    committed = {cell: ppo_config(study, study.tracks[cell[0]], cell[1], cell[2]) for cell in study.cells()}
    for name, fields in variants.items():
        varied = dataclasses.replace(study, ppo={**study.ppo, **fields})
        for (track, memory, model), base in committed.items():
            switches = [item.partition("@")[0] for item in fields.get("opponent_switches", "").split(",")]
            if fields.get("opponent_switches") and base.env_options.get("num_players") == 1:
                with pytest.raises(StudyError, match="has no opponents to switch"):
                    ppo_config(varied, varied.tracks[track], memory, model)
                continue
            if base.opponents in switches:
                with pytest.raises(StudyError, match="switches to the opponents already playing"):
                    ppo_config(varied, varied.tracks[track], memory, model)
                continue
            if fields.get("recall_coef") and base.encoder != "kinds":
                with pytest.raises(StudyError, match="recall_coef needs encoder 'kinds'"):
                    ppo_config(varied, varied.tracks[track], memory, model)
                continue
            config_ = ppo_config(varied, varied.tracks[track], memory, model)
            # the same config exactly where the study already sets what the variant names
            # (random-throughout on a config without switches)
            unchanged = all(getattr(base, field) == value for field, value in fields.items())
            assert (config_ == base) == unchanged, (name, track, memory, model)
    assert variants["committed"] == {}


def test_a_recipe_ablation_draws_every_variants_curves(tmp_path: Path) -> None:
    """``ablate_recipe --figure``: one PNG with a line per variant folder that holds the
    cell's run file; folders without it are passed over, and none at all is refused."""
    pytest.importorskip("matplotlib")
    import shutil

    ablation = _script("ablate_recipe")
    cell = ("memtab-2p-none-grid", "none", "GRU")
    source = ROOT / "results/ablation/memtab-300k/random-throughout" / cell[0] / "none__GRU.json"
    for variant in ("b-variant", "a-variant"):
        (tmp_path / "out" / variant / cell[0]).mkdir(parents=True)
        shutil.copyfile(source, tmp_path / "out" / variant / cell[0] / "none__GRU.json")
    (tmp_path / "out" / "other-cell").mkdir()
    figure = tmp_path / "curves.png"
    assert ablation.main(["--out", str(tmp_path / "out"), "--track", cell[0], "--memory", "none",
                          "--model", "GRU", "--figure", str(figure)]) == 0
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ablation.draw_variants(tmp_path / "out", *cell, figure) == ["a-variant", "b-variant"]
    with pytest.raises(ValueError, match="no run file of memtab-2p-none-grid / perfect / GRU"):
        ablation.draw_variants(tmp_path / "out", cell[0], "perfect", "GRU", figure)


def test_a_recipe_ablation_can_probe_one_models_width() -> None:
    """``ablate_recipe --width``: the probed model trains at that width in its own run
    folder, every other model and the budget as asked; a bad width or model is refused
    by name."""
    pytest.importorskip("jax")
    from memtab_env.study import load_study
    from memtab_env.study.run import ppo_config

    ablation = _script("ablate_recipe")
    study = load_study(ROOT / "configs/study_memtab.yaml")
    track = "memtab-2p-none-grid"
    varied, name = ablation.vary(study, "score-mix", track, "MLP", width=64, timesteps=400_000,
                                 seeds=[0, 1])
    assert name == "score-mix+width-64" and varied.seeds == (0, 1)
    cell = ppo_config(varied, varied.tracks[track], "perfect", "MLP")
    assert (cell.recurrent_size, cell.score_reward, cell.total_timesteps) == (64, 0.05, 400_000)
    assert ppo_config(varied, varied.tracks[track], "none", "GRU") == ppo_config(
        ablation.vary(study, "score-mix", track, "MLP", timesteps=400_000)[0],
        varied.tracks[track], "none", "GRU")
    assert ablation.vary(study, "score-mix", track, "MLP")[1] == "score-mix"
    with pytest.raises(ValueError, match="width must be a positive integer, got 0"):
        ablation.vary(study, "score-mix", track, "MLP", width=0)
    with pytest.raises(ValueError, match="'Transformer' is not one of the study's models: MLP"):
        ablation.vary(study, "score-mix", track, "Transformer", width=64)
    with pytest.raises(ValueError, match="no variant 'bigger'"):
        ablation.vary(study, "bigger", track, "MLP")
