"""numba's cache checks a kernel against its own file only; ``invalidate_stale_cache``
drops a module's cached kernels when a module compiled into them changes (the game
folders' batched kernels compile in the shared kernels and the games' rules)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

KERNELS = textwrap.dedent('''
    from numba import njit

    import dep
    from dep import helper
    from memtab_env.vector.numba_cache import invalidate_stale_cache


    @njit(cache=True)
    def kernel(x):
        return helper(x) + 1


    invalidate_stale_cache(globals(), [dep], "kernels.deps")
''')
DEP = textwrap.dedent('''
    from numba import njit


    @njit(cache=True)
    def helper(x):
        return x * {factor}
''')
CALL = ("import kernels; r = kernels.kernel(3); s = kernels.kernel.stats; "
        "print(r, sum(s.cache_hits.values()), sum(s.cache_misses.values()))")


def _run(folder: Path) -> tuple[int, int, int]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]),
               NUMBA_CACHE_DIR=str(folder / "numba-cache"))
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", CALL], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout.split()
    result, hits, misses = (int(x) for x in out)
    return result, hits, misses


def test_a_change_in_a_compiled_in_module_drops_the_cached_kernels(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "dep.py").write_text(DEP.format(factor=2))
    assert _run(tmp_path) == (7, 0, 1)  # compiled, then cached
    assert _run(tmp_path) == (7, 1, 0)  # from the cache
    (tmp_path / "dep.py").write_text(DEP.format(factor=10))
    assert _run(tmp_path) == (31, 0, 1)  # the stale kernel was dropped and compiled again
    stamps = list((tmp_path / "numba-cache").rglob("kernels.deps"))
    assert len(stamps) == 1
    assert list(stamps[0].parent.glob("kernels.kernel-*.nbi"))  # beside the module's own cache
