"""Packaging: the installed distribution claims no top-level import name but its own, and
nothing in the package imports a top-level ``agents`` module (another distribution, such
as the OpenAI Agents SDK, installs one)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel built from it (``python -m build``, the dev extra's build
    and setuptools), as CI builds them."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "-o", str(out), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=600)
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (whl,) = dist.glob("memtab_env-*.whl")
    return whl


def test_sdist_holds_the_package_and_license_but_no_tests(dist: Path) -> None:
    """The sdist leaves the tests (and what only they read: results/, docs/) in the
    repository; the wheel built from it is complete (the fixture built it from the sdist)."""
    import tarfile

    (sdist,) = dist.glob("memtab_env-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        pkg_info = tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith("/PKG-INFO")))
        meta = pkg_info.read().decode() if pkg_info else ""
    assert {"LICENSE", "README.md", "pyproject.toml", "setup.py", "agents/policies/ppo_memtab.zip",
            "configs/quick.yaml"} <= names
    assert not any(n.startswith(("tests/", "results/", "docs/")) for n in names), sorted(names)
    assert "License-Expression: MIT" in meta and "License-File: LICENSE" in meta


def test_wheel_claims_only_memtab_env(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    tops = {n.split("/", 1)[0] for n in names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert tops - dist_info == {"memtab_env"}, sorted(tops)
    (info,) = dist_info
    with zipfile.ZipFile(wheel) as z:
        assert z.read(f"{info}/top_level.txt").decode().split() == ["memtab_env"]
    # the baselines, their shipped policies and the configs are inside the package
    for must in ("memtab_env/agents/__init__.py", "memtab_env/agents/policies/ppo_memtab.zip",
                 "memtab_env/configs/quick.yaml", "memtab_env/data/board_default.json",
                 "memtab_env/site/static/viewer.js", "memtab_env/site/static/rules.js",
                 "memtab_env/site/static/site.css"):
        assert must in names, must


def test_installed_metadata_names_only_memtab_env() -> None:
    from importlib.metadata import distribution

    assert distribution("memtab-env").read_text("top_level.txt").split() == ["memtab_env"]


def test_a_foreign_agents_package_does_not_break_memtab_env(tmp_path: Path) -> None:
    """With a top-level ``agents`` package that fails on import first on the path (what
    ``pip install openai-agents`` leaves), the envs, the agents and the shipped policies
    still work: the package never imports ``agents``."""
    foreign = tmp_path / "agents"
    foreign.mkdir()
    (foreign / "__init__.py").write_text("raise ImportError('this is not memtab-env')\n")
    code = (
        "import gymnasium, memtab_env, memtab_env.memtab_v0\n"
        "from memtab_env import agents\n"
        "env = gymnasium.make('MemTab-v0', opponents='greedy'); env.reset(seed=0)\n"
        "env = memtab_env.memtab_v0.env(); env.reset(seed=0); env.state()\n"
        "from memtab_env.play import make_raw_env, play_game\n"
        "players = [agents.make('ppo-memtab'), agents.make('expert')]\n"
        "record = play_game(make_raw_env('memtab'), players, seed=1)\n"
        "agents.make('rppo-memtab-none'); agents.make('ppo-pelmanism', game='pelmanism')\n"
        "import sys; assert 'agents' not in sys.modules, 'a top-level agents module was imported'\n"
        "print('ok', record['result']['winners'])\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok")


def test_twine_check_passes(dist: Path) -> None:
    pytest.importorskip("twine")
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
