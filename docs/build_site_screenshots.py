"""Take the screenshots of ``docs/site.md`` (``docs/site/*.png``): build the site from
``results/`` into a temporary folder, add two simulated records files (Pelmanism and the
board game, whose tracks ship no records), and photograph every page, served over http
on 127.0.0.1, in the headless Chromium of :mod:`memtab_env.site.browser`. Run from the repository root::

    python docs/build_site_screenshots.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from memtab_env import cli
from memtab_env.site import build_site
from memtab_env.site.browser import open_browser, serve

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "site"
#: (png, page and query, viewport height, full page)
SHOTS = [
    ("leaderboard.png", "index.html", 900, True),
    ("agent.png", "agent.html?agent=gru-memtab-none", 900, False),
    ("study.png", "study.html?track=memtab-2p-none-grid", 900, True),
    ("viewer-memtab.png",
     "viewer.html?record=records/memtab-2p/gru-memtab-none.records.jsonl.gz&game=5&flip=22", 760, False),
    ("viewer-pelmanism.png", "viewer.html?record=extra/pelmanism.jsonl&game=0&flip=41", 760, False),
    ("viewer-board.png", "viewer.html?record=extra/board.jsonl&game=0&flip=120", 860, False),
    ("viewer-start.png", "viewer.html", 640, False),
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build_site(ROOT / "results", site)
        for name, game, agents in (("pelmanism.jsonl", "pelmanism", "greedy,random"),
                                   ("board.jsonl", "memory_board", "greedy,random")):
            cli.main(["simulate", "--game", game, "--agents", agents, "--games", "1", "--seed", "3",
                      "--records", str(site / "extra" / name)])
        with serve(site) as url, open_browser(viewport=(1280, 900)) as ctx:
            page = ctx.new_page()
            for png, query, height, full in SHOTS:
                page.set_viewport_size({"width": 1280, "height": height})
                page.goto(f"{url}/{query}")
                page.wait_for_timeout(500)
                page.screenshot(path=str(OUT / png), full_page=full)
                print(f"docs/site/{png}")


if __name__ == "__main__":
    main()
