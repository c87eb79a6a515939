"""Write the table of the training config fields into ``docs/training.md``.

The ``Config`` dataclass of :mod:`memtab_env.train.config` (its field docstrings and defaults) is the source
of truth; ``tests/test_train.py`` fails when the table is stale. Run
``python docs/build_training_fields.py`` after changing a field.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "training.md"
START, END = "<!-- fields:start -->", "<!-- fields:end -->"


def table() -> str:
    """The Markdown table: field, type, default, doc."""
    from typing import get_type_hints

    from memtab_env.train.config import Config, field_docs

    docs = field_docs()
    hints = get_type_hints(Config)
    defaults = Config()
    rows = ["| field | type | default | what |", "|---|---|---|---|"]
    for f in dataclasses.fields(Config):
        tp = str(hints[f.name]).replace("typing.", "")
        tp = tp if "[" in tp or "|" in tp else getattr(hints[f.name], "__name__", tp)
        default = getattr(defaults, f.name)
        cell = "`" + repr(default).replace("|", "\\|") + "`"
        rows.append(f"| `{f.name}` | `{tp}` | {cell} | {docs.get(f.name, '').replace('|', '/')} |")
    return "\n".join(rows)


def render(text: str) -> str:
    """``text`` (the page) with the table between the markers replaced."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    if not rest:
        raise SystemExit(f"{PAGE}: marker {START} not found")
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> int:
    PAGE.write_text(render(PAGE.read_text()))
    print(f"wrote the field table of {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
