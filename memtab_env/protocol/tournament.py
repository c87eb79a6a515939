"""Round-robin tournaments with seat rotation, openskill ratings, a payoff matrix and a plot.

Tables: on a ``n``-player track, every combination of ``n`` of the agents is a table (on
two-player tracks: every pair), and each table plays the track's first ``deals`` deals,
every deal once per seat rotation, exactly like an evaluation.

Ratings: openskill's Plackett-Luce model (``openskill.models.PlackettLuce``), one update
per game, in a fixed order (table, deal, rotation), so the same games always give the
same ratings. A game's ranking is the rules' result: every winner shares rank 1 and every
other player shares rank 2 (ties as ties; a shared win is a tie). Agents are ordered by
the conservative rating ``mu - 3 sigma`` (openskill's ``ordinal``).

Payoff matrix: ``payoff[i][j]`` is ``i``'s score against ``j`` over the games where both
sat: 1 when ``i`` won and ``j`` did not, 0 the other way round, 1/2 when both or neither
won. So ``payoff[i][j] + payoff[j][i] = 1``; on two-player tracks it is the win rate
(shared wins counted half).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memtab_env import __version__
from memtab_env.errors import InvalidOptionError
from memtab_env.protocol.backends import AgentSpec, Backend, InProcessBackend, Job, Progress
from memtab_env.protocol.tracks import Track

TOURNAMENT_FORMAT = "memtab-tournament/1"


def tournament_jobs(track: Track, agents: Sequence[AgentSpec], deals: int, chunk: int) -> list[Job]:
    """The jobs of a round robin (module docstring)."""
    n = track.num_players
    if len(agents) < max(n, 2):
        raise InvalidOptionError(f"track {track.id} seats {n} players: a tournament needs at least "
                                 f"{max(n, 2)} agents, got {len(agents)}")
    seeds = list(enumerate(track.seeds(deals)))
    jobs = []
    for t, table in enumerate(itertools.combinations(range(len(agents)), n)):
        lineup = tuple(agents[i] for i in table)
        for start in range(0, len(seeds), chunk):
            jobs.append(Job(track.id, lineup, tuple(seeds[start:start + chunk]), tuple(range(n)),
                            (("table", t), ("lineup", list(table)))))
    return jobs


def rate(games: Sequence[tuple[Sequence[int], Sequence[int]]], num_agents: int) -> list[dict[str, float]]:
    """openskill Plackett-Luce ratings of ``num_agents`` agents from ``games``, each
    ``(agents by seat, winners as seats)``, processed in order; ``mu``, ``sigma`` and
    ``ordinal`` (``mu - 3 sigma``) per agent."""
    try:
        from openskill.models import PlackettLuce
    except ImportError as exc:
        raise InvalidOptionError('ratings need openskill: pip install -e ".[eval]" '
                                 "in the memtab-env checkout") from exc
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_agents)]
    for seated, winners in games:
        teams = [[ratings[a]] for a in seated]
        ranks = [1 if s in winners else 2 for s in range(len(seated))]
        new = model.rate(teams, ranks=ranks)
        for a, team in zip(seated, new, strict=True):
            ratings[a] = team[0]
    return [{"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())} for r in ratings]


def payoff(games: Sequence[tuple[Sequence[int], Sequence[int]]], num_agents: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The pairwise payoff matrix (module docstring) and the number of games behind each
    entry; entries of pairs that never met are NaN."""
    total = np.zeros((num_agents, num_agents))
    count = np.zeros((num_agents, num_agents), dtype=np.int64)
    for seated, winners in games:
        won = [s in winners for s in range(len(seated))]
        for s1, s2 in itertools.permutations(range(len(seated)), 2):
            i, j = seated[s1], seated[s2]
            total[i, j] += 0.5 if won[s1] == won[s2] else float(won[s1])
            count[i, j] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan), count


def tournament(track: Track, agents: Sequence[AgentSpec], deals: int, backend: Backend | None = None,
               progress: Progress | None = None) -> dict[str, Any]:
    """Play the round robin of ``agents`` on ``track`` and return its summary
    (``memtab-tournament/1``): ratings, order, payoff matrix, games."""
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise InvalidOptionError(f"agent names must be distinct, got {names} (give labels with NAME=SPEC)")
    backend = backend or InProcessBackend()
    jobs = tournament_jobs(track, agents, deals, backend.chunk_size(deals))
    games = []
    for job, records in zip(jobs, backend.run(jobs, progress), strict=True):
        table = dict(job.tag)["lineup"]
        for rec in records:
            seated = [table[i] for i in rec["benchmark"]["seats"]]
            games.append((seated, list(rec["result"]["winners"])))
    ratings = rate(games, len(agents))
    matrix, count = payoff(games, len(agents))
    order = sorted(range(len(agents)), key=lambda i: (-ratings[i]["ordinal"], names[i]))
    return {
        "format": TOURNAMENT_FORMAT,
        "package_version": __version__,
        "env_id": track.env_id,
        "track": track.describe(),
        "seeds": track.seeds(deals),
        "agents": [{"label": a.name, "spec": a.spec, "kwargs": dict(a.kwargs)} for a in agents],
        "games": len(games),
        "ratings": {names[i]: ratings[i] for i in range(len(agents))},
        "order": [names[i] for i in order],
        "payoff": [[None if np.isnan(v) else float(v) for v in row] for row in matrix],
        "payoff_games": count.tolist(),
    }


def plot(summary: dict[str, Any], path: str | Path) -> None:
    """Save a PNG: ratings (mu with a 2-sigma bar, best first) beside the payoff matrix."""
    try:
        import matplotlib
    except ImportError as exc:
        raise InvalidOptionError('the plot needs matplotlib: pip install -e ".[eval]" '
                                 "in the memtab-env checkout") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [a["label"] for a in summary["agents"]]
    order = summary["order"]
    mu = [summary["ratings"][n]["mu"] for n in order]
    sigma = [summary["ratings"][n]["sigma"] for n in order]
    matrix = np.array([[np.nan if v is None else v for v in row] for row in summary["payoff"]])
    k = len(names)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 0.9 * k, 1.5 + 0.6 * k))
    y = np.arange(len(order))[::-1]
    ax1.errorbar(mu, y, xerr=2 * np.asarray(sigma), fmt="o", capsize=4)
    ax1.set_yticks(y, order)
    ax1.set_xlabel("openskill mu (bar: 2 sigma)")
    ax1.set_title(f"Ratings, {summary['track']['id']} ({summary['games']} games)")
    im = ax2.imshow(matrix, vmin=0, vmax=1, cmap="RdBu")
    ax2.set_xticks(range(k), names, rotation=45, ha="right")
    ax2.set_yticks(range(k), names)
    for i in range(k):
        for j in range(k):
            if not np.isnan(matrix[i, j]):
                ax2.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=8,
                         color="white" if abs(matrix[i, j] - 0.5) > 0.3 else "black")
    ax2.set_title("payoff: row vs column")
    fig.colorbar(im, ax=ax2, fraction=0.046)
    fig.tight_layout()
    from memtab_env.atomic import atomic_path

    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
    finally:
        plt.close(fig)
