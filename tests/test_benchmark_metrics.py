"""The protocol's statistics on cases with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from memtab_env.protocol import metrics


@pytest.mark.parametrize("k,n", [(8, 10), (0, 10), (10, 10), (1, 3), (57, 200), (199, 200)])
def test_wilson_matches_scipy(k, n):
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = metrics.wilson_interval(k / n, n)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_wilson_textbook_value():
    # 8 successes in 10 trials: 95% Wilson interval (0.4902, 0.9433) (Newcombe 1998, Table I style)
    lo, hi = metrics.wilson_interval(0.8, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)


def test_wilson_contains_the_estimate_at_the_edges():
    assert metrics.wilson_interval(1.0, 400)[1] == 1.0
    assert metrics.wilson_interval(0.0, 400)[0] == 0.0


def test_clustered_reduces_to_wilson_for_independent_binary_games():
    x = np.array([1] * 13 + [0] * 7, dtype=float)  # one game per deal, win or loss
    wr = metrics.clustered_win_rate(x, games_per_deal=1)
    assert wr.n_eff == 20
    assert (wr.lo, wr.hi) == pytest.approx(metrics.wilson_interval(0.65, 20))


def test_clustered_counts_perfectly_correlated_rotations_once():
    # both rotations of every deal give the same outcome: the deals are the sample
    x = np.array([1.0] * 30 + [0.0] * 10)
    wr = metrics.clustered_win_rate(x, games_per_deal=2)
    assert wr.n_eff == 40
    assert (wr.lo, wr.hi) == pytest.approx(metrics.wilson_interval(0.75, 40))


def test_clustered_effective_size_is_kish():
    x = np.array([1.0, 0.5, 0.5, 0.0, 1.0, 0.5, 0.5, 1.0])
    wr = metrics.clustered_win_rate(x, games_per_deal=2)
    p = x.mean()
    assert wr.n_eff == pytest.approx(p * (1 - p) / (x.var(ddof=1) / x.size))
    assert x.size <= wr.n_eff <= 2 * x.size


def test_clustered_without_variance_uses_every_game():
    wr = metrics.clustered_win_rate(np.full(10, 0.5), games_per_deal=2)
    assert wr.n_eff == 20 and wr.rate == 0.5


def test_mean_interval_student_t():
    m, lo, hi = metrics.mean_interval([1, 2, 3, 4, 5])
    half = stats.t.ppf(0.975, 4) * math.sqrt(2.5) / math.sqrt(5)
    assert m == 3 and lo == pytest.approx(3 - half) and hi == pytest.approx(3 + half)
    assert metrics.mean_interval([2.0]) == (2.0, None, None)


def test_iqm_known_values():
    assert metrics.iqm(np.arange(1, 9, dtype=float)) == pytest.approx(4.5)  # mean of 3, 4, 5, 6
    assert metrics.iqm(np.array([0.0, 1.0, 1.0, 100.0])) == pytest.approx(1.0)


def test_stratified_bootstrap_resamples_within_strata():
    # every stratum is constant: any stratified replicate holds 4 zeros and 4 ones, IQM 1/2;
    # a bootstrap that ignored the strata would spread
    point, lo, hi = metrics.stratified_bootstrap([[0.0] * 4, [1.0] * 4])
    assert point == lo == hi == 0.5


def test_stratified_bootstrap_is_deterministic_and_brackets_the_point():
    rng = np.random.default_rng(1)
    strata = [rng.normal(0.5, 0.1, 5), rng.normal(0.8, 0.1, 7)]
    a = metrics.stratified_bootstrap(strata, reps=2000)
    assert a == metrics.stratified_bootstrap(strata, reps=2000)
    assert a[1] <= a[0] <= a[2]


def test_stratified_bootstrap_matches_a_plain_loop():
    strata = [np.array([0.1, 0.4, 0.9]), np.array([0.2, 0.3])]
    reps = 300
    _, lo, hi = metrics.stratified_bootstrap(strata, reps=reps, seed=7)
    rng = np.random.default_rng(7)
    idx = [rng.integers(0, s.size, size=(reps, s.size)) for s in strata]
    boot = [metrics.iqm(np.concatenate([s[i[r]] for s, i in zip(strata, idx, strict=True)]))
            for r in range(reps)]
    assert (lo, hi) == pytest.approx(tuple(np.quantile(boot, [0.025, 0.975])))


def test_figures_count_shared_wins_fractionally():
    shares = np.array([[1.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    diffs = np.zeros_like(shares)
    f = metrics.figures(shares, diffs)
    assert f["win_rate"] == pytest.approx(4 / 6)
    assert (f["wins"], f["shared_wins"], f["losses"]) == (3, 2, 1)
    assert f["win_rate_by_seat"] == pytest.approx([2.5 / 3, 1.5 / 3])
    assert f["games"] == 6 and f["deals"] == 3
