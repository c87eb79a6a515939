"""Build ``docs/rules/pelmanism.md`` and ``docs/rules/memory_board.md`` from docstrings.

The docstrings are the source of truth; ``tests/test_docs.py`` fails when a page is stale.
Run ``python docs/build_rules_pages.py`` after changing a docstring.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

PAGES = {
    "pelmanism": ("Pelmanism / Concentration", "memtab_env.pelmanism_v0", "memtab_env.games.pelmanism.rules"),
    "memory_board": ("Memory: The Board Game", "memtab_env.memory_board_v0",
                     "memtab_env.games.memory_board.rules"),
}
ROOT = Path(__file__).resolve().parent / "rules"


def render(game: str) -> str:
    title, env_mod, engine_mod = PAGES[game]
    env_doc = importlib.import_module(env_mod).__doc__.strip()
    engine_doc = importlib.import_module(engine_mod).__doc__.strip()
    env_path = env_mod.replace(".", "/") + ".py"
    engine_path = engine_mod.replace(".", "/") + ".py"
    return (
        f"# {title}: rules as implemented\n\n"
        f"This page is assembled from the docstrings of `{env_path}` (the env page) and "
        f"`{engine_path}` (the engine, with every decision taken where the rule text is "
        f"silent); they are the source of truth and are tested against the code. "
        f"Regenerate with `python docs/build_rules_pages.py`.\n\n"
        f"## Env page\n\n```text\n{env_doc}\n```\n\n"
        f"## Engine and decisions\n\n```text\n{engine_doc}\n```\n"
    )


def main() -> int:
    for game in PAGES:
        (ROOT / f"{game}.md").write_text(render(game))
    return 0


if __name__ == "__main__":
    sys.exit(main())
