"""The cell tables of Markdown files, generated in place from the run files: a block
between ``<!-- cells: FOLDER config=CONFIG [level=X] -->`` and ``<!-- /cells -->`` holds
:func:`memtab_env.study.tables.cells_table` of the run files under ``FOLDER``, in the order
of the cells of the study config ``CONFIG`` (paths relative to the working directory; X:
the curve level, default 0.9); a block between ``<!-- reruns: FOLDER against=COMMITTED
config=CONFIG -->`` and ``<!-- /reruns -->`` holds
:func:`memtab_env.study.tables.reruns_table`: each run file under ``FOLDER`` (the same
cells on other seeds) beside its cell under ``COMMITTED``.

    python -m memtab_env.study.doc_tables docs/study.md           # rewrite the blocks
    python -m memtab_env.study.doc_tables --check docs/study.md   # exit 1 when one is stale
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

from memtab_env.study.tables import cells_table, in_study_order, reruns_table

_BLOCK = re.compile(r"(<!-- cells: (?P<folder>\S+) config=(?P<config>\S+)"
                    r"(?: level=(?P<level>[0-9.]+))? -->\n)(?P<table>.*?)(?P<end><!-- /cells -->)",
                    re.DOTALL)
_RERUNS = re.compile(r"(<!-- reruns: (?P<folder>\S+) against=(?P<against>\S+) config=(?P<config>\S+) -->\n)"
                     r"(?P<table>.*?)(?P<end><!-- /reruns -->)", re.DOTALL)


def render_cell_blocks(text: str, root: str | Path = ".") -> str:
    """``text`` with every block ``<!-- cells: FOLDER config=CONFIG [level=X] -->`` ...
    ``<!-- /cells -->`` holding :func:`cells_table` (``curve_level`` X, default 0.9) of the
    run files under ``root / FOLDER``, in the order of the cells of the study config
    ``root / CONFIG``; and every block ``<!-- reruns: FOLDER against=COMMITTED
    config=CONFIG -->`` ... ``<!-- /reruns -->`` holding :func:`reruns_table` of the run
    files under ``root / FOLDER`` against those under ``root / COMMITTED``."""
    from memtab_env.study.grid import load_study
    from memtab_env.study.runs import collect_runs

    def runs(folder: str, config: str) -> list[dict]:
        return in_study_order(collect_runs(Path(root) / folder), load_study(Path(root) / config))

    def filled(match: re.Match[str], lines: list[str]) -> str:
        return match[1] + "".join(line + "\n" for line in lines) + match["end"]

    def cells(match: re.Match[str]) -> str:
        level = float(match["level"]) if match["level"] else 0.9
        return filled(match, cells_table(runs(match["folder"], match["config"]), level))

    def reruns(match: re.Match[str]) -> str:
        return filled(match, reruns_table(runs(match["against"], match["config"]),
                                          runs(match["folder"], match["config"])))

    return _RERUNS.sub(reruns, _BLOCK.sub(cells, text))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m memtab_env.study.doc_tables", description=(
        "Rewrite the generated cell tables of Markdown files (blocks between "
        "'<!-- cells: FOLDER config=CONFIG [level=X] -->' and '<!-- /cells -->') from the run "
        "files under FOLDER, in the order of the study config CONFIG, and the rerun tables "
        "(between '<!-- reruns: FOLDER against=COMMITTED config=CONFIG -->' and "
        "'<!-- /reruns -->'): each run file under FOLDER beside its cell under COMMITTED "
        "(paths relative to the working directory)."))
    ap.add_argument("files", nargs="+", help="Markdown files holding such blocks")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 and name the files whose tables are not current")
    args = ap.parse_args(argv)
    stale = []
    for name in args.files:
        path = Path(name)
        text = path.read_text()
        if not (_BLOCK.search(text) or _RERUNS.search(text)):
            ap.error(f"{name} holds no '<!-- cells: FOLDER config=CONFIG -->' or "
                     "'<!-- reruns: FOLDER against=COMMITTED config=CONFIG -->' block")
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
