"""Test-session settings.

The tests play one game at a time, and the trained policies they load are small
networks: PyTorch's intra-op threads only contend for the CPU (on a busy 2-core machine
a test that plays 400 games with a policy took minutes instead of seconds). One thread,
as ``train.py`` and the benchmark's workers use.

The JAX tests train tiny networks, so XLA's compilation is most of their time: the
session keeps one persistent compilation cache (shared by the xdist workers and the
subprocesses the tests start, which inherit the environment), so a program compiled by
one process is loaded by the others, and compiles without XLA's backend optimisations,
which do nothing for networks of eight units but cost a third of each compile. Both are
environment settings read when JAX starts; a caller's own values win.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:  # the first process of the session
    _cache = tempfile.mkdtemp(prefix="memtab-test-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0".strip()


def pytest_configure(config) -> None:  # noqa: ARG001 - pytest hook signature
    try:
        import torch
    except ImportError:  # pragma: no cover - torch comes with the dev extra
        return
    torch.set_num_threads(1)
