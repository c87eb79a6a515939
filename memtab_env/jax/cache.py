"""JAX's persistent compilation cache for this project: compiled XLA programs are kept on
disk, so a second run of the same config (a resumed study cell, the next seed group, a
benchmark repeat) loads its update step instead of compiling it again.

Where: ``$MEMTAB_JAX_CACHE`` if set (a directory, or ``off`` to disable), otherwise
``$XDG_CACHE_HOME/memtab-env/jax`` (``~/.cache/memtab-env/jax``). Entries are keyed by
jax's own hash of the program, the jax and XLA versions, the backend and the flags, so a
stale entry is never used; deleting the folder is always safe.
:class:`memtab_env.jax.ppo.Trainer` enables it (and hence ``memtab study``, ``train.py``
with ``backend: jax`` and the benchmarks); a directory set with jax's own
``jax_compilation_cache_dir`` is left as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "MEMTAB_JAX_CACHE"
#: programs that compile faster than this are not worth a file
MIN_COMPILE_SECONDS = 1.0


def cache_dir() -> Path | None:
    """The cache directory this process uses (None: disabled by ``MEMTAB_JAX_CACHE=off``)."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value.lower() in ("off", "0", "false", "no"):
        return None
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "memtab-env" / "jax"


def enable_compilation_cache() -> Path | None:
    """Turn on jax's persistent compilation cache at :func:`cache_dir` (idempotent);
    returns the directory in use, or None when disabled or not writable."""
    import jax

    current = jax.config.jax_compilation_cache_dir
    if current:
        return Path(current)
    path = cache_dir()
    if path is None:
        return None
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only home: run without the cache
    from jax.experimental.compilation_cache import compilation_cache

    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    compilation_cache.reset_cache()  # a cache initialised (unset) by an earlier compile reads the dir again
    return path
