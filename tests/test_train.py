"""train.py: smoke runs of every algorithm in a subprocess, resume, config checking,
CLI overrides, the evaluation JSON, and the shipped policy.

The smoke runs use a tiny budget (a few hundred steps, a handful of evaluation games);
they check that the whole path (config, envs, model, callbacks, checkpoints, save,
evaluation) works, not that anything is learned.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from memtab_env.train.command_line import build_parser, cli_overrides
from memtab_env.train.config import (
    Config,
    ConfigError,
    config_from_dict,
    dump_yaml,
    field_docs,
    load_yaml,
)
from memtab_env.train.evaluation import EVAL_SCHEMA
from memtab_env.train.vec import split_counts

ROOT = Path(__file__).resolve().parents[1]

TINY = [
    "--total_timesteps", "256", "--n_envs", "2", "--n_steps", "64", "--batch_size", "64",
    "--n_epochs", "1", "--checkpoint_every", "128", "--progress_bar", "false",
    "--eval_games", "4", "--eval_opponents", "[random, greedy]", "--tensorboard", "false",
]
DQN_TINY = ["--learning_starts", "64", "--buffer_size", "1_000", "--train_freq", "4",
            "--target_update_interval", "64"]


def run_train(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``python train.py ARGS`` in a subprocess (runs under ``tmp_path``)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args, "--runs_dir", str(tmp_path / "runs")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"train.py failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def only_run(tmp_path: Path) -> Path:
    (run,) = list((tmp_path / "runs").iterdir())
    return run


def saved_timesteps(model_zip: Path) -> int:
    """``num_timesteps`` stored in an SB3 zip (its ``data`` member is JSON)."""
    with zipfile.ZipFile(model_zip) as zf:
        return int(json.loads(zf.read("data"))["num_timesteps"])


def check_eval(report: dict[str, Any], opponents: list[str], games: int) -> None:
    """The documented eval.json schema (docs/training.md)."""
    assert report["schema"] == EVAL_SCHEMA
    assert report["env_id"] == "MemTab-v0"
    import memtab_env

    assert report["package_version"] == memtab_env.__version__
    assert set(report["config"]) == {f.name for f in dataclasses.fields(Config)}
    protocol = report["protocol"]
    assert protocol["seats_rotated"] is True
    assert len(protocol["seeds"]) == protocol["deals"] == games // protocol["num_players"]
    assert list(report["results"]) == opponents
    for r in report["results"].values():
        assert r["games"] == games == r["wins"] + r["shared"] + r["losses"]
        assert 0.0 <= r["ci95"][0] <= r["win_rate"] <= r["ci95"][1] <= 1.0
        assert isinstance(r["mean_score_diff"], float)
        assert len(r["win_rate_by_seat"]) == protocol["num_players"]


# ---------------------------------------------------------------------------------------
# smoke runs, one per algorithm (subprocess)
# ---------------------------------------------------------------------------------------
SMOKE = {
    "maskable_ppo": ["--config", "configs/quick.yaml", "--vec_env", "dummy"],
    "ppo": ["--config", "configs/ppo.yaml"],
    "recurrent_ppo": ["--config", "configs/recurrent_none.yaml", "--vec_env", "dummy"],
    "dqn": ["--config", "configs/dqn.yaml", *DQN_TINY],
}


def test_smoke_run_recurrent_with_the_set_features(tmp_path: Path) -> None:
    """recurrent_ppo with policy set: the set network as the LSTM policy's features
    extractor; the saved model loads and plays through the evaluation."""
    run_train([*SMOKE["recurrent_ppo"], *TINY, "--policy", "set", "--set_dim", "8", "--slot_memory", "0"],
              tmp_path)
    run = only_run(tmp_path)
    report = json.loads((run / "eval.json").read_text())
    check_eval(report, ["random", "greedy"], 4)
    with zipfile.ZipFile(run / "model.zip") as zf:
        assert "SetFeatures" in zf.read("data").decode()


@pytest.mark.parametrize("algo", list(SMOKE))
def test_smoke_run(algo: str, tmp_path: Path) -> None:
    proc = run_train([*SMOKE[algo], *TINY, "--algo", algo], tmp_path)
    run = only_run(tmp_path)
    assert f"__{algo}__s0__" in run.name and run.name.startswith("MemTab-v0__")
    assert saved_timesteps(run / "model.zip") >= 256
    assert (run / "config.yaml").exists()
    assert sorted(p.name for p in (run / "checkpoints").glob("step_*.zip"))
    report = json.loads((run / "eval.json").read_text())
    check_eval(report, ["random", "greedy"], 4)
    assert report["algo"] == algo
    assert "win rate" in proc.stdout  # the table was printed
    if algo == "dqn":
        assert list((run / "checkpoints").glob("replay_buffer_*.pkl"))
    if algo == "recurrent_ppo":  # the config's per-position memory
        with zipfile.ZipFile(run / "model.zip") as zf:
            assert "SlotMemoryPolicy" in zf.read("data").decode()


def test_slot_memory_needs_the_recurrent_set_policy() -> None:
    ok = dict(algo="recurrent_ppo", policy="set", memory="none", slot_memory=8)
    config_from_dict(ok).validate()
    for bad, why in [({"algo": "maskable_ppo"}, "algo 'maskable_ppo'"), ({"policy": "mlp"}, "policy 'mlp'"),
                     ({"obs_mask": False}, "obs_mask False"), ({"slot_memory": -1}, "0 \\(off\\)")]:
        with pytest.raises(ConfigError, match=why):
            config_from_dict({**ok, **bad}).validate()


def test_resume_continues_step_count(tmp_path: Path) -> None:
    """A self-play run stopped at 256 steps resumes from its checkpoint (model, step count
    and snapshot pool) and reaches the new total."""
    args = ["--config", "configs/selfplay.yaml", *TINY, "--snapshot_every", "128",
            "--vec_env", "dummy", "--eval_opponents", "[random]"]
    run_train(args, tmp_path)
    run = only_run(tmp_path)
    assert saved_timesteps(run / "model.zip") == 256
    latest = json.loads((run / "checkpoints" / "latest.json").read_text())
    assert latest["step"] == 256 and latest["pool"]
    proc = run_train(["--resume", str(run), "--total_timesteps", "512", "--progress_bar", "false"],
                     tmp_path)
    assert "resuming" in proc.stdout and "from step 256" in proc.stdout
    assert saved_timesteps(run / "model.zip") == 512
    assert json.loads((run / "checkpoints" / "latest.json").read_text())["step"] == 512
    assert json.loads((run / "eval.json").read_text())["training"]["timesteps"] == 512
    assert len(list((run / "pool").glob("snapshot_*.zip"))) > len(latest["pool"])


def test_resume_dqn_restores_replay_buffer(tmp_path: Path) -> None:
    base = ["--config", "configs/dqn.yaml", *TINY, *DQN_TINY, "--eval_opponents", "[random]"]
    run_train(base, tmp_path)
    run = only_run(tmp_path)
    proc = run_train(["--resume", "--total_timesteps", "384", "--progress_bar", "false"], tmp_path)
    assert f"resuming {run}" in proc.stdout
    assert saved_timesteps(run / "model.zip") == 384


# ---------------------------------------------------------------------------------------
# configs and overrides (in process)
# ---------------------------------------------------------------------------------------
CONFIG_ENTRIES = [
    (path, env_id)
    for path in sorted((ROOT / "configs").glob("*.yaml"))
    if not path.stem.startswith("study")  # the memory study's configs (memtab study), not training configs
    for env_id in yaml.safe_load(path.read_text())
    if not env_id.startswith("_")
]


@pytest.mark.parametrize("path,env_id", CONFIG_ENTRIES, ids=lambda v: getattr(v, "name", v))
def test_shipped_configs_load_and_validate(path: Path, env_id: str) -> None:
    cfg = load_yaml(path, env_id)
    cfg.validate()
    assert cfg.exp_name == path.stem and cfg.env_id == env_id


def test_every_game_has_a_config() -> None:
    """Issue 5 and 6: MaskablePPO for Pelmanism (perfect) and the board game, RecurrentPPO
    for Pelmanism under memory none."""
    have = {(env_id, load_yaml(p, env_id).algo, load_yaml(p, env_id).memory)
            for p, env_id in CONFIG_ENTRIES}
    for want in [("MemTab-v0", "maskable_ppo", "perfect"), ("MemTab-v0", "recurrent_ppo", "none"),
                 ("Pelmanism-v0", "maskable_ppo", "perfect"), ("Pelmanism-v0", "recurrent_ppo", "none"),
                 ("MemoryBoard-v0", "maskable_ppo", "perfect")]:
        assert want in have


@pytest.mark.parametrize("config", ["pelmanism.yaml", "pelmanism_recurrent_none.yaml", "board.yaml"])
def test_smoke_run_other_games(config: str, tmp_path: Path) -> None:
    run_train(["--config", f"configs/{config}", *TINY], tmp_path)
    run = only_run(tmp_path)
    report = json.loads((run / "eval.json").read_text())
    assert report["env_id"] == run.name.split("__")[0] != "MemTab-v0"
    assert set(report["results"]) == {"random", "greedy"}
    assert all(r["games"] == 4 for r in report["results"].values())
    assert report["config"]["env_options"] == load_yaml(ROOT / "configs" / config).env_options


def test_smoke_run_batched_board(tmp_path: Path) -> None:
    """``vec_env: batched`` trains the board game too: its numba engine steps the random
    and greedy games (one batch per opponent), and the model is evaluated as usual."""
    run_train(["--config", "configs/board.yaml", "--vec_env", "batched", *TINY], tmp_path)
    run = only_run(tmp_path)
    assert run.name.startswith("MemoryBoard-v0__")
    assert saved_timesteps(run / "model.zip") >= 256
    report = json.loads((run / "eval.json").read_text())
    assert report["env_id"] == "MemoryBoard-v0" and report["config"]["vec_env"] == "batched"
    assert set(report["results"]) == {"random", "greedy"}
    assert all(r["games"] == 4 for r in report["results"].values())


def test_env_options_are_checked_by_the_game() -> None:
    base = dict(env_id="Pelmanism-v0", policy="mlp", opponents={"random": 1.0},
                eval_opponents=["random"])
    Config(**base, env_options={"deck": "pairs:8"}).validate()
    with pytest.raises(ConfigError, match="unknown deck 'bogus'.*allowed"):
        Config(**base, env_options={"deck": "bogus"}).validate()
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['dek'\].*allowed"):
        Config(**base, env_options={"dek": "pairs:8"}).validate()
    Config(env_id="MemoryBoard-v0", vec_env="batched", eval_opponents=["random"],
           opponents={"random": 1.0}).validate()


def test_batched_needs_the_game_to_name_a_batched_vec_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """``vec_env: batched`` trains the games whose registry row names an ``sb3_vec_env``
    (all of them today); a game without one is refused by name."""
    from memtab_env.registry import GAMES

    monkeypatch.setitem(GAMES, "memory_board", dataclasses.replace(GAMES["memory_board"], sb3_vec_env=None))
    with pytest.raises(ConfigError, match=r"batched.*\['memtab', 'pelmanism'\], not MemoryBoard-v0"):
        Config(env_id="MemoryBoard-v0", vec_env="batched", eval_opponents=["random"],
               opponents={"random": 1.0}).validate()


def test_training_seeds_never_touch_the_reserved_evaluation_deals() -> None:
    Config(seed=999_999_990, n_envs=8).validate()
    for seed in (999_999_999, 1_000_000_000, 1_000_999_999):
        with pytest.raises(ConfigError, match="reserved"):
            Config(seed=seed, n_envs=8).validate()


def test_docs_field_table_is_up_to_date() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_training_fields",
                                                  ROOT / "docs/build_training_fields.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    page = (ROOT / "docs/training.md").read_text()
    assert mod.render(page) == page, "stale field table: run python docs/build_training_fields.py"


def test_typo_in_config_key_fails_loudly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("MemTab-v0:\n  learning_rat: 1.0e-3\n")
    with pytest.raises(ConfigError, match=r"unknown config key 'learning_rat'.*'learning_rate'"):
        load_yaml(bad)
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--config", str(bad)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "learning_rat" in proc.stderr


def test_wrong_types_fail_loudly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("MemTab-v0:\n  learning_rate: 1e-3\n")  # PyYAML: a string
    with pytest.raises(ConfigError, match="write 1.0e-4"):
        load_yaml(bad)
    with pytest.raises(ConfigError, match="n_envs must be of type int"):
        config_from_dict({"n_envs": 2.5})
    with pytest.raises(ConfigError, match="algo must be one of"):
        config_from_dict({"algo": "a2c"}).validate()
    with pytest.raises(ConfigError, match="unknown agent 'grredy'"):
        config_from_dict({"opponents": {"grredy": 1.0}}).validate()


def test_cli_overrides_every_field_form() -> None:
    parser = build_parser()
    args = parser.parse_args(["--n_envs", "3", "--learning_rate", "1e-3", "--set", "gamma=0.9",
                              "--set", "opponents={random: 1, greedy: 3}", "--net_arch", "[32, 32]",
                              "--learner_seat", "1", "--target_kl", "null"])
    cfg = config_from_dict(cli_overrides(args), base=Config(), from_cli=True)
    assert (cfg.n_envs, cfg.learning_rate, cfg.gamma) == (3, 1.0e-3, 0.9)
    assert cfg.opponents == {"random": 1.0, "greedy": 3.0}
    assert cfg.net_arch == [32, 32] and cfg.learner_seat == 1 and cfg.target_kl is None
    with pytest.raises(SystemExit):  # no prefix matching: a misspelt option is an error
        parser.parse_args(["--learning_rat", "1"])
    with pytest.raises(ConfigError, match="did you mean 'gamma'"):
        cli_overrides(parser.parse_args(["--set", "gamm=0.9"]))


def test_every_field_has_a_docstring_and_an_option() -> None:
    docs = field_docs()
    names = [f.name for f in dataclasses.fields(Config)]
    assert sorted(docs) == sorted(names) and all(docs.values())
    help_text = build_parser().format_help()
    assert [n for n in names if f"--{n.replace('_', '-')}" not in help_text] == []
    args = build_parser().parse_args(["--total_timesteps", "7", "--learning-rate", "0.1"])
    assert cli_overrides(args) == {"total_timesteps": 7, "learning_rate": 0.1}


def test_config_round_trips_through_the_saved_yaml(tmp_path: Path) -> None:
    cfg = config_from_dict({"opponents": {"self": 0.5, "expert": 0.5}, "target_kl": 0.02,
                                  "learner_seat": 1, "exp_name": "x"})
    path = tmp_path / "config.yaml"
    path.write_text(dump_yaml(cfg, "python train.py --test"))
    assert load_yaml(path) == cfg


def test_split_counts() -> None:
    assert split_counts(64, [0.5, 0.5]) == [32, 32]
    assert split_counts(10, [1, 2]) == [3, 7]
    assert sum(split_counts(7, [0.2, 0.3, 0.5])) == 7


# ---------------------------------------------------------------------------------------
# the shipped policy
# ---------------------------------------------------------------------------------------
SHIPPED = [  # name, game, env options, file stem, opponent it must beat, win rate floor (400 games)
    ("ppo-memtab", "memtab", {}, "ppo_memtab", "greedy", 0.55),
    ("ppo-pelmanism", "pelmanism", {}, "ppo_pelmanism", "greedy", 0.5),
    ("rppo-memtab-none", "memtab", {"memory": "none"}, "rppo_memtab_none", "random", 0.75),
    ("gru-memtab-none", "memtab", {"memory": "none"}, "gru_memtab_none", "greedy", 0.5),
]


@pytest.mark.parametrize("name,game,options,stem,opponent,floor", SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_policy_loads_by_name_and_beats_its_opponent(name, game, options, stem, opponent,
                                                             floor) -> None:
    """Every shipped policy loads by name, plays only legal flips through the bare AEC env
    (which raises on an illegal one), and beats its opponent over 200 deals played from
    both seats (deterministic: fixed deals, deterministic policy and opponents). Measured
    over 4000 games: ppo-memtab 0.664 and ppo-pelmanism 0.58 against greedy; over 2000
    games under memory none, rppo-memtab-none 0.814 against random, gru-memtab-none 0.625 against greedy."""
    if name == "gru-memtab-none":
        pytest.importorskip("jax")
    from memtab_env import agents
    from memtab_env.play import make_raw_env, play_game, win_shares

    policy = agents.make(name, game=game)
    env = make_raw_env(game, **options)
    shares = []
    for seed in range(200):
        for seat in (0, 1):
            seats = [agents.make(opponent, game=game), agents.make(opponent, game=game)]
            seats[seat] = policy
            record = play_game(env, seats, seed=seed)
            assert record["result"]["over"]
            shares.append(win_shares(record)[seat])
    assert np.mean(shares) > floor
    shipped = Path(agents.__file__).parent / "policies"
    assert (shipped / f"{stem}.zip").stat().st_size <= 5 * 2**20
    figures = json.loads((shipped / f"{stem}_eval.json").read_text())
    assert all(r["games"] >= 2000 for r in figures["results"].values())
    assert figures["results"][opponent]["win_rate"] > 0.5
    if name != "gru-memtab-none":
        load_yaml(shipped / f"{stem}.yaml").validate()
        return
    # the study's policy: its yaml is the part of configs/study.yaml that trained it
    from memtab_env.study import load_study

    used, source = load_study(shipped / f"{stem}.yaml"), load_study(ROOT / "configs" / "study.yaml")
    assert used.seeds == source.seeds and used.models["GRU"] == source.models["GRU"]
    assert used.ppo == source.ppo and used.final_deals == source.final_deals
    assert {t: source.tracks[t] for t in used.tracks} == used.tracks
    assert figures["results"]["random"]["win_rate"] > 0.95  # rppo-memtab-none: 0.814


# ---------------------------------------------------------------------------------------
# the installed command, shipped configs, everyday paths
# ---------------------------------------------------------------------------------------
def memtab_train(args: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``memtab train ARGS`` (the installed entry point) in ``cwd``."""
    proc = subprocess.run([sys.executable, "-m", "memtab_env.cli", "train", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, f"memtab train failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_memtab_train_finds_the_shipped_configs_anywhere(tmp_path: Path) -> None:
    """``memtab train --config quick`` works outside the checkout (the configs are package
    data); the run's config.yaml names the command."""
    memtab_train(["--config", "quick", *TINY, "--eval_opponents", "[random]", "--runs_dir", "runs"],
                 cwd=tmp_path)
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("MemTab-v0__quick__maskable_ppo__s0__")
    assert (run / "config.yaml").read_text().startswith("# memtab train --config quick")
    check_eval(json.loads((run / "eval.json").read_text()), ["random"], 4)


def test_config_names_and_paths() -> None:
    from memtab_env.train.config import config_path, shipped_configs

    repo = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    assert shipped_configs() == repo and "quick" in repo
    for name in ("quick", "quick.yaml", "configs/quick.yaml"):
        assert config_path(name).read_text() == (ROOT / "configs" / "quick.yaml").read_text()
    with pytest.raises(ConfigError, match=r"'quik' not found; shipped configs: \[.*'quick'"):
        load_yaml("quik")


def test_final_evaluation_is_the_benchmarks(tmp_path: Path) -> None:
    """On the benchmark's deals and options, the training evaluation of a model gives the
    benchmark's figures: same games, same clustered interval."""
    from memtab_env import agents
    from memtab_env.protocol.evaluate import evaluate as benchmark_evaluate
    from memtab_env.protocol.evaluate import resolve_agent
    from memtab_env.protocol.tracks import EVAL_SEED_START, get_track
    from memtab_env.train.evaluation import evaluate

    model = Path(agents.__file__).parent / "policies" / "ppo_memtab.zip"
    cfg = config_from_dict({"eval_seed": EVAL_SEED_START, "eval_opponents": ["random", "greedy"],
                            "eval_games": 20})
    report = evaluate(model, cfg)
    track = get_track("memtab-2p")
    spec = resolve_agent(str(model), "memtab", {"algo": "MaskablePPO", "deterministic": True})
    result, _ = benchmark_evaluate(track, [spec], "ppo", deals=10)
    for opp in ("random", "greedy"):
        ours, theirs = report["results"][opp], result["runs"][0]["opponents"][opp]
        assert ours["games"] == theirs["games"] == 20
        assert ours["win_rate"] == theirs["win_rate"]
        assert ours["ci95"] == theirs["win_rate_ci"]
        assert ours["mean_score_diff"] == theirs["score_diff"]
        assert isinstance(ours["illegal_choices"], int)
    assert report["protocol"]["seeds"] == track.seeds(10)


def test_evaluate_never_writes_beside_the_model_it_reads(tmp_path: Path) -> None:
    """``--evaluate`` of a model outside the runs folder writes under runs/evaluations/
    (a shipped policy's own eval file is never overwritten), or where ``--out`` says."""
    model = tmp_path / "shipped" / "ppo_memtab.zip"
    model.parent.mkdir()
    shipped = ROOT / "agents" / "policies"
    for suffix in (".zip", ".yaml"):
        (model.with_suffix(suffix)).write_bytes((shipped / f"ppo_memtab{suffix}").read_bytes())
    args = ["--evaluate", str(model), "--eval_games", "2", "--eval_opponents", "[random]"]
    memtab_train([*args, "--runs_dir", "runs"], cwd=tmp_path)
    assert sorted(p.name for p in model.parent.iterdir()) == ["ppo_memtab.yaml", "ppo_memtab.zip"]
    out = tmp_path / "runs" / "evaluations" / "ppo_memtab_eval.json"
    assert json.loads(out.read_text())["results"]["random"]["games"] == 2
    memtab_train([*args, "--out", "elsewhere/e.json"], cwd=tmp_path)
    assert json.loads((tmp_path / "elsewhere" / "e.json").read_text())["schema"] == EVAL_SCHEMA
    proc = memtab_train(["--evaluate", str(tmp_path / "nope.zip")], cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "no such model file" in proc.stderr


def test_resume_of_a_finished_run_says_so(tmp_path: Path) -> None:
    run_train(["--config", "configs/quick.yaml", *TINY, "--eval_opponents", "[random]"], tmp_path)
    run = only_run(tmp_path)
    before = (run / "model.zip").stat().st_mtime_ns
    proc = run_train(["--resume", str(run)], tmp_path)
    assert "already finished: 256 steps of total_timesteps 256; nothing to resume" in proc.stdout
    assert "--total-timesteps N with N > 256" in proc.stdout
    assert (run / "model.zip").stat().st_mtime_ns == before
