"""The statistics of the protocol: win rates with intervals, score differences, normalised
scores, and the IQM over training runs with a stratified bootstrap interval.

Win rate interval (clustered Wilson)
------------------------------------
The unit of independence is the *deal*, not the game: in the duplicate format a deal is
played once per seat rotation and those games are correlated (the same cards). So the
win rate ``p`` is the mean over deals of ``x_d``, the agent's mean win share over the
games of deal ``d`` (a shared win of ``k`` winners counts ``1/k``), and its interval is
the Wilson score interval computed with the *effective* number of games

    n_eff = p (1 - p) / Var(p),   Var(p) = s^2(x_d) / D   (sample variance, D deals),

clamped to ``[D, games]``: never more than the games played, never fewer than the deals
(what perfectly correlated rotations would give). This is Kish's design-effect
correction applied to the Wilson interval (as survey statistics does for cluster
samples). Why Wilson: win rates near 0 or 1 are common here (``expert`` against
``random``), where the normal interval overshoots [0, 1] and collapses to a point at
0 or 1; Wilson stays inside and keeps a width. With one game per deal and wins or
losses only, ``n_eff`` is the number of games and the interval is exactly the classic
Wilson interval. When every deal gives the same ``x_d`` (no observed variance),
``n_eff`` is the number of games.

Score difference
----------------
Per game, the agent's score minus the mean score of the other seats; the mean over
games with a Student-t interval over the per-deal means (again clustered by deal).

IQM over runs
-------------
Over several training seeds (runs), and possibly several tracks (tasks), the aggregate
is the interquartile mean (IQM, the 25 % trimmed mean of all run x task scores) with a
percentile interval from the *stratified bootstrap*: each replicate resamples the runs
of every task independently, with replacement (Agarwal et al., "Deep RL at the Edge of
the Statistical Precipice", NeurIPS 2021). ``rliable``, the reference implementation,
installs but fails to import with this stack (its ``arch`` dependency breaks on pandas
3), so this module implements the same method with numpy and scipy, with a fixed seed:
the same scores always give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: two-sided 95 % normal quantile
Z95 = 1.959963984540054
#: bootstrap replicates and seed of :func:`stratified_bootstrap` (fixed: deterministic)
BOOTSTRAP_REPS = 10_000
BOOTSTRAP_SEED = 0


def wilson_interval(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed over ``n`` trials
    (``n`` may be an effective, non-integer count)."""
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0))
    # the interval contains p in exact arithmetic; keep it so in floating point (p = 0 or 1)
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


@dataclass(frozen=True)
class WinRate:
    """A win rate with its clustered Wilson interval (module docstring)."""

    rate: float
    lo: float
    hi: float
    n_eff: float


def clustered_win_rate(per_deal: Sequence[float] | np.ndarray, games_per_deal: int,
                       z: float = Z95) -> WinRate:
    """Win rate and interval from ``per_deal[d]``, the agent's mean win share over the
    ``games_per_deal`` games of deal ``d``."""
    x = np.asarray(per_deal, dtype=np.float64)
    deals = x.size
    if deals == 0:
        raise ValueError("no deals")
    games = deals * int(games_per_deal)
    p = float(x.mean())
    var = float(x.var(ddof=1)) / deals if deals > 1 else math.nan
    if deals < 2:
        n_eff = float(deals)
    elif var <= 0.0 or p <= 0.0 or p >= 1.0:
        n_eff = float(games)
    else:
        n_eff = min(max(p * (1.0 - p) / var, float(deals)), float(games))
    lo, hi = wilson_interval(p, n_eff, z)
    return WinRate(p, lo, hi, n_eff)


def mean_interval(values: Sequence[float] | np.ndarray, level: float = 0.95
                  ) -> tuple[float, float | None, float | None]:
    """Mean of ``values`` (independent units) and its Student-t interval
    (``None`` bounds with fewer than two values)."""
    x = np.asarray(values, dtype=np.float64)
    m = float(x.mean())
    if x.size < 2:
        return m, None, None
    from scipy import stats  # the eval extra (imported here: the commands' --help needs none)

    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1)) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return m, m - half, m + half


