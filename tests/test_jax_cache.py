"""The persistent compilation cache (:mod:`memtab_env.jax.cache`): where it lives, how it is
turned off, and that a second process loads what the first compiled. The session itself
runs with the cache off (``tests/conftest.py``), so these checks run in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

from memtab_env.jax import cache  # noqa: E402

#: compiles one small program with the project's cache on (and no lower bound on the compile
#: time, so that a program this small is kept), then prints the folder and jax's cache hits
COMPILE_ONCE = """
import jax, jax.numpy as jnp
from memtab_env.jax.cache import enable_compilation_cache
hits = []
jax.monitoring.register_event_listener(lambda event, **_: hits.append(event))
path = enable_compilation_cache()
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.jit(lambda x: jnp.cumsum(x * 3.0) - x)(jnp.arange(6.0)).block_until_ready()
print(path, hits.count("/jax/compilation_cache/cache_hits"))
"""


def _compile_once(env: dict[str, str]) -> tuple[str, int]:
    clean = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR", cache.ENV_VAR)}
    done = subprocess.run([sys.executable, "-c", COMPILE_ONCE], env={**clean, **env}, capture_output=True,
                          text=True, timeout=300, check=True)
    path, hits = done.stdout.split()
    return path, int(hits)


def test_a_second_process_loads_the_program_the_first_compiled(tmp_path: Path) -> None:
    folder = tmp_path / "jax-cache"
    assert _compile_once({cache.ENV_VAR: str(folder)}) == (str(folder), 0)
    assert any(folder.iterdir())  # the first process wrote its program
    path, hits = _compile_once({cache.ENV_VAR: str(folder)})
    assert path == str(folder) and hits >= 1  # the jitted function (and jnp.arange's program)


def test_off_disables_the_cache_in_a_fresh_process(tmp_path: Path) -> None:
    assert _compile_once({cache.ENV_VAR: "off", "XDG_CACHE_HOME": str(tmp_path)}) == ("None", 0)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("value", "expected"), [
    ("off", None), ("OFF", None), ("0", None), ("false", None), ("no", None),
    ("/data/jax", Path("/data/jax")), (" ~/jax ", Path("~/jax").expanduser()),
])
def test_the_folder_follows_the_environment_variable(monkeypatch: pytest.MonkeyPatch, value: str,
                                                     expected: Path | None) -> None:
    monkeypatch.setenv(cache.ENV_VAR, value)
    assert cache.cache_dir() == expected


def test_without_the_variable_the_folder_is_under_the_user_cache(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "memtab-env" / "jax"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir() == Path.home() / ".cache" / "memtab-env" / "jax"
