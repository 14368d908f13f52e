"""Tests for noisefloor.stats: scipy is the oracle on random inputs; known values are examples.

Every binary statistic is checked against scipy to 1e-9; power values reproduce worked examples.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from noisefloor import stats
from noisefloor.stats import (
    TOL,
    close,
    fisher_improve,
    fisher_improve_min,
    fisher_power,
    fisher_regress,
    fisher_regress_min,
    holm,
    holm_thresholds,
    min_detectable_drop,
    newcombe,
    paired_mean_ci,
    power,
    repeats_needed,
    significant,
    t_power,
    t_repeats_needed,
    tarone,
    tarone_threshold,
    welch,
    wilson,
)

FisherFn = Callable[[int, int, int, int], float]


def agree(a: float, b: float) -> bool:
    """Agreement with the oracle: 1e-9 absolute or relative."""
    return close(a, b, atol=1e-9, rtol=1e-9)


@st.composite
def tables(draw: st.DrawFn, n_max: int = 40, n_min: int = 1) -> tuple[int, int, int, int]:
    """A 2x2 table as (k_b, n_b, k_c, n_c)."""
    n_b = draw(st.integers(n_min, n_max))
    n_c = draw(st.integers(n_min, n_max))
    return draw(st.integers(0, n_b)), n_b, draw(st.integers(0, n_c)), n_c


scores = st.lists(
    st.floats(-100, 100, allow_nan=False, allow_infinity=False), min_size=2, max_size=15
)


def test_import_does_not_load_scipy_or_numpy() -> None:
    code = (
        "import sys, noisefloor.stats\n"
        "bad = [m for m in ('scipy', 'numpy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_all_is_sorted_and_complete() -> None:
    assert stats.__all__ == sorted(stats.__all__)
    assert all(hasattr(stats, name) for name in stats.__all__)


# ---------------------------------------------------------------- tolerance


def test_close() -> None:
    assert close(1.0, 1.0 + 1e-10)
    assert close(1e12, 1e12 + 100.0)
    assert not close(0.0, 2e-9)
    assert close(0.0, 1e-9)


def test_significant_keeps_attainable_thresholds() -> None:
    # 0.15 / 3 rounds below 0.05; the exact p-value 1/20 must still count.
    assert 0.15 / 3 < 0.05
    assert significant(fisher_regress(3, 3, 0, 3), 0.15 / 3)
    assert not significant(0.05 * (1 + 1e-9), 0.05)


# ---------------------------------------------------------------- Fisher


@settings(max_examples=200, deadline=None)
@given(tables())
def test_fisher_matches_scipy(table: tuple[int, int, int, int]) -> None:
    k_b, n_b, k_c, n_c = table
    cells = [[k_b, n_b - k_b], [k_c, n_c - k_c]]
    big_n, big_k = n_b + n_c, k_b + k_c
    p_reg = fisher_regress(k_b, n_b, k_c, n_c)
    p_imp = fisher_improve(k_b, n_b, k_c, n_c)
    assert agree(p_reg, sps.fisher_exact(cells, alternative="greater").pvalue)
    assert agree(p_imp, sps.fisher_exact(cells, alternative="less").pvalue)
    assert agree(p_reg, float(sps.hypergeom.sf(k_b - 1, big_n, big_k, n_b)))
    assert agree(p_imp, float(sps.hypergeom.cdf(k_b, big_n, big_k, n_b)))


@settings(max_examples=200, deadline=None)
@given(tables())
def test_fisher_min_is_the_most_extreme_table(table: tuple[int, int, int, int]) -> None:
    k_b, n_b, k_c, n_c = table
    big_n, big_k = n_b + n_c, k_b + k_c
    hi, lo = min(n_b, big_k), max(0, big_k - n_c)
    reg_min = fisher_regress_min(k_b, n_b, k_c, n_c)
    imp_min = fisher_improve_min(k_b, n_b, k_c, n_c)
    assert agree(reg_min, float(sps.hypergeom.pmf(hi, big_n, big_k, n_b)))
    assert agree(imp_min, float(sps.hypergeom.pmf(lo, big_n, big_k, n_b)))
    assert reg_min == fisher_regress(hi, n_b, big_k - hi, n_c)
    assert imp_min == fisher_improve(lo, n_b, big_k - lo, n_c)
    assert reg_min <= fisher_regress(k_b, n_b, k_c, n_c)
    assert imp_min <= fisher_improve(k_b, n_b, k_c, n_c)


def test_fisher_known_values() -> None:
    # All-pass vs all-fail: 1 / C(2n, n).
    for n, expected in ((3, 1 / 20), (5, 1 / 252), (10, 1 / 184756)):
        assert fisher_regress(n, n, 0, n) == pytest.approx(expected, rel=1e-15)
        assert fisher_regress_min(n, n, 0, n) == pytest.approx(expected, rel=1e-15)
        assert fisher_improve(0, n, n, n) == pytest.approx(expected, rel=1e-15)
    # All-pass on both sides: nothing can ever be significant.
    assert fisher_regress(5, 5, 5, 5) == 1.0
    assert fisher_regress_min(5, 5, 5, 5) == 1.0
    assert fisher_improve_min(5, 5, 5, 5) == 1.0


@pytest.mark.parametrize("fn", [fisher_regress, fisher_improve])
@pytest.mark.parametrize("fn_min", [fisher_regress_min, fisher_improve_min])
def test_fisher_empty_arm(fn: FisherFn, fn_min: FisherFn) -> None:
    for args in ((0, 0, 2, 5), (3, 5, 0, 0), (0, 0, 0, 0)):
        assert fn(*args) == 1.0
        assert fn_min(*args) == 1.0


def test_fisher_rejects_bad_counts() -> None:
    with pytest.raises(ValueError):
        fisher_regress(4, 3, 0, 3)
    with pytest.raises(ValueError):
        fisher_improve(0, 3, -1, 3)


# ---------------------------------------------------------------- Tarone


def tarone_by_definition(pmins: list[float], alpha: float) -> int:
    k = 1
    while sum(p <= alpha / k * (1 + 1e-12) for p in pmins) > k:
        k += 1
    return k


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.just(1.0), st.sampled_from([1 / 20, 1 / 252, 0.01]), st.floats(0, 1)),
        max_size=80,
    ),
    st.sampled_from([0.05, 0.01, 0.1]),
)
def test_tarone_matches_definition(pmins: list[float], alpha: float) -> None:
    k = tarone(pmins, alpha)
    assert k == tarone_by_definition(pmins, alpha)
    assert 1 <= k <= max(1, len(pmins))
    assert tarone_threshold(pmins, alpha) == alpha / k


def test_tarone_all_pass_cases_cost_nothing() -> None:
    assert tarone([1.0] * 70, 0.05) == 1
    # One testable case among 70 all-pass ones is tested at the full alpha.
    assert tarone([1.0] * 70 + [1 / 252], 0.05) == 1
    assert tarone_threshold([1.0] * 70 + [1 / 252], 0.05) == 0.05
    # At N=3 the floor 1/20 is attainable at K=1 only; two such cases cannot both be tested.
    assert tarone([1.0] * 70 + [1 / 20] * 2, 0.05) == 2
    assert tarone([], 0.05) == 1


def test_tarone_hand_example() -> None:
    pmins = [0.001] * 3 + [0.02] * 5 + [1.0] * 40
    # K=1: 8 cases reach 0.05; K=2: 8 reach 0.025; K=3: only the 3 reach 0.0167.
    assert tarone(pmins, 0.05) == 3
    assert tarone_threshold(pmins, 0.05) == pytest.approx(0.05 / 3)
    # pmin exactly at alpha counts, thanks to the tolerance.
    assert tarone([0.05, 1.0], 0.05) == 1
    assert tarone([0.05, 0.05], 0.1) == 2


# ---------------------------------------------------------------- Holm


def holm_by_definition(pvalues: list[float], alpha: float) -> list[bool]:
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [False] * m
    for rank, i in enumerate(order):
        if pvalues[i] > alpha / (m - rank) * (1 + 1e-12):
            break
        out[i] = True
    return out


def test_holm_known_example() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # Sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, then 0.03 > 0.05/2 stops.
    assert holm(p, 0.05) == [True, False, False, True]
    assert holm_thresholds(p, 0.05) == [0.05 / 3, 0.05 / 1, 0.05 / 2, 0.05 / 4]
    assert holm([], 0.05) == []
    assert holm_thresholds([], 0.05) == []


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.01, 0.0125, 0.05])), max_size=30),
    st.sampled_from([0.05, 0.01, 0.2]),
)
def test_holm_properties(pvalues: list[float], alpha: float) -> None:
    rejected = holm(pvalues, alpha)
    thresholds = holm_thresholds(pvalues, alpha)
    m = len(pvalues)
    assert rejected == holm_by_definition(pvalues, alpha)
    # Rejections are a prefix of the ascending order.
    flags = [rejected[i] for i in sorted(range(m), key=lambda i: pvalues[i])]
    assert flags == sorted(flags, reverse=True)
    # The first step is Bonferroni; Holm rejects whatever Bonferroni rejects.
    if m:
        assert any(rejected) == significant(min(pvalues), alpha / m)
        assert min(thresholds) == alpha / m
    for p, r, thr in zip(pvalues, rejected, thresholds, strict=True):
        if significant(p, alpha / m):
            assert r
        if r:
            assert significant(p, thr)
    assert sorted(thresholds) == [alpha / (m - j) for j in range(m)]


# ---------------------------------------------------------------- Wilson and Newcombe


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_matches_scipy(kn: tuple[int, int]) -> None:
    k, n = kn
    low, high = wilson(k, n)
    ci = sps.binomtest(k, n).proportion_ci(method="wilson")
    assert agree(low, ci.low)
    assert agree(high, ci.high)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_edges() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 3)[0] == 0.0
    assert wilson(3, 3)[1] == 1.0
    # 3/3 and 0/3 intervals overlap.
    assert wilson(3, 3)[0] == pytest.approx(0.44, abs=0.01)
    assert wilson(0, 3)[1] == pytest.approx(0.56, abs=0.01)


# ---------------------------------------------------------------- a pass rate against a bar


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.floats(0.001, 0.999),
)
def test_binomial_below_matches_scipy(kn: tuple[int, int], rate: float) -> None:
    k, n = kn
    assert agree(stats.binomial_below(k, n, rate), float(sps.binom.cdf(k, n, rate)))


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.05, 0.025, 0.01, 0.00125]),
)
def test_binomial_upper_is_clopper_pearson(kn: tuple[int, int], alpha: float) -> None:
    k, n = kn
    bound = stats.binomial_upper(k, n, alpha)
    expected = 1.0 if k == n else float(sps.beta.ppf(1 - alpha, k + 1, n - k))
    assert bound == pytest.approx(expected, abs=1e-8)
    assert k / n <= bound <= 1.0


def test_binomial_edges() -> None:
    assert stats.binomial_below(0, 0, 0.5) == 1.0
    assert stats.binomial_below(5, 5, 0.9) == 1.0
    assert stats.binomial_below(3, 5, 1.0) == 0.0
    assert stats.binomial_below(3, 5, 0.0) == 1.0
    assert stats.binomial_upper(0, 0, 0.05) == 1.0
    # 3 of 5 do not put a rate confidently below 0.9; 36 of 60 do
    assert stats.binomial_upper(3, 5, 0.0125) > 0.9 > stats.binomial_upper(36, 60, 0.0125)
    with pytest.raises(ValueError):
        stats.binomial_below(6, 5, 0.5)
    with pytest.raises(ValueError):
        stats.binomial_upper(1, 5, 0.0)


def newcombe_by_formula(k_b: int, n_b: int, k_c: int, n_c: int) -> tuple[float, float]:
    z = 1.959963984540054
    p1, p2 = k_c / n_c, k_b / n_b

    def score(p: float, n: int) -> tuple[float, float]:
        c = (p + z * z / (2 * n)) / (1 + z * z / n)
        h = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return c - h, c + h

    l1, u1 = score(p1, n_c)
    l2, u2 = score(p2, n_b)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return low, high


@settings(max_examples=200, deadline=None)
@given(tables(n_max=100))
def test_newcombe(table: tuple[int, int, int, int]) -> None:
    k_b, n_b, k_c, n_c = table
    low, high = newcombe(k_b, n_b, k_c, n_c)
    ref_low, ref_high = newcombe_by_formula(k_b, n_b, k_c, n_c)
    assert agree(low, max(-1.0, ref_low))
    assert agree(high, min(1.0, ref_high))
    diff = k_c / n_c - k_b / n_b
    assert -1.0 <= low <= diff <= high <= 1.0


def test_newcombe_edges() -> None:
    assert newcombe(0, 0, 3, 5) == (-1.0, 1.0)
    assert newcombe(3, 5, 0, 0) == (-1.0, 1.0)
    # A total break: the interval reaches -1 and excludes 0.
    low, high = newcombe(3, 3, 0, 3)
    assert low == -1.0
    assert high < 0.0


# ---------------------------------------------------------------- Welch


def ttest_ind(a: list[float], b: list[float], **kwargs: Any) -> Any:
    """scipy's Welch test, quiet about the cancellation warning it raises for a constant arm."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
        return sps.ttest_ind(a, b, equal_var=False, **kwargs)


