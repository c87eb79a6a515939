"""Write the README's table of training configs and their measured figures.

Every row is one entry of a shipped config (``configs/*.yaml``); its figures come from
the committed evaluation files of a run of that config: the shipped policies'
``agents/policies/<name>_eval.json`` and ``docs/evals/<config>.json`` (the ``eval.json``
of a run, committed as it was written). A config without one says so. Policies of the
memory study (``configs/study.yaml``, evaluated with ``exp_name: study``) get a row each,
described by their checkpoint and their study run file. The evaluation
files name their config (``config.exp_name``, ``env_id``), so nothing here is typed by
hand; ``tests/test_docs.py`` fails when the README's table is stale. Run
``python docs/build_readme_table.py`` after adding or re-measuring a run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
START, END = "<!-- configs:start -->", "<!-- configs:end -->"
#: configs that only exist for the smoke tests of every algorithm (not listed), and the
#: memory study's config (not a training config: memtab study)
SMOKE_CONFIGS = ("ppo", "dqn", "study")
#: listed first: the README's first command runs it
FIRST = "quick"
ALGO_NAMES = {"maskable_ppo": "MaskablePPO", "ppo": "PPO", "recurrent_ppo": "RecurrentPPO", "dqn": "DQN"}


def eval_files() -> list[Path]:
    return sorted([*ROOT.glob("agents/policies/*_eval.json"), *ROOT.glob("docs/evals/*.json")])


def shipped_names() -> dict[str, str]:
    """zip stem -> the shipped policy's name (``agents.make(name)``)."""
    from memtab_env.agents.shipped import SHIPPED

    return {zip_name[: -len(".zip")]: name for name, (zip_name, _) in SHIPPED.items()}


def entries() -> list[tuple[str, str, dict[str, Any]]]:
    """(config name, env id, settings) of every listed config entry."""
    out = []
    paths = sorted((ROOT / "configs").glob("*.yaml"), key=lambda p: (p.stem != FIRST, p.stem))
    for path in paths:
        if path.stem in SMOKE_CONFIGS or path.stem.startswith("study_"):  # study configs: not train.py's
            continue
        for env_id, values in yaml.safe_load(path.read_text()).items():
            if not str(env_id).startswith("_"):
                out.append((path.stem, env_id, values or {}))
    return out


def what(name: str, env_id: str, values: dict[str, Any]) -> str:
    from memtab_env.train.config import load_yaml

    cfg = load_yaml(ROOT / "configs" / f"{name}.yaml", env_id)
    net = {"set": "set network", "mlp": "MLP"}[cfg.policy]
    if cfg.slot_memory:
        net = "per-position memory"
    mix = ", ".join(f"{o} {w:g}" for o, w in cfg.opponents.items())
    return (f"{ALGO_NAMES[cfg.algo]}, {net}, {env_id}, memory `{cfg.memory}`, "
            f"{cfg.total_timesteps:_} steps against {{{mix}}}")


def figures(reports: list[tuple[Path, dict[str, Any]]]) -> str:
    parts = []
    for _, report in reports:
        for opp, r in report["results"].items():
            lo, hi = r["ci95"]
            parts.append(f"{r['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] vs `{opp}` ({r['games']} games)")
    training = [rep["training"] for _, rep in reports if "training" in rep]
    if training:
        t = training[0]
        parts.append(f"{t['seconds_this_session']:.0f} s of training at {t['steps_per_second']:.0f} steps/s")
    return "; ".join(parts)


def table() -> str:
    stems = shipped_names()
    found: dict[tuple[str, str], list[tuple[Path, dict[str, Any]]]] = {}
    for path in eval_files():
        report = json.loads(path.read_text())
        key = (report["config"]["exp_name"], report["env_id"])
        found.setdefault(key, []).append((path, report))
    rows = ["| config | what | measured (seats rotated, deterministic) | from |", "|---|---|---|---|"]
    for name, env_id, values in entries():
        reports = found.get((name, env_id), [])
        desc = what(name, env_id, values)
        shipped = sorted({stems[p.stem[: -len("_eval")].removesuffix("_search")] for p, _ in reports
                          if p.parent.name == "policies"})
        if shipped:
            from memtab_env.registry import game_spec

            game = game_spec(env_id).name
            arg = "" if game == "memtab" else f', game="{game}"'
            desc += "; shipped as " + ", ".join(f'`agents.make("{s}"{arg})`' for s in shipped)
        measured = figures(reports) if reports else "no committed evaluation"
        links = ", ".join(f"[{p.name}]({p.relative_to(ROOT).as_posix()})" for p, _ in reports) or "-"
        rows.append(f"| `{name}.yaml` | {desc} | {measured} | {links} |")
    policies: dict[Path, list[tuple[Path, dict[str, Any]]]] = {}
    for (name, _), reports in sorted(found.items()):
        for path, report in reports if name == "study" else []:
            policies.setdefault(path.parent / report["model"], []).append((path, report))
    rows += [study_row(reports, stems) for _, reports in sorted(policies.items())]
    return "\n".join(rows)


def study_row(reports: list[tuple[Path, dict[str, Any]]], stems: dict[str, str]) -> str:
    """The row of a policy of the memory study, from its evaluation files (the track's
    opponents, then any others such as ``search``): described by its checkpoint (beside
    the evaluations) and its study run file (``results/study/``)."""
    from memtab_env.jax.ppo import read_meta

    path, report = reports[0]
    meta = read_meta(path.parent / report["model"])
    cfg, cell = meta["config"], meta["study"]
    run = json.loads((ROOT / "results" / "study" / cell["track"]
                      / f"{cell['memory']}__{cell['model']}.json").read_text())
    latch = ", latch-initialised" if cfg["latch_init"] else ""
    desc = (f"JAX PPO, `{cfg['encoder']}` network, {cfg['memory_model']} per position{latch}, "
            f"{report['env_id']}, memory `{cfg['env_options'].get('memory', 'perfect')}`, "
            f"{run['timesteps']:_} steps against {{{cfg['opponents']} 1}}; track `{cell['track']}`, "
            f"seed {cfg['seed']}")
    stem = path.stem[: -len("_eval")]
    if path.parent.name == "policies" and stem in stems:
        desc += f'; shipped as `agents.make("{stems[stem]}")`'
    links = ", ".join(f"[{p.name}]({p.relative_to(ROOT).as_posix()})" for p, _ in reports)
    return f"| `study.yaml` | {desc} | {figures(reports)} | {links} |"


def render(text: str) -> str:
    head, sep, rest = text.partition(START)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{README}: markers {START} / {END} not found")
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> int:
    README.write_text(render(README.read_text()))
    print(f"wrote the configs table of {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
