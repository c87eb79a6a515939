"""The agent pages' data: what an agent is, its source or config, its shipped evaluation.

Read without importing the agent (a trained policy's module would load torch or JAX):
the registry names ``module:attribute``, whose docstring and source come from the
module's file (:mod:`ast`). A shipped policy (:data:`memtab_env.agents.shipped.SHIPPED`)
shows the config that trained it (``<name>.yaml``) and the evaluations shipped beside
it (``<name>*_eval.json``, the ``memtab-eval/1`` schema).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

#: most characters of source or config shown on an agent page
MAX_TEXT = 60_000


def _definition(target: str) -> tuple[str, str, str] | None:
    """``(docstring, source, module file name)`` of ``module:attribute``, read from the
    module's file, or None where it cannot be found."""
    module, _, attr = target.partition(":")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    text = Path(spec.origin).read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == attr:
            doc = inspect.cleandoc(ast.get_docstring(node) or "")
            return doc, ast.get_source_segment(text, node) or "", f"{module.replace('.', '/')}.py"
    return None


def _evaluation(path: Path) -> dict[str, Any] | None:
    """The figures of a shipped ``memtab-eval/1`` file (its protocol without the seed list,
    and per opponent: games, win rate and interval, score difference)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != "memtab-eval/1":
        return None
    protocol = {k: v for k, v in (data.get("protocol") or {}).items() if k != "seeds"}
    rows = []
    for opponent, fig in (data.get("results") or {}).items():
        if isinstance(fig, dict):
            rows.append({"opponent": opponent, "games": fig.get("games"), "win_rate": fig.get("win_rate"),
                         "ci": fig.get("ci95"), "score_diff": fig.get("mean_score_diff")})
    return {"file": path.name, "env_id": data.get("env_id"), "algo": data.get("algo"),
            "protocol": protocol, "results": rows}


def describe_agent(game: str, run: dict[str, Any]) -> dict[str, Any]:
    """What the site says about the agent of one run of a result (``agent.runs[i]``):
    ``about`` (a docstring), ``source`` or ``config`` (``{"title", "text"}``) and
    ``evaluations`` (shipped ones)."""
    from memtab_env.agents import REGISTRY

    out: dict[str, Any] = {"spec": run["spec"], "kind": run["kind"], "sha256": run.get("sha256"),
                           "kwargs": run.get("kwargs") or {}, "about": "", "source": None,
                           "config": None, "evaluations": []}
    if run["kind"] == "file":
        out["about"] = (f"A model file ({run['spec']}), identified by its SHA-256; "
                        "`memtab leaderboard --reproduce` re-plays its games when the file is committed.")
        return out
    target = REGISTRY.get((game, run["spec"]))
    found = _definition(target) if target else None
    if found:
        doc, source, file = found
        out["about"] = doc
        out["source"] = {"title": f"{file} ({target.partition(':')[2]})", "text": source[:MAX_TEXT]}
    from memtab_env.agents.shipped import POLICY_DIR, SHIPPED

    if run["spec"] in SHIPPED:
        stem = Path(SHIPPED[run["spec"]][0]).stem
        config = POLICY_DIR / f"{stem}.yaml"
        if config.is_file():
            out["config"] = {"title": f"agents/policies/{config.name}",
                             "text": config.read_text(encoding="utf-8")[:MAX_TEXT]}
        for path in sorted(POLICY_DIR.glob(f"{stem}*_eval.json")):
            ev = _evaluation(path)
            if ev is not None:
                out["evaluations"].append(ev)
    return out