def _sample_var(xs: list[float]) -> float:
    return float(np.var(xs, ddof=1))


@settings(max_examples=120, deadline=None)
@given(scores, scores, st.sampled_from([0.95, 0.9, 0.99]))
def test_welch_matches_scipy(b: list[float], c: list[float], level: float) -> None:
    var_b, var_c = _sample_var(b), _sample_var(c)
    # Keep clear of cancellation (where neither side is accurate to 1e-9) and of the
    # degenerate branch, which deliberately departs from scipy's nan.
    for v, xs in ((var_b, b), (var_c, c)):
        assume(v == 0.0 or v >= 1e-4 * max(1.0, max(abs(x) for x in xs)) ** 2)
    assume(var_b > TOL or var_c > TOL)
    res = welch(b, c, level)
    lower = ttest_ind(c, b, alternative="less")
    higher = ttest_ind(c, b, alternative="greater")
    # scipy's statistic for (b, c) is for mean(b) - mean(c): the opposite sign.
    swapped = ttest_ind(b, c, alternative="greater")
    assert agree(res.t, float(lower.statistic))
    assert agree(-res.t, float(swapped.statistic))
    if len(b) == len(c) or float(lower.df) <= min(len(b), len(c)) - 1:
        assert agree(res.p_lower, float(lower.pvalue))
        assert agree(res.p_lower, float(swapped.pvalue))
        assert agree(res.p_higher, float(higher.pvalue))
        assert agree(res.df, float(lower.df))
        ci = ttest_ind(c, b).confidence_interval(confidence_level=level)
        low, high = float(ci.low), float(ci.high)
    else:
        # arms of different sizes: Hsu's df, min(n) - 1, where Satterthwaite's is larger
        df = min(len(b), len(c)) - 1
        assert res.df == df
        assert agree(res.p_lower, float(sps.t.cdf(res.t, df)))
        assert agree(res.p_higher, float(sps.t.sf(res.t, df)))
        se = math.sqrt(var_b / len(b) + var_c / len(c))
        half = float(sps.t.ppf(0.5 + level / 2, df)) * se
        low, high = res.diff - half, res.diff + half
    assert agree(res.ci_low, low)
    assert agree(res.ci_high, high)
    assert agree(res.diff, float(np.mean(c) - np.mean(b)))
    assert agree(res.sd_b, float(np.std(b, ddof=1)))
    assert agree(res.sd_c, float(np.std(c, ddof=1)))
    assert res.ci_low <= res.diff <= res.ci_high


