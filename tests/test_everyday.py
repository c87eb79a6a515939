"""Everyday paths: a command whose optional stack is missing says which extra installs it,
with the install line from the checkout (``pip install -e ".[extra]"``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_without(modules: list[str], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where importing any of ``modules`` fails."""
    block = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    return subprocess.run([sys.executable, "-c", block + code], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("command,blocked,extra", [
    (["evaluate", "--agent", "random", "--track", "memtab-2p", "--games", "2"], ["scipy"], "eval"),
    (["tournament", "--agents", "random,greedy", "--track", "memtab-2p", "--games", "1"], ["scipy"], "eval"),
    (["tournament", "--agents", "random,greedy", "--track", "memtab-2p", "--games", "1"], ["openskill"],
     "eval"),
    (["train", "--config", "quick"], ["stable_baselines3"], "train"),
    (["train", "--config", "quick"], ["scipy"], "train"),
])
def test_a_missing_extra_is_named(command: list[str], blocked: list[str], extra: str, tmp_path: Path) -> None:
    proc = run_without(blocked, f"from memtab_env.cli import main; sys.exit(main({command!r}))", tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert f'pip install -e ".[{extra}]"' in out and "Traceback" not in out, out
    assert list(tmp_path.iterdir()) == []  # nothing written on the way


def test_the_benchmark_script_names_the_bench_extra(tmp_path: Path) -> None:
    proc = run_without(["pygame"], f"sys.argv = ['bench_envs.py', '--seconds', '0.01', '--repeats', '1']\n"
                       f"exec(open({str(ROOT / 'benchmarks/bench_envs.py')!r}).read())", tmp_path)
    assert 'pip install -e ".[bench]"' in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


#: every optional module: the core install has none of them
OPTIONAL = ["scipy", "openskill", "matplotlib", "torch", "stable_baselines3", "sb3_contrib", "tensorboard",
            "tensorboardX", "jax", "jaxlib", "memax", "optax", "equinox", "ray", "gymnax", "flax"]
COMMANDS = ["play", "simulate", "replay", "evaluate", "tournament", "leaderboard", "train", "study"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_works_on_the_core_install(command: str, tmp_path: Path) -> None:
    proc = run_without(OPTIONAL, f"from memtab_env.cli import main; sys.exit(main([{command!r}, '--help']))",
                       tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"usage: memtab {command}") or proc.stdout.startswith("usage:"), proc.stdout
    assert "``" not in proc.stdout and "Traceback" not in proc.stderr
    assert not re.search(r"--[a-z]+_[a-z]", proc.stdout), "flags are kebab-case"


def test_train_flags_are_kebab_case_and_the_config_spelling_still_works() -> None:
    from memtab_env.train.command_line import build_parser, cli_overrides

    parser = build_parser("memtab train")
    text = parser.format_help()
    assert "--total-timesteps" in text and "--total_timesteps" not in text  # the alias is hidden
    args = parser.parse_args(["--total-timesteps", "64", "--eval_games", "3", "--eval-opponents", "[random]"])
    assert cli_overrides(args) == {"total_timesteps": 64, "eval_games": 3, "eval_opponents": ["random"]}


def test_a_command_needing_an_extra_stops_before_it_starts(tmp_path: Path) -> None:
    proc = run_without(["openskill"], "from memtab_env.cli import main; sys.exit(main(['tournament', "
                       "'--agents', 'random,greedy', '--track', 'memtab-2p', '--games', '1']))", tmp_path)
    assert proc.returncode == 2 and 'pip install -e ".[eval]"' in proc.stderr
    assert "tournament on" not in proc.stdout  # no game played first


def test_no_command_prints_the_usage_and_exits_2() -> None:
    proc = subprocess.run([sys.executable, "-m", "memtab_env.cli"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: memtab") and "required" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "memtab_env.cli", "--help"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "[-h]" in proc.stdout
    assert "``" not in proc.stdout and ":mod:" not in proc.stdout  # no reST in the terminal


def test_every_extra_named_exists() -> None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from memtab_env.extras import MODULE_EXTRAS

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(MODULE_EXTRAS.values()) <= set(extras)


def test_the_checkout_imports_without_the_editable_finder(tmp_path: Path) -> None:
    """As with a regular (non-editable) install run from inside the checkout: Python finds
    memtab_env in the working directory, where agents/ and configs/ are top-level folders."""
    code = ("import sys; sys.path[:] = [sys.argv[1], *sys.argv[2:]]; import memtab_env, memtab_env.agents, "
            "memtab_env.configs; print(memtab_env.__file__, memtab_env.agents.__file__)")
    # -S: no .pth files, so no editable-install finder; the dependencies' folders by hand
    proc = subprocess.run([sys.executable, "-S", "-c", code, str(ROOT), *[p for p in sys.path if p]],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    expected = [str(ROOT / "memtab_env" / "__init__.py"), str(ROOT / "agents" / "__init__.py")]
    assert proc.stdout.split() == expected


def test_numba_caches_outside_the_package(tmp_path: Path) -> None:
    code = "import memtab_env, os; from numba.core import config; print(config.CACHE_DIR)"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.stdout.strip() == str(tmp_path / "memtab-env" / "numba"), proc.stderr
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")  # the user's choice wins
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.stdout.strip() == str(tmp_path / "mine"), proc.stderr
