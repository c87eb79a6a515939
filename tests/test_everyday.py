"""Everyday paths: a command whose optional stack is missing says which extra installs it,
with the install line from the checkout (``pip install -e ".[extra]"``)."""

from __future__ import annotations

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


def test_every_extra_named_exists() -> None:
    import tomllib

    from memtab_env.extras import MODULE_EXTRAS

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(MODULE_EXTRAS.values()) <= set(extras)
