"""Test-session settings.

The tests play one game at a time, and the trained policies they load are small
networks: PyTorch's intra-op threads only contend for the CPU (on a busy 2-core machine
a test that plays 400 games with a policy took minutes instead of seconds). One thread,
as ``train.py`` and the benchmark's workers use.

The JAX tests train tiny networks, so XLA's compilation is most of their time: they
compile without XLA's backend optimisations, which do nothing for networks of eight units
but cost a third of each compile. They write no persistent compilation cache
(``MEMTAB_JAX_CACHE=off``, inherited by the subprocesses the tests start): in a worker
that had run some 780 tests, jaxlib 0.10.2 failed to serialise one of the update
programs for the cache, and unwinding that C++ error crashed the process (a segfault in
``_Unwind_Find_FDE``); without the cache the JAX tests take about 12% longer.
``tests/test_jax_cache.py`` checks the cache itself, in fresh processes. Both are
environment settings read when JAX starts; a caller's own values win.
"""

from __future__ import annotations

import os

os.environ.setdefault("MEMTAB_JAX_CACHE", "off")
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0".strip()


def pytest_configure(config) -> None:  # noqa: ARG001 - pytest hook signature
    try:
        import torch
    except ImportError:  # pragma: no cover - torch comes with the dev extra
        return
    torch.set_num_threads(1)
