"""Reading files that others wrote: records, results, boards, configs, run manifests.

Every such file is data, never code, and may be hostile. The helpers here read one with
limits and answer anything malformed with a :class:`~memtab_env.errors.MemTabError`
(the caller chooses the subclass) that names the file, the line and the field:

- only regular files are opened (never a pipe, a device or a folder; the type is checked
  on the open descriptor, so a file swapped for a pipe after the check cannot hang the
  reader), and each has a size limit (decompressed size for gzip);
- a path named *inside* a file is followed only when it resolves inside a given root
  (the results tree) or the package's own data (:func:`resolve_inside`);
- text must be UTF-8; JSON must be strict: no ``NaN``/``Infinity``, no duplicate keys,
  no number of more than :data:`MAX_NUMBER_CHARS` characters, no nesting deeper than
  :data:`MAX_DEPTH` (:func:`loads_json`);
- :func:`line_of` finds the line of a field in a JSON text, so a schema error can say
  where the field is.

The standard library's ``json`` does the parsing; the limits are hooks around it (no
JSON library in the dependency set offers depth, number and duplicate-key limits).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import stat
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from memtab_env.errors import MemTabError

#: largest JSON file read whole (results, boards, records as one .json, latest.json)
MAX_JSON_BYTES = 16 * 1024 * 1024
#: largest records file, after decompression
MAX_RECORDS_BYTES = 512 * 1024 * 1024
#: longest line of a ``.jsonl`` records file
MAX_LINE_BYTES = 4 * 1024 * 1024
#: deepest nesting of arrays and objects accepted in a JSON value
MAX_DEPTH = 32
#: longest number (in characters) accepted in JSON: larger ones are refused, not rounded
MAX_NUMBER_CHARS = 40
#: the package's own data folder (shipped boards and policies live under the package)
PACKAGE_ROOT = Path(__file__).resolve().parent

Field = Sequence[str | int]


def field_text(field: Field) -> str:
    """``("runs", 0, "overall")`` as ``runs[0].overall``."""
    out = ""
    for part in field:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def where(source: str | os.PathLike[str], line: int | None = None, field: Field | None = None) -> str:
    """``FILE:LINE: field F`` (the parts that are known)."""
    text = os.fspath(source)
    if line is not None:
        text += f":{line}"
    if field:
        text += f": field {field_text(field)}"
    return text


def resolve_inside(name: Any, base: Path, roots: Sequence[Path], error: type[MemTabError],
                   source: str, field: Field) -> Path:
    """The path ``name`` (relative to ``base``) read from ``source``, which must resolve
    (symbolic links followed) inside one of ``roots`` or the package's own folder;
    ``error`` otherwise."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise error(f"{where(source, None, field)}: expected a relative path, got {name!r:.80}")
    try:
        path = (base / name).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise error(f"{where(source, None, field)}: cannot resolve {name!r:.80}: {exc}") from exc
    allowed = [Path(r).resolve() for r in roots] + [PACKAGE_ROOT]
    if not any(path == r or path.is_relative_to(r) for r in allowed):
        raise error(
            f"{where(source, None, field)}: {name!r:.80} resolves to {path}, outside "
            f"{', '.join(str(r) for r in allowed)}; a path inside a file must stay inside the "
            "folder it came from (or the package's data)"
        )
    return path


def stat_path(path: str | os.PathLike[str], error: type[MemTabError], what: str = "file") -> os.stat_result:
    """``os.stat`` of ``path`` (links followed; nothing is opened), or ``error`` naming it
    (``what``: how a missing one is called)."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise error(f"{os.fspath(path)}: no such {what}") from None
    except OSError as exc:
        raise error(f"{os.fspath(path)}: cannot be read ({exc.strerror or exc})") from None


def _require_regular(st: os.stat_result, p: str, error: type[MemTabError]) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{p}: is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{p}: not a regular file (a pipe, socket or device is never read)")


def check_regular(path: str | os.PathLike[str], error: type[MemTabError]) -> int:
    """The size of ``path`` if it is a regular file (links followed); ``error`` at once
    otherwise (a folder, a pipe, a device such as a link to ``/dev/zero``, a missing file),
    from ``os.stat`` alone: nothing is opened, so nothing can block."""
    st = stat_path(path, error)
    _require_regular(st, os.fspath(path), error)
    return st.st_size


def open_regular(path: str | os.PathLike[str], error: type[MemTabError], limit: int) -> Any:
    """Open ``path`` for binary reading if it is a regular file of at most ``limit``
    bytes; ``error`` otherwise (a folder, a pipe, a device, a missing file)."""
    p = os.fspath(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise error(f"{p}: is a folder, not a file") from None
    except OSError as exc:
        raise error(f"{p}: cannot be opened ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        _require_regular(st, p, error)
        if st.st_size > limit:
            raise error(f"{p}: {st.st_size} bytes, more than the limit of {limit} bytes")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str], error: type[MemTabError], limit: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``)."""
    with open_regular(path, error, limit) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise error(f"{os.fspath(path)}: more than the limit of {limit} bytes")
    return data


