"""What a run or a committed figure was computed on: library versions, CPU and devices.

Seeded runs are bit-identical only on the same platform (floating-point reductions and
kernels differ between CPUs, BLAS builds and library versions, and training amplifies
the differences over updates), so every committed figure that comes from a run records
this block beside it: the memory study's run files, ``docs/evals/*.json`` and the golden
files under ``tests/golden/``.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
from collections.abc import Sequence
from typing import Any

#: the libraries whose versions can move a figure (missing ones are recorded as None)
PACKAGES = ("memtab-env", "numpy", "numba", "gymnasium", "pettingzoo", "torch", "stable-baselines3",
            "sb3-contrib", "jax", "jaxlib", "memax", "equinox", "optax")


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` where there is one)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return cpu


#: vector instruction sets that CPU kernels (torch, XLA, BLAS) dispatch on, widest first
ISA_FLAGS = ("avx512f", "avx2", "avx", "sse4_2", "asimd", "neon")


def cpu_isa(cpuinfo: str = "/proc/cpuinfo") -> str | None:
    """The widest vector instruction set this CPU reports (``avx512f``, ``avx2``, ...), or
    None where ``cpuinfo`` says nothing. Two CPUs of one model name (a virtual machine's
    "AMD EPYC") can differ here, and kernels that dispatch on it round differently."""
    try:
        with open(cpuinfo) as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f
                          if line.startswith(("flags", "Features"))), set())
    except OSError:
        return None
    return next((flag for flag in ISA_FLAGS if flag in flags), None)


def platform_info(packages: Sequence[str] = PACKAGES) -> dict[str, Any]:
    """Python, the versions of ``packages``, the CPU (its model name and widest vector
    instruction set) and, when JAX is installed, its devices."""
    versions: dict[str, str | None] = {}
    for name in packages:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    info: dict[str, Any] = {"python": platform.python_version(), "versions": versions,
                            "cpu": cpu_name(), "cpu_isa": cpu_isa(), "cpu_count": os.cpu_count()}
    if versions.get("jax"):
        import jax

        devices = jax.devices()
        info["devices"] = f"{len(devices)} x {devices[0].device_kind}"
    return info
