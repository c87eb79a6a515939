"""Docs that cannot drift: generated rules pages match the docstrings; README code runs."""

from __future__ import annotations

import importlib.util
import json
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


def test_pelmanism_values_page_is_generated_from_the_values():
    spec = importlib.util.spec_from_file_location("build_values_tables", ROOT / "docs/build_values_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = (ROOT / "docs" / "pelmanism_values.md").read_text()
    assert mod.render() == text, "stale values page: run python docs/build_values_tables.py"
    assert "| 26 | -0.00970 | 0.49957 | 0.9973 |" in text  # the optimum with 26 pairs


def test_readme_configs_table_is_generated_from_the_eval_files():
    spec = importlib.util.spec_from_file_location("build_readme_table", ROOT / "docs/build_readme_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    readme = (ROOT / "README.md").read_text()
    assert mod.render(readme) == readme, "stale configs table: run python docs/build_readme_table.py"
    # every committed evaluation appears, with its figures
    table = mod.table()
    for path in mod.eval_files():
        report = json.loads(path.read_text())
        assert path.name in table
        for opp, r in report["results"].items():
            assert f"{r['win_rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] vs `{opp}`" in table
    assert "0.814 [0.796, 0.830] vs `random`" in table  # rppo-memtab-none, re-measured on this platform


#: a path in a doc: something/with/a/slash.ext, or a bare NAME.md
_PATH = re.compile(r"(?<![\w/.:~-])((?:\.\./)*(?:[\w.-]+/)+[\w.-]+\.(?:md|txt|py|yaml|json|zip|sh|gz)"
                   r"|[\w-]+\.md)(?![\w/])")
#: outputs of a run, written where the command runs
_GENERATED = ("runs/", "checkpoints/", "pool/", "tensorboard/", "evaluations/", "logs/")


def _doc_sources() -> list[Path]:
    return [*ROOT.glob("*.md"), *ROOT.glob("docs/**/*.md"), *ROOT.glob("results/*.md"),
            *ROOT.glob("memtab_env/**/*.py"), *ROOT.glob("agents/**/*.py"), ROOT / "train.py",
            *ROOT.glob("benchmarks/*.py"), *ROOT.glob("configs/*.yaml")]


def _prose(doc: Path) -> str:
    """The text of ``doc`` that can point a reader at a file: all of it, but in Python
    code not a string literal that is only a file's bare name (``out / "study.md"``
    names a file the code writes, not one the repository holds)."""
    text = doc.read_text()
    if doc.suffix != ".py":
        return text
    import io
    import tokenize

    return "\n".join(tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                     if not (tok.type == tokenize.STRING and re.fullmatch(r"[rRbBuU]?(['\"])[\w-]+\.md\1",
                                                                          tok.string)))


def test_no_doc_points_outside_the_repository():
    """Every file a doc, docstring, comment or message names (a path, or a bare
    ``NAME.md``) exists in the repository, next to the doc or from the root; placeholders
    (``path/to``, ``TRACK``) and run outputs are not files."""
    missing = []
    for doc in _doc_sources():
        for match in _PATH.finditer(_prose(doc)):
            path = match.group(1)
            parts = path.split("/")
            if path.startswith(_GENERATED) or "path/to/" in path or any(p.isupper() for p in parts[:-1]):
                continue
            if not ((doc.parent / path).exists() or (ROOT / path).exists()):
                missing.append(f"{doc.relative_to(ROOT)}: {path}")
    assert not missing, missing


def test_help_lists_the_ids_memory_models_and_agents():
    import pydoc

    import memtab_env
    from memtab_env import agents
    from memtab_env.registry import GAMES

    text = pydoc.render_doc(memtab_env, renderer=pydoc.plaintext)
    for spec in GAMES.values():
        assert spec.env_id in text and spec.pettingzoo_id in text
    for model in ("perfect", "none", "decay:p", "window:k"):
        assert model in text
    for game, name in agents.REGISTRY:
        assert name in text and game in text
