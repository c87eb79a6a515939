"""No import circle inside memtab_env: every ``import`` statement of the package (and of
``agents/``, installed as ``memtab_env.agents``), at any depth, is an edge of one graph,
and that graph has an order. An import inside a function is still a dependency (it only
runs later), so it counts; names loaded by string (``registry.load``) do not."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: import name -> folder of the repository (setup.py maps agents/ into the package)
PACKAGES = {"memtab_env": ROOT / "memtab_env", "memtab_env.agents": ROOT / "agents"}


def _modules(packages: dict[str, Path]) -> dict[str, Path]:
    """Dotted module name -> source file, for every ``.py`` file of ``packages``."""
    out = {}
    for name, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [*name.split("."), *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imported(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``module`` imports anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: up from this module's package
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            # "from package import module" imports that module
            names += [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    found = set()
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def import_graph(packages: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports."""
    modules = _modules(packages)
    return {m: _imported(m, path, modules) for m, path in modules.items()}


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first repeated at the
    end), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(reversed(exc.args[1]))
    return None


def test_memtab_env_has_no_import_circle() -> None:
    graph = import_graph(PACKAGES)
    assert len(graph) > 100 and "memtab_env.jax.ppo" in graph["memtab_env.train.jax_run"]
    found = circle(graph)
    assert found is None, "import circle: " + " -> ".join(found or [])


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import B\n")
    (pkg / "a.py").write_text("def f():\n    from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("import pkg.c\nB = 1\n")
    (pkg / "c.py").write_text("from . import a\n")
    graph = import_graph({"pkg": pkg})
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub"] == {"pkg.sub.b"}
    assert graph["pkg.c"] == {"pkg.a"}
    found = circle(graph)
    assert found is not None and found[0] == found[-1]
    assert set(found) == {"pkg.a", "pkg.sub.b", "pkg.c"}
    (pkg / "c.py").write_text("X = 1\n")
    assert circle(import_graph({"pkg": pkg})) is None


@pytest.mark.parametrize("text", ["from memtab_env.train import jax_run\n",
                                  "import memtab_env.train.jax_run as jr\n"])
def test_every_spelling_of_an_import_is_an_edge(tmp_path: Path, text: str) -> None:
    folder = tmp_path / "memtab_env"
    (folder / "train").mkdir(parents=True)
    for name in ("__init__.py", "train/__init__.py", "train/jax_run.py"):
        (folder / name).write_text("")
    (folder / "train" / "config.py").write_text(f"def check():\n    {text}")
    (folder / "train" / "jax_run.py").write_text("from memtab_env.train.config import check\n")
    found = circle(import_graph({"memtab_env": folder}))
    assert found is not None and set(found) == {"memtab_env.train.config", "memtab_env.train.jax_run"}


def test_the_old_benchmark_path_names_the_protocol_modules() -> None:
    """``memtab_env.benchmark`` (the protocol package's old name) still imports, and each
    of its modules is the very module of ``memtab_env.protocol``, with its own spec."""
    import importlib

    import memtab_env.protocol as protocol

    old = importlib.import_module("memtab_env.benchmark")
    assert old.TRACKS is protocol.TRACKS and old.__all__ == protocol.__all__
    for name in ("tracks", "evaluate", "results", "leaderboard", "metrics"):
        module = importlib.import_module(f"memtab_env.benchmark.{name}")
        assert module is importlib.import_module(f"memtab_env.protocol.{name}")
        assert module.__spec__.name == f"memtab_env.protocol.{name}"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("memtab_env.benchmark.no_such_module")