def test_welch_degenerate_equal() -> None:
    res = welch([1.0, 1.0, 1.0], [1.0, 1.0 + 1e-12, 1.0])
    assert res.t == 0.0
    assert (res.p_lower, res.p_higher) == (1.0, 1.0)
    assert math.isnan(res.df)
    assert res.ci_low == res.ci_high == res.diff


def test_welch_degenerate_change() -> None:
    down = welch([1.0, 1.0], [0.5, 0.5, 0.5])
    assert down.t == -math.inf
    assert (down.p_lower, down.p_higher) == (0.0, 1.0)
    assert down.diff == down.ci_low == down.ci_high == -0.5
    assert math.isnan(down.df)
    up = welch([0.5, 0.5], [1.0, 1.0])
    assert up.t == math.inf
    assert (up.p_lower, up.p_higher) == (1.0, 0.0)


def test_welch_one_constant_arm_is_not_degenerate() -> None:
    res = welch([1.0, 1.0, 1.0], [0.0, 0.5, 1.0])
    ref = ttest_ind([0.0, 0.5, 1.0], [1.0, 1.0, 1.0], alternative="less")
    assert agree(res.p_lower, float(ref.pvalue))
    assert agree(res.df, float(ref.df))


def test_welch_needs_two_per_arm() -> None:
    with pytest.raises(ValueError):
        welch([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        welch([1.0, 2.0], [])


# ---------------------------------------------------------------- paired suite-level CI


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=60),
    st.sampled_from([0.95, 0.9]),
)
def test_paired_mean_ci_matches_scipy(diffs: list[float], level: float) -> None:
    assume(_sample_var(diffs) >= 1e-6)
    mean, low, high = paired_mean_ci(diffs, level)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
        ci = sps.ttest_1samp(diffs, 0.0).confidence_interval(confidence_level=level)
    assert agree(mean, float(np.mean(diffs)))
    assert agree(low, float(ci.low))
    assert agree(high, float(ci.high))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=12),
    st.sampled_from([0.95, 0.9, 0.99]),
)
def test_paired_mean_ci_within_bounds_is_scipys_interval_clipped(
    diffs: list[float], level: float
) -> None:
    """Few cases make the t interval wider than a pass-rate change can be: it is intersected
    with [-1, 1], which keeps its coverage and every decision made from it."""
    mean, low, high = paired_mean_ci(diffs, level, bounds=(-1.0, 1.0))
    assert -1.0 <= low <= mean <= high <= 1.0
    if len(diffs) >= 2 and _sample_var(diffs) >= 1e-6:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
            ci = sps.ttest_1samp(diffs, 0.0).confidence_interval(confidence_level=level)
        assert agree(low, float(np.clip(ci.low, -1, 1)))
        assert agree(high, float(np.clip(ci.high, -1, 1)))


