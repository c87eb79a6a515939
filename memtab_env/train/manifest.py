"""What a run wrote: ``manifest.json`` in the run folder lists every checkpoint, replay
buffer, self-play snapshot and final model the run itself wrote, with its SHA-256. The
self-play pool and ``--resume`` load only files listed there with that hash; anything
else found in the run folder (a file copied in, a leftover of a killed write) is never
loaded.

Crash safety: every file is written to a temporary name that starts with ``.tmp.`` (so it
never matches ``step_*.zip``, ``snapshot_*.zip`` or ``replay_buffer_*.pkl``) and renamed
into place, then the manifest is rewritten atomically. A run killed at any moment leaves
either the old state or the new one; :func:`clean_leftovers` removes temporary files and
unlisted files of those names at the start of a run or a resume.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from memtab_env import untrusted
from memtab_env.atomic import TMP_PREFIX, write_json
from memtab_env.train.config import ConfigError

FORMAT = "memtab-run-manifest/1"
NAME = "manifest.json"
#: the files a run owns in its folder (relative path patterns)
OWNED = re.compile(r"(checkpoints/(step_\d{12}\.zip|replay_buffer_\d{12}\.pkl|state_\d{12}\.eqx)"
                   r"|pool/snapshot_\d{12}\.zip"
                   r"|model\.zip)")
_HEX = re.compile(r"[0-9a-f]{64}")


def sha256(path: Path) -> str:
    """SHA-256 (hex) of the regular file ``path``."""
    return untrusted.sha256(path, ConfigError)


class Manifest:
    """The manifest of the run folder ``run_dir`` (read with :meth:`load`)."""

    def __init__(self, run_dir: Path, files: dict[str, str] | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.files: dict[str, str] = dict(files or {})

    @property
    def path(self) -> Path:
        return self.run_dir / NAME

    @classmethod
    def load(cls, run_dir: Path) -> Manifest:
        """The manifest of ``run_dir`` (empty if the run has none yet); :class:`ConfigError`
        naming the file and field if it is malformed."""
        path = Path(run_dir) / NAME
        if not path.exists():
            return cls(run_dir)
        obj = untrusted.load_json(path, ConfigError)
        if not isinstance(obj, dict) or obj.get("format") != FORMAT or set(obj) != {"format", "files"}:
            raise ConfigError(f"{path}: field format: not a {FORMAT} object with 'format' and 'files'")
        files = obj["files"]
        if not isinstance(files, dict):
            raise ConfigError(f"{path}: field files: expected an object")
        for rel, digest in files.items():
            if not OWNED.fullmatch(rel) or not (isinstance(digest, str) and _HEX.fullmatch(digest)):
                raise ConfigError(f"{path}: field files.{rel[:80]}: not a file a run writes with its "
                                  "SHA-256")
        return cls(run_dir, files)

    def save(self) -> None:
        write_json(self.path, {"format": FORMAT, "files": dict(sorted(self.files.items()))}, indent=1)

    def _rel(self, path: Path) -> str:
        return Path(path).resolve().relative_to(self.run_dir.resolve()).as_posix()

    def add(self, path: Path) -> None:
        """Record ``path`` (just written by the run) with its hash."""
        self.files[self._rel(path)] = sha256(path)
        self.save()

    def remove(self, paths: Iterable[Path]) -> None:
        """Forget ``paths`` (then the caller deletes them)."""
        for p in paths:
            self.files.pop(self._rel(p), None)
        self.save()

    def verified(self, path: Path) -> bool:
        """Whether ``path`` is a file this run wrote, unchanged since."""
        try:
            rel = self._rel(path)
        except (ValueError, OSError):
            return False
        return rel in self.files and path.is_file() and sha256(path) == self.files[rel]

    def check(self, path: Path, what: str) -> Path:
        """``path`` if :meth:`verified`, else :class:`ConfigError` saying why it is refused."""
        if not self.verified(path):
            raise ConfigError(f"{path}: the {what} is not a file this run wrote (missing from {self.path}, "
                              "or changed since); it is not loaded")
        return path


def clean_leftovers(run_dir: Path, manifest: Manifest) -> list[Path]:
    """Remove temporary files (``.tmp.*``) and files of a run's names that the manifest does
    not list from ``run_dir``, ``checkpoints/`` and ``pool/``; return what was removed."""
    removed = []
    for folder in (run_dir, run_dir / "checkpoints", run_dir / "pool"):
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            rel = p.relative_to(run_dir).as_posix()
            unlisted = OWNED.fullmatch(rel) and rel not in manifest.files
            temporary = p.name.startswith(TMP_PREFIX) or (p.name.startswith(".") and p.name.endswith(".tmp"))
            if p.is_file() and (temporary or unlisted):
                p.unlink()
                removed.append(p)
    return removed