def iqm(scores: np.ndarray, axis: int | None = None) -> Any:
    """Interquartile mean: the mean of the middle 50 % (``scipy.stats.trim_mean``, 0.25)."""
    from scipy import stats

    return stats.trim_mean(scores, proportiontocut=0.25, axis=axis)


def stratified_bootstrap(
    strata: Sequence[Sequence[float] | np.ndarray],
    statistic: Callable[..., Any] = iqm,
    reps: int = BOOTSTRAP_REPS,
    level: float = 0.95,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """``statistic`` of all scores pooled, and its stratified-bootstrap percentile
    interval: ``strata[t]`` holds the run scores of task ``t``; each replicate resamples
    every task's runs independently with replacement. ``statistic(array, axis=1)`` must
    reduce each row of a ``(reps, scores)`` array. Returns ``(point, lo, hi)``."""
    groups = [np.asarray(s, dtype=np.float64).ravel() for s in strata]
    if not groups or any(g.size == 0 for g in groups):
        raise ValueError("every stratum needs at least one score")
    point = float(statistic(np.concatenate(groups)[None, :], axis=1)[0])
    rng = np.random.default_rng(seed)
    samples = np.concatenate([g[rng.integers(0, g.size, size=(reps, g.size))] for g in groups], axis=1)
    boot = statistic(samples, axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
    return point, float(lo), float(hi)


def figures(shares: np.ndarray, diffs: np.ndarray) -> dict[str, Any]:
    """The per-opponent figures of a result from ``shares[d, r]`` (the agent's win share
    in rotation ``r`` of deal ``d``; the agent sits in seat ``r``) and ``diffs[d, r]``
    (its score minus the mean score of the other seats)."""
    shares = np.asarray(shares, dtype=np.float64)
    diffs = np.asarray(diffs, dtype=np.float64)
    deals, rotations = shares.shape
    wr = clustered_win_rate(shares.mean(axis=1), rotations)
    diff, dlo, dhi = mean_interval(diffs.mean(axis=1))
    return {
        "deals": int(deals),
        "games": int(shares.size),
        "win_rate": wr.rate,
        "win_rate_ci": [wr.lo, wr.hi],
        "n_eff": wr.n_eff,
        "wins": int(np.count_nonzero(shares == 1.0)),
        "shared_wins": int(np.count_nonzero((shares > 0.0) & (shares < 1.0))),
        "losses": int(np.count_nonzero(shares == 0.0)),
        "win_rate_by_seat": [float(v) for v in shares.mean(axis=0)],
        "score_diff": diff,
        "score_diff_ci": None if dlo is None else [dlo, dhi],
    }


def overall(shares: dict[str, np.ndarray], diffs: dict[str, np.ndarray]) -> dict[str, Any]:
    """Figures against the whole panel of opponents, each weighted equally; ``shares[o]``
    and ``diffs[o]`` as in :func:`figures`, on the same deals for every opponent."""
    s = np.stack([np.asarray(v, dtype=np.float64) for v in shares.values()])  # (O, D, R)
    d = np.stack([np.asarray(v, dtype=np.float64) for v in diffs.values()])
    per_deal = s.mean(axis=(0, 2))
    wr = clustered_win_rate(per_deal, s.shape[0] * s.shape[2])
    diff, dlo, dhi = mean_interval(d.mean(axis=(0, 2)))
    return {
        "deals": int(s.shape[1]),
        "games": int(s.size),
        "win_rate": wr.rate,
        "win_rate_ci": [wr.lo, wr.hi],
        "n_eff": wr.n_eff,
        "score_diff": diff,
        "score_diff_ci": None if dlo is None else [dlo, dhi],
    }
