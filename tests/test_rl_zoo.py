"""The RL Zoo hyperparameters (:mod:`memtab_env.rl_zoo`): ``rl_zoo3.train`` trains
``ppo``, ``dqn`` and ``ppo_lstm`` on the envs with them, ``rl_zoo3.enjoy`` replays a
model without looping on illegal flips, and the Zoo's models play as memtab-env agents.
Runs when rl_zoo3 is installed (``pip install rl_zoo3``)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from memtab_env.rl_zoo import ALGOS, ENV_IDS, path

TINY = {"ppo": ["n_envs:2", "n_steps:64", "batch_size:64"],
        "ppo_lstm": ["n_envs:2", "n_steps:64", "batch_size:64"],
        "dqn": ["n_envs:2", "learning_starts:64"]}


def test_every_module_covers_every_env_id() -> None:
    import gymnasium as gym

    import memtab_env  # noqa: F401

    for algo in ALGOS:
        hp = importlib.import_module(f"memtab_env.rl_zoo.{algo}").hyperparams
        assert sorted(hp) == sorted(ENV_IDS) and path(algo).is_file()
        for env_id, entry in hp.items():
            assert entry["env_kwargs"]["illegal_action"] == "terminate"
            gym.make(env_id, **entry["env_kwargs"]).reset(seed=0)  # the options exist
    with pytest.raises(ValueError, match="algorithms"):
        path("a2c")


def zoo(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", f"rl_zoo3.{module}", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


@pytest.mark.parametrize("algo", ALGOS)
def test_rl_zoo_trains_with_the_hyperparameters(algo: str, tmp_path: Path) -> None:
    pytest.importorskip("rl_zoo3")
    zoo("train", "--algo", algo, "--env", "MemTab-v0", "--gym-packages", "memtab_env",
        "-conf", f"memtab_env.rl_zoo.{algo}", "-n", "256", "-f", str(tmp_path), "--eval-freq", "-1",
        "--seed", "0", "-params", *TINY[algo], cwd=tmp_path)
    (model,) = tmp_path.glob(f"{algo}/MemTab-v0_1/MemTab-v0.zip")
    # the Zoo's model plays through the project's loader (legal flips only)
    from memtab_env import agents
    from memtab_env.play import make_raw_env, play_game

    env = make_raw_env("memtab", memory="none" if algo == "ppo_lstm" else "perfect")
    record = play_game(env, [agents.make(str(model)), agents.make("random")], seed=0)
    assert record["result"]["over"]
    if algo == "ppo":
        out = zoo("enjoy", "--algo", "ppo", "--env", "MemTab-v0", "--gym-packages", "memtab_env",
                  "-f", str(tmp_path), "--no-render", "-n", "300", cwd=tmp_path).stdout
        # every episode ends (a win, a loss or an illegal flip), none runs to the step limit
        lengths = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("Episode Length")]
        assert lengths and max(lengths) < 250