def sha256(path: str | os.PathLike[str], error: type[MemTabError]) -> str:
    """SHA-256 (hex) of the regular file ``path``, read in blocks (no size limit)."""
    h = hashlib.sha256()
    with open_regular(path, error, 1 << 40) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def decode(data: bytes, source: str, error: type[MemTabError], line: int | None = None) -> str:
    """``data`` as UTF-8, or ``error`` naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        raise error(f"{where(source, at)}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


class _Refused(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number (NaN and infinities are refused)")


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"number {text[:20]}... has {len(text)} digits, more than {MAX_NUMBER_CHARS}")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"number {text[:20]}... has {len(text)} characters, more than {MAX_NUMBER_CHARS}")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"number {text} is too large for a float")
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"duplicate key {key!r:.60}")
        out[key] = value
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_no_constant,
                            parse_int=_int, parse_float=_float)
_WS = re.compile(r"[ \t\n\r]*")


def _depth_ok(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            if d > MAX_DEPTH:
                return False
            stack.extend((x, d + 1) for x in v)
    return True


def loads_json(text: str, source: str, error: type[MemTabError], line: int | None = None) -> Any:
    """Parse ``text`` as strict JSON (module docstring); ``error`` names ``source`` and
    the line (``line`` when the text is one line of a larger file)."""
    def at(pos: int) -> int:
        return line if line is not None else text.count("\n", 0, pos) + 1

    if not text.strip():
        raise error(f"{where(source, line or 1)}: empty; expected a JSON value")
    try:
        value, end = _DECODER.raw_decode(text, _WS.match(text, 0).end())
    except json.JSONDecodeError as exc:
        raise error(f"{where(source, at(exc.pos))}: not valid JSON ({exc.msg}, column {exc.colno}); "
                    "was the file cut short?") from None
    except _Refused as exc:
        raise error(f"{where(source, line)}: refused JSON: {exc}") from None
    except RecursionError:
        raise error(f"{where(source, line)}: JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # int() of a number Python refuses to convert
        raise error(f"{where(source, line)}: refused JSON number: {exc}") from None
    end = _WS.match(text, end).end()
    if end != len(text):
        raise error(f"{where(source, at(end))}: extra data after the JSON value")
    if not _depth_ok(value):
        raise error(f"{where(source, line)}: JSON nested deeper than {MAX_DEPTH} levels")
    return value


def load_json(path: str | os.PathLike[str], error: type[MemTabError], limit: int = MAX_JSON_BYTES) -> Any:
    """Read the JSON file ``path`` (regular, at most ``limit`` bytes, UTF-8, strict)."""
    source = os.fspath(path)
    return loads_json(decode(read_bytes(path, error, limit), source, error), source, error)


def _past_value(text: str, idx: int) -> int:
    """The index after the JSON value at ``idx`` of ``text`` and the comma that follows it."""
    _, idx = _DECODER.raw_decode(text, idx)
    idx = _WS.match(text, idx).end()
    if text[idx] == ",":
        idx = _WS.match(text, idx + 1).end()
    return idx


def line_of(text: str, field: Field) -> int | None:
    """The line where ``field`` (keys and indices) starts in the JSON ``text``, or the
    line of its deepest parent that exists; None if ``text`` is not JSON."""
    try:
        idx = _WS.match(text, 0).end()
        for part in field:
            ch = text[idx]
            if ch == "{" and isinstance(part, str):
                idx = _WS.match(text, idx + 1).end()
                while text[idx] == '"':
                    key, idx = json.decoder.scanstring(text, idx + 1)
                    idx = _WS.match(text, _WS.match(text, idx).end() + 1).end()  # past ':'
                    if key == part:
                        break
                    idx = _past_value(text, idx)
                else:
                    break
            elif ch == "[" and isinstance(part, int):
                idx = _WS.match(text, idx + 1).end()
                for _ in range(part):
                    if text[idx] == "]":
                        break
                    idx = _past_value(text, idx)
            else:
                break
        return text.count("\n", 0, idx) + 1
    except (IndexError, ValueError, RecursionError):
        return None


def iter_lines(path: str | os.PathLike[str], error: type[MemTabError]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every non-blank line of a ``.jsonl`` or ``.jsonl.gz``
    file, within the limits (decompressed size, line length, UTF-8)."""
    source = os.fspath(path)
    raw = open_regular(path, error, MAX_RECORDS_BYTES)
    total = 0
    try:
        stream: Any = gzip.GzipFile(fileobj=raw, mode="rb") if source.endswith(".gz") else raw
        n = 0
        while True:
            try:
                data = stream.readline(MAX_LINE_BYTES + 1)
            except (OSError, EOFError, zlib.error) as exc:
                raise error(f"{where(source, n + 1)}: not a readable gzip file ({exc}); "
                            "was it cut short?") from None
            if not data:
                return
            n += 1
            total += len(data)
            if len(data) > MAX_LINE_BYTES:
                raise error(f"{where(source, n)}: line longer than {MAX_LINE_BYTES} bytes")
            if total > MAX_RECORDS_BYTES:
                raise error(f"{source}: more than {MAX_RECORDS_BYTES} bytes of records (decompressed)")
            text = decode(data, source, error, n)
            if text.strip():
                yield n, text
    finally:
        raw.close()


def expect(obj: Any, key: str, kind: type | tuple[type, ...], error: type[MemTabError],
           source: str, field: Field = (), optional: bool = False) -> Any:
    """``obj[key]`` if ``obj`` is an object holding a value of ``kind`` there (a bool is
    never an int); ``error`` naming the field otherwise."""
    here = (*field, key)
    if not isinstance(obj, dict):
        raise error(f"{where(source, None, field or None)}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        if optional:
            return None
        raise error(f"{where(source, None, here)}: missing")
    value = obj[key]
    if optional and value is None:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise error(f"{where(source, None, here)}: expected {names}, got {type(value).__name__} "
                    f"{value!r:.60}")
    return value
