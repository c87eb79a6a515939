"""Write the normalised-score anchors measured in ``DIR`` into the track table.

Usage: ``python results/set_anchors.py DIR`` where ``DIR/<track>/<agent>.json`` holds the
results of ``random`` and of each track's strongest reference agent (``results/regenerate.sh``
makes them). Rewrites the ``anchors=`` line of every track in
``memtab_env/protocol/tracks.py`` and the anchors column of ``BENCHMARK.md``, and prints
what changed. Anchors that change after results were published call for a new track
version (``BENCHMARK.md``, "Versions").
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from memtab_env.protocol.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]


def main(folder: str) -> int:
    src = ROOT / "memtab_env/protocol/tracks.py"
    doc = ROOT / "BENCHMARK.md"
    code, text = src.read_text(), doc.read_text()
    for t in TRACKS.values():
        anchors = {}
        for name in ("random", t.strongest):
            result = json.loads((Path(folder) / t.id / f"{name}.json").read_text())
            anchors[name] = result["runs"][0]["overall"]["win_rate"]
        if anchors != dict(t.anchors):
            print(f"{t.id}: anchors {dict(t.anchors)} -> {anchors}")
        pattern = rf'\n        Track\(\n            id="{re.escape(t.id)}",\n.*?\n        \),'
        block = re.search(pattern, code, re.S)
        assert block is not None, f"no Track block for {t.id} in {src}"
        new_block = re.sub(r"anchors=\{[^}]*\}", f"anchors={json.dumps(anchors)}", block.group(0))
        code = code.replace(block.group(0), new_block)
        cell = f"{anchors['random']:.4f} / {anchors[t.strongest]:.4f}"
        text = re.sub(rf"^(\| `{re.escape(t.id)}` \|.*\| )[^|]* \|$", rf"\g<1>{cell} |", text, flags=re.M)
    src.write_text(code)
    doc.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
