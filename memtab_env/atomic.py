"""Writing files that others read: whole or not at all.

Every file the package writes for someone else (results, records, the leaderboard, run
manifests, checkpoints, models, figures) goes through :func:`atomic_path`: the content is
written to a temporary file in the target's own folder (so the final rename never
crosses a file system), flushed to disk (``fsync`` of the file, then of the folder after
the rename, so a crash leaves the old file or the new one, never a torn one), and moved
onto the target with :func:`os.replace`; on any error, Ctrl-C included, the temporary
file is removed and the target is untouched.

Temporary files are named ``.tmp.<random>.<name>``: hidden, unique per writer (two
processes writing the same target never share one), and ending in the target's name so
that writers that choose a format by suffix (``savefig``, ``.zip``) see the right one.
Leftovers of a killed process carry :data:`TMP_PREFIX`, which is how a run folder's
cleanup (:func:`memtab_env.train.manifest.clean_leftovers`) recognises them.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

#: the start of every temporary file's name
TMP_PREFIX = ".tmp."


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync(path: Path, folder: bool = False) -> None:
    """Flush ``path`` (a file, or with ``folder`` a directory's entries) to disk; a file
    system that cannot sync a folder is left as it is."""
    try:
        fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if folder else 0))
    except OSError:
        if folder:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not folder:
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], sync: bool = True) -> Iterator[Path]:
    """A fresh temporary path next to ``path`` for the block to write; moved onto ``path``
    when the block succeeds, removed when it fails (the module docstring). The file gets
    the usual permissions (``0666 & ~umask``), not ``mkstemp``'s private 0600.
    ``sync=False`` skips the ``fsync`` calls (a file nobody needs after a crash)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX, suffix=f".{path.name}")
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        yield tmp
        if sync:
            _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync:
        _fsync(path.parent, folder=True)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], binary: bool = False, sync: bool = True) -> Iterator[IO[Any]]:
    """:func:`atomic_path` as an open file (text, UTF-8, or ``binary``)."""
    with atomic_path(path, sync) as tmp, \
            (open(tmp, "wb") if binary else open(tmp, "w", encoding="utf-8")) as f:
        yield f


def write_with(path: str | os.PathLike[str], write: Callable[[Path], Any], sync: bool = True) -> None:
    """``write(tmp)`` (a writer that takes a path: ``model.save``, ``savefig``, equinox's
    serialisation), then the temporary file moved onto ``path`` (:func:`atomic_path`)."""
    with atomic_path(path, sync) as tmp:
        write(tmp)


def write_bytes(path: str | os.PathLike[str], data: bytes, sync: bool = True) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_file(path, binary=True, sync=sync) as f:
        f.write(data)


def write_text(path: str | os.PathLike[str], text: str, sync: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_file(path, sync=sync) as f:
        f.write(text)


def write_json(path: str | os.PathLike[str], obj: Any, indent: int | None = 1,
               sort_keys: bool = False) -> None:
    """Write ``obj`` as JSON (and a final newline) to ``path`` atomically."""
    write_text(path, json.dumps(obj, indent=indent, sort_keys=sort_keys) + "\n")
