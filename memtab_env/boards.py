"""Boards of Memory: The Board Game: the file format, the loader and its checks.

The rule text does not give the board; ``docs/rulings.md`` (board game 1) fixes the
default, which ships as data (``memtab_env/data/board_default.json``) and can be swapped
for another board. The format is also described in ``docs/boards.md``.

File format (``memtab-board/1``), one JSON object::

    {
      "format": "memtab-board/1",          optional; if present, exactly this string
      "name": "default",                   optional short name (default "custom")
      "description": "...",                optional free text
      "rows": 6, "cols": 10,               grid size; spaces are numbered row by row,
                                           space = row * cols + col
      "landscapes": [                      one object per landscape (card colour)
        {"letter": "Y",                    one upper-case letter A-Z, unique
         "name": "farmland",               unique name
         "colour": "yellow",               optional colour name (default: the name)
         "rgb": [236, 201, 75],            optional tile colour for rgb rendering
         "pictures": ["tractor", ...]},    the picture of every pair of this colour
        ...
      ],
      "grid": ["YYYYBGGGGG", ...],         rows of landscape letters; a row may also be a
                                           list of letters or of landscape ids (0-based
                                           index into "landscapes")
      "trunks": {"1": 13, "2": 10,         optional trunk supply: how many trunks of each
                 "3": 7, "4": 5}           size 1..4 (default: the rulebook's 13/10/7/5)
    }

Checks (each failure raises :class:`InvalidOptionError` naming the field, the bad value
and what is allowed):

- every landscape has ``2 * len(pictures)`` spaces: one space for every card of its
  colour, so the cards of the board are exactly its spaces (no unused landscape);
- pictures are unique within a landscape; letters and names are unique;
- *contiguous regions* (docs/rulings.md: "each landscape in contiguous regions"): a *region* is
  a maximal group of spaces of one landscape connected by shared sides. A landscape may
  consist of several regions, but every region must hold at least
  ``min(4, spaces of that landscape)`` spaces, so that a full return of four cards fits
  in any region and no landscape is scattered over single spaces. (The default board has
  exactly one region per landscape.)
- at most :data:`MAX_SPACES` spaces and a trunk supply whose total height is at most 127
  (observations are int8).

Picture (card kind) ids run landscape by landscape in file order: the pictures of
landscape 0 are kinds ``0 .. len-1``, and so on. A card is written with its landscape
letter and its 1-based picture number within the landscape: ``Y1`` .. ``Y6``,
``B1`` .. ``B6``, ...
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from memtab_env.errors import InvalidOptionError

FORMAT = "memtab-board/1"
#: the most cards one return may place (the largest trunk size)
MAX_RETURN = 4
#: the rulebook's supply: trunks of size 1, 2, 3, 4
DEFAULT_TRUNKS = (13, 10, 7, 5)
#: largest board accepted (observation counts are int8; action ids stay small)
MAX_SPACES = 120
#: tile colours used when a landscape gives no ``rgb`` (cycled)
DEFAULT_PALETTE = (
    (236, 201, 75),
    (84, 150, 226),
    (150, 206, 110),
    (56, 128, 60),
    (160, 160, 165),
    (214, 120, 90),
    (170, 120, 200),
    (90, 200, 200),
)
_KEYS = {"format", "name", "description", "rows", "cols", "landscapes", "grid", "trunks"}
_LANDSCAPE_KEYS = {"letter", "name", "colour", "rgb", "pictures"}


class Board:
    """A validated board. Build it with :func:`load_board`; treat it as read-only.

    Attributes:
        name, description: from the file.
        rows, cols: grid size; ``num_spaces = rows * cols``; space ``s`` is at
            ``(s // cols, s % cols)``.
        letters, names, colours, rgbs, pictures: per landscape (tuples).
        landscape: int8[num_spaces], landscape id of every space (read-only array).
        trunks: tuple of 4 counts, trunks of size 1..4 in the supply at the start.
        num_landscapes, num_kinds: counts; ``num_kinds`` = number of picture pairs.
        kind_landscape: int8[num_kinds], the landscape (background colour) of each picture.
        kind_codes: code of each picture, ``"Y1"``.
        adjacency: bool[num_spaces, num_spaces], spaces sharing a side (read-only).
        neighbours: tuple of tuples, the side neighbours of every space.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        rows: int,
        cols: int,
        letters: tuple[str, ...],
        names: tuple[str, ...],
        colours: tuple[str, ...],
        rgbs: tuple[tuple[int, int, int], ...],
        pictures: tuple[tuple[str, ...], ...],
        landscape: np.ndarray,
        trunks: tuple[int, int, int, int],
    ) -> None:
        self.name = name
        self.description = description
        self.rows = rows
        self.cols = cols
        self.num_spaces = rows * cols
        self.letters = letters
        self.names = names
        self.colours = colours
        self.rgbs = rgbs
        self.pictures = pictures
        self.landscape = landscape.astype(np.int8)
        self.landscape.flags.writeable = False
        self.trunks = trunks
        self.num_landscapes = len(letters)
        self.kind_landscape = np.array([i for i, pics in enumerate(pictures) for _ in pics], dtype=np.int8)
        self.kind_landscape.flags.writeable = False
        self.num_kinds = int(self.kind_landscape.size)
        self.kind_codes = tuple(
            f"{letters[i]}{j + 1}" for i, pics in enumerate(pictures) for j in range(len(pics))
        )
        self.kind_names = tuple(p for pics in pictures for p in pics)
        neighbours = []
        adjacency = np.zeros((self.num_spaces, self.num_spaces), dtype=bool)
        for s in range(self.num_spaces):
            r, c = divmod(s, cols)
            near = []
            for dr, dc in ((-1, 0), (0, -1), (0, 1), (1, 0)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < rows and 0 <= cc < cols:
                    near.append(rr * cols + cc)
            neighbours.append(tuple(near))
            adjacency[s, near] = True
        adjacency.flags.writeable = False
        self.adjacency = adjacency
        self.neighbours = tuple(neighbours)

    @property
    def trunk_height(self) -> int:
        """Total height of the supply: the tallest tree a player can grow."""
        return sum((size + 1) * n for size, n in enumerate(self.trunks))

    def spaces_of(self, landscape: int) -> np.ndarray:
        """Spaces of one landscape, in space order."""
        return np.flatnonzero(self.landscape == landscape)

    def regions(self) -> list[list[int]]:
        """Maximal side-connected groups of spaces of one landscape (sorted spaces)."""
        seen = np.zeros(self.num_spaces, dtype=bool)
        out = []
        for start in range(self.num_spaces):
            if seen[start]:
                continue
            colour = self.landscape[start]
            stack, region = [start], []
            seen[start] = True
            while stack:
                s = stack.pop()
                region.append(s)
                for t in self.neighbours[s]:
                    if not seen[t] and self.landscape[t] == colour:
                        seen[t] = True
                        stack.append(t)
            out.append(sorted(region))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The board in the file format (``load_board(board.to_dict())`` rebuilds it)."""
        return {
            "format": FORMAT,
            "name": self.name,
            "description": self.description,
            "rows": self.rows,
            "cols": self.cols,
            "landscapes": [
                {
                    "letter": self.letters[i],
                    "name": self.names[i],
                    "colour": self.colours[i],
                    "rgb": list(self.rgbs[i]),
                    "pictures": list(self.pictures[i]),
                }
                for i in range(self.num_landscapes)
            ],
            "grid": [
                "".join(self.letters[i] for i in self.landscape[r * self.cols : (r + 1) * self.cols])
                for r in range(self.rows)
            ],
            "trunks": {str(size + 1): n for size, n in enumerate(self.trunks)},
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Board(name={self.name!r}, rows={self.rows}, cols={self.cols}, "
            f"landscapes={''.join(self.letters)!r})"
        )


def _fail(msg: str) -> InvalidOptionError:
    return InvalidOptionError(f"invalid board: {msg}")


def _int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _fail(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    if not low <= int(value) <= high:
        raise _fail(f"{name} must be in [{low}, {high}], got {value}")
    return int(value)


def _str(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(f"{name} must be a non-empty string, got {value!r}")
    return value


def _parse_landscape(i: int, item: Any) -> tuple[str, str, str, tuple, tuple]:
    where = f"landscapes[{i}]"
    if not isinstance(item, Mapping):
        raise _fail(f"{where} must be an object with 'letter', 'name' and 'pictures'")
    unknown = set(item) - _LANDSCAPE_KEYS
    if unknown:
        raise _fail(f"{where} has unknown keys {sorted(unknown)}; allowed: {sorted(_LANDSCAPE_KEYS)}")
    for key in ("letter", "name", "pictures"):
        if key not in item:
            raise _fail(f"{where} lacks {key!r}")
    letter = _str(f"{where}.letter", item["letter"])
    if len(letter) != 1 or not ("A" <= letter <= "Z"):
        raise _fail(f"{where}.letter must be one upper-case letter A-Z, got {letter!r}")
    name = _str(f"{where}.name", item["name"])
    colour = _str(f"{where}.colour", item.get("colour", name))
    if "rgb" in item:
        rgb = item["rgb"]
        if not isinstance(rgb, Sequence) or isinstance(rgb, str) or len(rgb) != 3:
            raise _fail(f"{where}.rgb must be a list of 3 integers in [0, 255], got {rgb!r}")
        rgb_t = tuple(_int(f"{where}.rgb[{j}]", v, 0, 255) for j, v in enumerate(rgb))
    else:
        rgb_t = DEFAULT_PALETTE[i % len(DEFAULT_PALETTE)]
    pictures = item["pictures"]
    if not isinstance(pictures, Sequence) or isinstance(pictures, str) or not pictures:
        raise _fail(f"{where}.pictures must be a non-empty list of picture names")
    pics = tuple(_str(f"{where}.pictures[{j}]", p) for j, p in enumerate(pictures))
    dupes = sorted({p for p in pics if pics.count(p) > 1})
    if dupes:
        raise _fail(f"{where} ({name}) lists pictures more than once: {dupes}")
    return letter, name, colour, rgb_t, pics


def _parse_grid(grid: Any, rows: int, cols: int, letters: tuple[str, ...]) -> np.ndarray:
    if not isinstance(grid, Sequence) or isinstance(grid, str) or len(grid) != rows:
        raise _fail(f"grid must be a list of {rows} rows (one per row), got {grid!r}")
    out = np.zeros((rows, cols), dtype=np.int8)
    n = len(letters)
    for r, row in enumerate(grid):
        items = list(row) if isinstance(row, (str, Sequence)) else None
        if items is None or len(items) != cols:
            raise _fail(f"grid[{r}] must hold {cols} spaces, got {row!r}")
        for c, item in enumerate(items):
            if isinstance(item, str):
                if item not in letters:
                    raise _fail(
                        f"grid[{r}][{c}] = {item!r} is not a landscape letter; letters: {list(letters)}"
                    )
                out[r, c] = letters.index(item)
            else:
                out[r, c] = _int(f"grid[{r}][{c}]", item, 0, n - 1)
    return out.ravel()


def _parse_trunks(trunks: Any) -> tuple[int, int, int, int]:
    if not isinstance(trunks, Mapping):
        raise _fail(f"trunks must be an object {{'1': n1, '2': n2, '3': n3, '4': n4}}, got {trunks!r}")
    keys = {str(size) for size in range(1, MAX_RETURN + 1)}
    bad = {str(k) for k in trunks} - keys
    if bad:
        raise _fail(f"trunks has unknown sizes {sorted(bad)}; sizes are {sorted(keys)}")
    counts = tuple(
        _int(f"trunks[{size!r}]", trunks.get(size, trunks.get(int(size), 0)), 0, 127) for size in sorted(keys)
    )
    height = sum((i + 1) * n for i, n in enumerate(counts))
    if height > 127:
        raise _fail(f"the trunks add up to a height of {height}; at most 127 is allowed")
    return counts  # type: ignore[return-value]


def board_from_dict(data: Mapping[str, Any]) -> Board:
    """Validate a board given as a dict in the file format (see the module docstring)."""
    if not isinstance(data, Mapping):
        raise _fail(f"a board is a JSON object, got {type(data).__name__}")
    unknown = set(data) - _KEYS
    if unknown:
        raise _fail(f"unknown keys {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    if "format" in data and data["format"] != FORMAT:
        raise _fail(f"format must be {FORMAT!r}, got {data['format']!r}")
    for key in ("rows", "cols", "landscapes", "grid"):
        if key not in data:
            raise _fail(f"missing {key!r}")
    rows = _int("rows", data["rows"], 1, MAX_SPACES)
    cols = _int("cols", data["cols"], 1, MAX_SPACES)
    if rows * cols > MAX_SPACES:
        raise _fail(f"rows * cols = {rows * cols} spaces; at most {MAX_SPACES} are allowed")
    name = _str("name", data.get("name", "custom"))
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _fail(f"description must be a string, got {description!r}")
    landscapes = data["landscapes"]
    if not isinstance(landscapes, Sequence) or isinstance(landscapes, str) or not landscapes:
        raise _fail("landscapes must be a non-empty list of landscape objects")
    parsed = [_parse_landscape(i, item) for i, item in enumerate(landscapes)]
    letters = tuple(p[0] for p in parsed)
    names = tuple(p[1] for p in parsed)
    for what, values in (("letters", letters), ("names", names)):
        dupes = sorted({v for v in values if values.count(v) > 1})
        if dupes:
            raise _fail(f"landscape {what} must be unique; repeated: {dupes}")
    landscape = _parse_grid(data["grid"], rows, cols, letters)
    counts = np.bincount(landscape, minlength=len(letters))
    for i, (letter, lname, _, _, pics) in enumerate(parsed):
        if counts[i] != 2 * len(pics):
            raise _fail(
                f"landscape {lname!r} ({letter}) has {counts[i]} spaces but "
                f"{len(pics)} pictures, i.e. {2 * len(pics)} cards; every landscape needs "
                f"exactly one space per card of its colour"
            )
    default_trunks = {str(i + 1): n for i, n in enumerate(DEFAULT_TRUNKS)}
    trunks = _parse_trunks(data.get("trunks", default_trunks))
    board = Board(
        name=name,
        description=description,
        rows=rows,
        cols=cols,
        letters=letters,
        names=names,
        colours=tuple(p[2] for p in parsed),
        rgbs=tuple(p[3] for p in parsed),
        pictures=tuple(p[4] for p in parsed),
        landscape=landscape,
        trunks=trunks,
    )
    for region in board.regions():
        i = int(board.landscape[region[0]])
        need = min(MAX_RETURN, int(counts[i]))
        if len(region) < need:
            cells = [divmod(s, cols) for s in region]
            raise _fail(
                f"landscape {names[i]!r} ({letters[i]}) has a region of {len(region)} "
                f"space(s) at (row, col) {cells}; every region of a landscape (spaces "
                f"connected by sides) must hold at least {need} spaces"
            )
    return board


@lru_cache(maxsize=1)
def default_board() -> Board:
    """The board shipped with the package (``memtab_env/data/board_default.json``)."""
    text = resources.files("memtab_env").joinpath("data", "board_default.json").read_text("utf-8")
    return board_from_dict(json.loads(text))


def load_board(source: str | os.PathLike[str] | Mapping[str, Any] | Board | None = None) -> Board:
    """Load and validate a board.

    Args:
        source: ``None`` or ``"default"`` for the shipped board; a :class:`Board`
            (returned as is); a dict in the file format; or the path of a JSON file.

    Raises:
        InvalidOptionError: unreadable file, bad JSON, or a board that breaks a rule of
            the format (the message names the field and what is allowed).
    """
    if source is None or (isinstance(source, str) and source == "default"):
        return default_board()
    if isinstance(source, Board):
        return source
    if isinstance(source, Mapping):
        return board_from_dict(source)
    if isinstance(source, (str, os.PathLike)):
        from memtab_env import untrusted

        data = untrusted.load_json(source, InvalidOptionError)
        try:
            return board_from_dict(data)
        except InvalidOptionError as exc:
            raise InvalidOptionError(f"{os.fspath(source)}: {exc}") from None
    raise InvalidOptionError(
        f"board must be None, 'default', a path to a JSON board file, a dict or a Board; "
        f"got {type(source).__name__}"
    )