def test_suite_interval_of_few_cases_stays_within_a_pass_rate_change() -> None:
    from noisefloor.model.report import CaseReport, ScorerReport, Side
    from noisefloor.model.summary import suite_summary
    from noisefloor.model.verdict import Verdict
    from noisefloor.settings import RuleSettings

    def case(base: float, cand: float) -> CaseReport:
        sides = ScorerReport.model_construct(baseline=Side(rate=base), candidate=Side(rate=cand))
        return CaseReport.model_construct(verdict=Verdict.UNCHANGED, scorers=[sides])

    summary = suite_summary([case(1.0, 0.0), case(0.4, 0.6)], RuleSettings()).dump()
    # unbounded, mean +- t(0.975, 1) * se gives [-8.02, +7.22]
    assert summary["mean_diff"] == -0.4
    assert summary["ci95"] == [-1.0, 1.0]
    assert summary["gate_failed"] is False


def test_paired_mean_ci_edges() -> None:
    assert paired_mean_ci([0.25]) == (0.25, -math.inf, math.inf)
    assert paired_mean_ci([-0.2, -0.2, -0.2]) == pytest.approx((-0.2, -0.2, -0.2))
    with pytest.raises(ValueError):
        paired_mean_ci([])


# ---------------------------------------------------------------- detectability


