"""Keeping numba's on-disk kernel cache honest across modules.

numba checks a cached function against its own source file only, but the batched kernels
carry functions of other modules compiled into them (a game's rules kernels inlined,
:mod:`memtab_env.vector.rng`, :mod:`memtab_env.vector.batch_kernels`,
:mod:`memtab_env.vector.memory_kernels`, the scalar engines' constants): after an edit of
one of those, the cache would still serve old code. Every module of ``cache=True`` kernels
that compiles in another module's code ends with a call of :func:`invalidate_stale_cache`
naming those modules. :func:`compiled_entry` is how the scalar engines call a rules kernel
once per flip without numba's dispatcher.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Sequence
from typing import Any

from numba.core.dispatcher import Dispatcher


def invalidate_stale_cache(namespace: dict[str, Any], modules: Sequence[Any], stamp_name: str) -> None:
    """Drop the cached kernels of a module (its ``globals()``, ``namespace``) when code
    they compile in has changed.

    A digest of the ``modules``' sources is kept beside the cache (file ``stamp_name`` in
    the module's cache directory, so the name must differ between modules of one
    folder); a different digest empties the cache index of every kernel the module
    defines. Kernels it imports from other modules are theirs to check: they are left
    alone, and so is their cache directory.
    """
    digest = hashlib.sha256("".join(inspect.getsource(m) for m in modules).encode()).hexdigest()
    kernels = [
        f for f in namespace.values()
        if isinstance(f, Dispatcher) and hasattr(f._cache, "cache_path")
        and f.py_func.__module__ == namespace["__name__"]
    ]  # fmt: skip
    if not kernels:
        return
    stamp = os.path.join(kernels[0]._cache.cache_path, stamp_name)
    try:
        with open(stamp, encoding="ascii") as fh:
            if fh.read() == digest:
                return
    except OSError:
        pass
    try:
        for f in kernels:
            f._cache.flush()
        with open(stamp, "w", encoding="ascii") as fh:
            fh.write(digest)
    except OSError:  # a read-only cache directory: numba cannot save there either
        pass


def compiled_entry(kernel: Any, signature: tuple[Any, ...]) -> Any:
    """The machine-code entry of ``kernel`` for the argument types ``signature``, called
    without numba's dispatcher; ``kernel`` itself under ``NUMBA_DISABLE_JIT``.

    The dispatcher matches argument types on every call; for the per-flip calls of the
    scalar envs that is about a third of the call's cost. The entry point skips it and so
    trusts its caller to pass exactly those types (the engines own the arrays they pass).
    """
    compile_ = getattr(kernel, "compile", None)
    return kernel if compile_ is None else compile_(signature)
