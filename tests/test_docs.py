"""Docs that cannot drift: generated rules pages match the docstrings; README code runs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _builder():
    spec = importlib.util.spec_from_file_location("build_rules_pages", ROOT / "docs/build_rules_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("game", ["pelmanism", "memory_board"])
def test_rules_pages_are_up_to_date(game):
    mod = _builder()
    assert (ROOT / "docs/rules" / f"{game}.md").read_text() == mod.render(game), (
        "stale page: run python docs/build_rules_pages.py")


def test_readme_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    block = lines[lines.index("```bash") + 1 : lines.index("```")]
    assert len(block) == 2
    assert "train.py --config configs/quick.yaml" in block[0]
    assert "pytest" in block[1]
    assert "pytest" in (ROOT / ".ci/run").read_text()


def test_readme_python_examples_run():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own docs