def test_min_detectable_drop_n3() -> None:
    # 3/3 vs 0/3 gives p = 1/20 = 0.05 exactly: detectable at 0.05, nothing smaller is.
    assert fisher_regress(3, 3, 0, 3) == 0.05
    assert min_detectable_drop(3, 3, 3, 0.05) == 1.0
    assert min_detectable_drop(3, 3, 3, 0.15 / 3) == 1.0
    assert min_detectable_drop(2, 3, 3, 0.05) is None
    assert min_detectable_drop(3, 3, 3, 0.05 / 2) is None


def test_min_detectable_drop_n5() -> None:
    # 5/5 vs 1/5: p = 6/252; 5/5 vs 2/5: p = 21/252 > 0.05.
    assert min_detectable_drop(5, 5, 5, 0.05) == pytest.approx(0.8)
    # 4/5 vs 0/5: p = 6/252; 4/5 vs 1/5: p = 26/252.
    assert min_detectable_drop(4, 5, 5, 0.05) == pytest.approx(0.8)
    assert min_detectable_drop(3, 5, 5, 0.05) is None
    assert min_detectable_drop(5, 5, 5, 1 / 252) == pytest.approx(1.0)
    assert min_detectable_drop(5, 5, 5, 0.001) is None
    assert min_detectable_drop(5, 5, 0, 0.05) is None


