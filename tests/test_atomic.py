"""The one atomic writer (:mod:`memtab_env.atomic`): whole files or none, temporary files
next to the target and removed on error, data flushed before the rename, and no other
write-then-rename left in the package."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtab_env import atomic

ROOT = Path(__file__).resolve().parents[1]


def test_writes_whole_files_with_the_usual_permissions(tmp_path):
    path = tmp_path / "new" / "folder" / "r.json"
    atomic.write_json(path, {"a": [1, 2]}, indent=None)
    assert path.read_text() == '{"a": [1, 2]}\n'
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
    assert os.listdir(path.parent) == ["r.json"]


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, error):
    path = tmp_path / "r.txt"
    atomic.write_text(path, "old")
    with pytest.raises(error), atomic.atomic_file(path) as f:
        f.write("half of the new")
        raise error("stopped")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.txt"]


def test_the_temporary_file_is_beside_the_target_and_keeps_its_suffix(tmp_path, monkeypatch):
    moves = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (moves.append((Path(a), Path(b))), real(a, b)))
    with atomic.atomic_path(tmp_path / "fig.png") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(atomic.TMP_PREFIX)
        assert tmp.name.endswith(".fig.png")
        tmp.write_bytes(b"png")
    assert moves == [(tmp, tmp_path / "fig.png")]


def test_two_writers_of_one_target_never_share_a_temporary(tmp_path):
    with atomic.atomic_path(tmp_path / "x") as a, atomic.atomic_path(tmp_path / "x") as b:
        assert a != b
        a.write_text("a")
        b.write_text("b")
    assert (tmp_path / "x").read_text() == "a"  # the outer block ends last


def test_data_is_flushed_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd)))
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b)))
    atomic.write_bytes(tmp_path / "b", b"x")
    assert events == ["fsync", "replace", "fsync"]  # the file, the rename, the folder
    events.clear()
    atomic.write_bytes(tmp_path / "b", b"y", sync=False)
    assert events == ["replace"]


@settings(max_examples=30, deadline=None)
@given(data=st.binary(max_size=2048), text=st.text(max_size=200))
def test_round_trip(tmp_path_factory, data, text):
    folder = tmp_path_factory.mktemp("rt")
    atomic.write_bytes(folder / "b.bin", data)
    atomic.write_text(folder / "t.txt", text)
    assert (folder / "b.bin").read_bytes() == data
    with open(folder / "t.txt", encoding="utf-8", newline="") as f:
        assert f.read() == text
    assert sorted(os.listdir(folder)) == ["b.bin", "t.txt"]


def test_no_other_write_then_rename_in_the_package():
    """Every file written for others goes through :mod:`memtab_env.atomic`: no other module
    renames a temporary file into place."""
    pattern = re.compile(r"os\.replace\(|os\.rename\(|mkstemp\(|\btmp\w*\.replace\(|\.rename\(")
    allowed = {"memtab_env/atomic.py", "memtab_env/record.py"}  # record.py: a folder of records
    found = []
    for folder in ("memtab_env", "agents"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line) and rel not in allowed:
                    found.append(f"{rel}:{n}: {line.strip()}")
    for rel in ("train.py",):
        if pattern.search((ROOT / rel).read_text()):
            found.append(rel)
    assert not found, "\n".join(found)
