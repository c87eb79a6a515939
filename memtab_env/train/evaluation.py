"""The final evaluation of a run: the benchmark's evaluation (the jobs and the figures of
:mod:`memtab_env.protocol.evaluate`) on a track made from the run's config.

The track holds the config's game, memory, reward, number of players and env options,
its ``eval_opponents`` and its deals (``eval_games / num_players`` of them, deal ``i``
from seed ``eval_seed + i``). So a run is measured exactly as the benchmark measures:
the duplicate format (every deal once per seat rotation, the opponents in the other
seats), and the clustered Wilson interval of :mod:`memtab_env.protocol.metrics` (the
deal, not the game, is the unit of independence). The figures are written in the
``memtab-eval/1`` schema of ``docs/training.md``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import memtab_env
from memtab_env.platform_info import platform_info
from memtab_env.train.config import Config
from memtab_env.train.opponents import LOADER_ALGOS

EVAL_SCHEMA = "memtab-eval/1"
#: the label of the evaluated model in the evaluation's game records
LEARNER = "learner"


def eval_track(cfg: Config, opponents: Sequence[str], deals: int) -> Any:
    """The benchmark track of ``cfg``'s evaluation (a track of no table: version 0)."""
    from memtab_env.play import make_raw_env
    from memtab_env.protocol.tracks import Track

    given = {"num_players": cfg.num_players, "memory": cfg.memory, "reward": cfg.reward, **cfg.env_options}
    env = make_raw_env(cfg.game, **given)
    env.reset(seed=cfg.eval_seed)
    recorded = env.record()["options"]  # the game's own spelling (decay:0.10 -> decay:0.1)
    env.close()
    options = {k: recorded.get(k, v) for k, v in given.items()}
    return Track(id=f"train-{cfg.env_id}", version=0, game=cfg.game, options=options,
                 opponents=tuple(opponents), deals=deals, strongest=opponents[0],
                 description=f"final evaluation of a {cfg.env_id} run", first_seed=cfg.eval_seed)


def evaluate(model_path: str | Path, cfg: Config, opponents: Sequence[str] | None = None,
             games: int | None = None) -> dict[str, Any]:
    """Play the saved model against each opponent on the track of ``cfg``
    (:func:`eval_track`) through the benchmark's evaluation; return the ``memtab-eval/1``
    report (``docs/training.md``), with the platform that played it: a policy's most
    probable flip can sit within float rounding of the next one, so another CPU or torch
    build may play other games with the same weights."""
    from memtab_env.protocol.backends import InProcessBackend, release_agents
    from memtab_env.protocol.evaluate import evaluation_jobs, resolve_agent, summarise

    opponents = list(opponents if opponents is not None else cfg.eval_opponents)
    games = games if games is not None else cfg.eval_games
    n = cfg.num_players
    deals = games // n
    kwargs = {"algo": LOADER_ALGOS[cfg.algo], "deterministic": cfg.eval_deterministic}
    spec, _ = resolve_agent(str(model_path), cfg.game, kwargs, label=LEARNER)
    results: dict[str, Any] = {}
    for name in opponents:
        track = eval_track(cfg, [name], deals)
        release_agents(spec)  # load the file as it is now
        t0 = time.perf_counter()
        backend = InProcessBackend()
        jobs = evaluation_jobs(track, [spec], deals, backend.chunk_size(deals))
        records = [rec for chunk in backend.run(jobs) for rec in chunk]
        (run,) = summarise(track, deals, 1, records, LEARNER)
        seconds = time.perf_counter() - t0
        played = release_agents(spec)
        fig = run["opponents"][name]
        results[name] = {
            "games": fig["games"],
            "win_rate": fig["win_rate"],
            "ci95": list(fig["win_rate_ci"]),
            "mean_score_diff": fig["score_diff"],
            "wins": fig["wins"],
            "shared": fig["shared_wins"],
            "losses": fig["losses"],
            "win_rate_by_seat": fig["win_rate_by_seat"],
            "illegal_choices": int(sum(getattr(a, "illegal_choices", 0) for a in played)),
            "seconds": round(seconds, 2),
        }
    seeds = eval_track(cfg, opponents or ["random"], deals).seeds()
    return {
        "schema": EVAL_SCHEMA,
        "env_id": cfg.env_id,
        "package_version": memtab_env.__version__,
        "model": Path(model_path).name,
        "algo": cfg.algo,
        "protocol": {
            "num_players": n,
            "memory": cfg.memory,
            "deals": deals,
            "seats_rotated": True,
            "deterministic": cfg.eval_deterministic,
            "seeds": seeds,
            "win_rate": "mean share of the win: 1/k for each of k winners, 0 for a loss",
            "ci95": "clustered Wilson interval over deals (memtab_env.protocol.metrics), "
                    "as the benchmark computes it",
        },
        "config": dataclasses.asdict(cfg),
        "results": results,
        "platform": platform_info(),
    }


def print_table(report: dict[str, Any], title: str) -> None:
    """The evaluation as a table on the terminal."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("opponent", "games", "win rate", "95% CI", "score diff", "W / shared / L"):
        table.add_column(col, justify="right" if col != "opponent" else "left")
    for name, r in report["results"].items():
        table.add_row(name, str(r["games"]), f"{r['win_rate']:.3f}",
                      f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]", f"{r['mean_score_diff']:+.2f}",
                      f"{r['wins']} / {r['shared']} / {r['losses']}")
    Console().print(table)


def write_eval(report: dict[str, Any], path: Path) -> None:
    """Write ``report`` as JSON at ``path`` (folders created, the file replaced whole)."""
    from memtab_env.atomic import write_json

    write_json(path, report, indent=2)