@settings(max_examples=200, deadline=None)
@given(tables(n_max=25), st.sampled_from([0.05, 0.01, 0.05 / 3, 1 / 20, 1 / 252, 0.3, 1.0]))
def test_min_detectable_drop_matches_brute_force(
    table: tuple[int, int, int, int], threshold: float
) -> None:
    k_b, n_b, _, n_c = table
    hits = [k for k in range(n_c + 1) if significant(fisher_regress(k_b, n_b, k, n_c), threshold)]
    # The rejected candidate counts are always 0..k*: the p-value rises with k_c.
    assert hits == list(range(len(hits)))
    expected = k_b / n_b - hits[-1] / n_c if hits else None
    assert min_detectable_drop(k_b, n_b, n_c, threshold) == expected


# ---------------------------------------------------------------- power


# scipy's binomial pmf overflows for subnormal rates; realistic rates are plenty.
rates = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.001, 0.999))


def fisher_power_brute(n_b: int, n_c: int, p_b: float, p_c: float, alpha: float) -> float:
    w_b = sps.binom.pmf(np.arange(n_b + 1), n_b, p_b)
    w_c = sps.binom.pmf(np.arange(n_c + 1), n_c, p_c)
    return math.fsum(
        float(w_b[i] * w_c[j])
        for i in range(n_b + 1)
        for j in range(n_c + 1)
        if significant(fisher_regress(i, n_b, j, n_c), alpha)
    )


@settings(max_examples=100, deadline=None)
@given(
    tables(n_max=15),
    rates,
    rates,
    st.sampled_from([0.05, 0.01, 0.001, 1 / 20, 0.5]),
)
def test_fisher_power_matches_brute_force(
    table: tuple[int, int, int, int], p_b: float, p_c: float, alpha: float
) -> None:
    _, n_b, _, n_c = table
    assert agree(
        fisher_power(n_b, n_c, p_b, p_c, alpha), fisher_power_brute(n_b, n_c, p_b, p_c, alpha)
    )


@pytest.mark.parametrize(
    ("p_b", "p_c", "alpha", "expected"),
    [
        (0.9, 0.7, 0.05, 56),
        (1.0, 0.6, 0.05, 13),
        (1.0, 0.0, 0.05, 3),
        (1.0, 0.0, 0.001, 7),
        (0.9, 0.5, 0.05, 19),
        (0.9, 0.7, 0.001, 128),
        (1.0, 0.6, 0.001, 27),
        (0.8, 0.5, 0.01, 55),
    ],
)
def test_repeats_needed_reproduces_power_table(
    p_b: float, p_c: float, alpha: float, expected: int
) -> None:
    n = repeats_needed(p_b, p_c, alpha)
    assert n == expected
    assert fisher_power(n, n, p_b, p_c, alpha) >= 0.8
    assert all(fisher_power(m, m, p_b, p_c, alpha) < 0.8 for m in range(1, n))


def test_repeats_needed_with_stored_baseline() -> None:
    # 1.0 -> 0.6 needs 7 candidate repeats at 0.01 with 100 stored runs.
    assert repeats_needed(1.0, 0.6, 0.01, n_baseline=100) == 7


def test_repeats_needed_is_fast() -> None:
    power.regress_boundary.cache_clear()
    power.binom_pmf.cache_clear()
    start = time.perf_counter()
    assert repeats_needed(0.9, 0.7, 0.001) == 128
    assert time.perf_counter() - start < 2.0


def test_repeats_needed_unreachable() -> None:
    assert repeats_needed(0.7, 0.9, 0.05) is None
    assert repeats_needed(0.9, 0.9, 0.05) is None
    assert repeats_needed(0.9, 0.85, 0.001, n_max=30) is None


@pytest.mark.parametrize(
    ("shift", "alpha", "expected"),
    [(1.0, 0.05, 14), (2.0, 0.05, 4), (0.5, 0.05, 51), (1.0, 0.001, 34)],
)
def test_t_repeats_needed_reproduces_power_table(shift: float, alpha: float, expected: int) -> None:
    assert t_repeats_needed(shift, alpha) == expected


def test_t_power_matches_scipy() -> None:
    for n, d, a in ((2, 1.0, 0.05), (14, 1.0, 0.05), (30, 0.3, 0.001)):
        df = 2 * n - 2
        ref = sps.nct.sf(sps.t.isf(a, df), df, d * math.sqrt(n / 2))
        assert agree(t_power(n, d, a), float(ref))
    assert t_repeats_needed(0.0, 0.05) is None
    with pytest.raises(ValueError):
        t_power(1, 1.0, 0.05)
