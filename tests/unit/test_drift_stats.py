"""The drift bench's statistics: the homogeneity test against scipy's contingency test, the ICC
against scipy's one-way ANOVA, and the ICC's properties over any sessions."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import chi2_contingency, f_oneway

from bench.drift_stats import (
    design_effect,
    homogeneity_p,
    icc,
    mean_session_size,
    pooled_rate,
    sessions_off,
)


def sessions_of(min_size: int = 2) -> st.SearchStrategy[list[tuple[int, int]]]:
    """Two to twelve sessions of 2 to 60 repeats each, with any number of passes."""
    session = st.integers(2, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
    return st.lists(session, min_size=min_size, max_size=12)


def outcomes(sessions: list[tuple[int, int]]) -> list[list[int]]:
    return [[1] * k + [0] * (n - k) for k, n in sessions]


def test_pooled_rate_is_passes_over_repeats() -> None:
    assert pooled_rate([(3, 10), (7, 30)]) == pytest.approx(10 / 40)


def test_sessions_without_repeats_are_dropped() -> None:
    assert homogeneity_p([(3, 10), (0, 0), (7, 30)]) == homogeneity_p([(3, 10), (7, 30)])
    assert icc([(3, 10), (0, 0), (7, 30)]) == icc([(3, 10), (7, 30)])


@pytest.mark.parametrize("sessions", [[(3, 10)], [(3, 10), (0, 0)], [(11, 10), (1, 10)]])
def test_too_few_sessions_or_impossible_counts_are_refused(
    sessions: list[tuple[int, int]],
) -> None:
    with pytest.raises(ValueError):
        homogeneity_p(sessions)


@given(sessions_of())
def test_homogeneity_p_is_pearsons_contingency_test(sessions: list[tuple[int, int]]) -> None:
    passes = sum(k for k, _ in sessions)
    repeats = sum(n for _, n in sessions)
    if passes in (0, repeats):
        assert homogeneity_p(sessions) == 1.0
        return
    table = [[k, n - k] for k, n in sessions]
    expected = chi2_contingency(table, correction=False).pvalue
    assert homogeneity_p(sessions) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_sessions_far_apart_are_not_homogeneous() -> None:
    assert homogeneity_p([(3, 30)] * 5 + [(27, 30)] * 5) < 1e-6
    assert homogeneity_p([(15, 30)] * 10) == pytest.approx(1.0)


@given(
    st.integers(2, 12),
    st.integers(3, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n - 1))),
)
def test_icc_of_equal_sessions_is_anovas_f_turned_into_rho(
    count: int, size_and_passes: tuple[int, int]
) -> None:
    """For sessions of one size m, rho = (F - 1) / (F + m - 1), F from scipy's one-way ANOVA."""
    size, passes = size_and_passes
    sessions = [
        (max(0, min(size, passes + shift)), size)
        for shift in range(-count // 2, count - count // 2)
    ]
    assume(not all(k in (0, size) for k, _ in sessions))
    f_statistic = f_oneway(*outcomes(sessions)).statistic
    rho = (f_statistic - 1) / (f_statistic + size - 1)
    assert icc(sessions) == pytest.approx(max(0.0, rho), abs=1e-9)


@given(st.integers(2, 12), st.integers(1, 30), st.integers(0, 30))
def test_icc_is_zero_when_every_session_has_the_same_rate(
    count: int, scale: int, passes_per_ten: int
) -> None:
    passes = min(passes_per_ten, 10) * scale
    assert icc([(passes, 10 * scale)] * count) == 0.0


@given(sessions_of())
def test_icc_lies_between_zero_and_one(sessions: list[tuple[int, int]]) -> None:
    assert 0.0 <= icc(sessions) <= 1.0


@given(sessions_of(), st.randoms(use_true_random=False))
def test_icc_and_homogeneity_ignore_the_order_of_sessions(
    sessions: list[tuple[int, int]], rng: object
) -> None:
    shuffled = list(sessions)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert icc(shuffled) == pytest.approx(icc(sessions), abs=1e-12)
    assert homogeneity_p(shuffled) == pytest.approx(homogeneity_p(sessions), abs=1e-12)


def test_sessions_that_each_all_pass_or_all_fail_are_perfectly_correlated() -> None:
    assert icc([(30, 30), (0, 30), (30, 30), (0, 30)]) == 1.0


def test_unequal_sessions_use_the_adjusted_mean_size() -> None:
    assert mean_session_size([(0, 30)] * 4) == 30
    assert mean_session_size([(0, 10), (0, 30)]) == pytest.approx((40 - 1000 / 40) / 1)


def test_design_effect_grows_with_session_size_and_rho() -> None:
    assert design_effect(0.0, 30) == 1.0
    assert design_effect(0.1, 30) == pytest.approx(3.9)
    assert design_effect(1.0, 30) == 30.0
    with pytest.raises(ValueError):
        design_effect(-0.1, 30)
    assert not math.isnan(design_effect(0.5, 1))


def test_sessions_off_counts_those_beyond_the_binomial_spread() -> None:
    # pooled 0.5 over sessions of 30: one standard error is about 0.091
    sessions = [(15, 30), (18, 30), (21, 30), (9, 30), (12, 30)]
    assert sessions_off(sessions, 2) == 2
    assert sessions_off(sessions, 1) == 4
    assert sessions_off([(0, 30), (0, 30)], 2) == 0
