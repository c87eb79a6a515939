"""The cell tables of Markdown files, generated in place from the run files: a block
between ``<!-- cells: FOLDER config=CONFIG [level=X] -->`` and ``<!-- /cells -->`` holds
:func:`memtab_env.study.tables.cells_table` of the run files under ``FOLDER``, in the order
of the cells of the study config ``CONFIG`` (paths relative to the working directory; X:
the curve level, default 0.9).

    python -m memtab_env.study.doc_tables docs/study.md           # rewrite the blocks
    python -m memtab_env.study.doc_tables --check docs/study.md   # exit 1 when one is stale
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

from memtab_env.study.tables import cells_table, in_study_order

_BLOCK = re.compile(r"(<!-- cells: (?P<folder>\S+) config=(?P<config>\S+)"
                    r"(?: level=(?P<level>[0-9.]+))? -->\n)(?P<table>.*?)(?P<end><!-- /cells -->)",
                    re.DOTALL)


def render_cell_blocks(text: str, root: str | Path = ".") -> str:
    """``text`` with every block ``<!-- cells: FOLDER config=CONFIG [level=X] -->`` ...
    ``<!-- /cells -->`` holding :func:`cells_table` (``curve_level`` X, default 0.9) of the
    run files under ``root / FOLDER``, in the order of the cells of the study config
    ``root / CONFIG``."""
    from memtab_env.study.grid import load_study
    from memtab_env.study.runs import collect_runs

    def block(match: re.Match[str]) -> str:
        runs = in_study_order(collect_runs(Path(root) / match["folder"]),
                              load_study(Path(root) / match["config"]))
        level = float(match["level"]) if match["level"] else 0.9
        return match[1] + "".join(line + "\n" for line in cells_table(runs, level)) + match["end"]

    return _BLOCK.sub(block, text)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m memtab_env.study.doc_tables", description=(
        "Rewrite the generated cell tables of Markdown files (blocks between "
        "'<!-- cells: FOLDER config=CONFIG [level=X] -->' and '<!-- /cells -->') from the run "
        "files under FOLDER, in the order of the study config CONFIG (paths relative to the "
        "working directory)."))
    ap.add_argument("files", nargs="+", help="Markdown files holding such blocks")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 and name the files whose tables are not current")
    args = ap.parse_args(argv)
    stale = []
    for name in args.files:
        path = Path(name)
        text = path.read_text()
        if not _BLOCK.search(text):
            ap.error(f"{name} holds no '<!-- cells: FOLDER config=CONFIG -->' block")
        new = render_cell_blocks(text)
        if new != text:
            stale.append(name)
            if not args.check:
                path.write_text(new)
    for name in stale:
        print(f"{name}: {'not current' if args.check else 'rewritten'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
