"""How far a case's pass rate moves between sessions: the beta-binomial tail against scipy, the
ANOVA estimate against the drift bench's, the shrinkage across a suite, and the drift test."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import betabinom

from bench.drift_stats import icc
from noisefloor.stats import fisher_regress
from noisefloor.stats.drift import (
    Dispersion,
    beta_binomial_cdf,
    dispersion,
    drift_p,
    learned_spread,
    prior_weight,
)


@given(
    st.integers(1, 150).flatmap(lambda n: st.tuples(st.integers(-1, n + 1), st.just(n))),
    st.floats(0.01, 80),
    st.floats(0.01, 80),
)
def test_the_beta_binomial_tail_is_scipys(k_n: tuple[int, int], a: float, b: float) -> None:
    k, n = k_n
    assert beta_binomial_cdf(k, n, a, b) == pytest.approx(
        float(betabinom.cdf(k, n, a, b)), rel=1e-9, abs=1e-12
    )


def sessions_of() -> st.SearchStrategy[list[tuple[int, int]]]:
    session = st.integers(2, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
    return st.lists(session, min_size=2, max_size=12)


@given(sessions_of())
def test_a_cases_estimate_is_the_anova_estimator_before_its_floor(
    sessions: list[tuple[int, int]],
) -> None:
    found = dispersion(sessions)
    passes = sum(k for k, _ in sessions)
    if passes in (0, sum(n for _, n in sessions)):
        assert found is None  # no repeat differs from another: nothing to learn
        return
    assert found is not None
    assert max(found.rho, 0.0) == pytest.approx(icc(sessions), abs=1e-12)
    assert found.sessions == len(sessions) and found.weight > 0


def test_one_session_tells_nothing_of_drift() -> None:
    assert dispersion([(53, 100)]) is None
    assert dispersion([(53, 100), (0, 0)]) is None


def test_the_prior_stands_until_sessions_say_otherwise() -> None:
    weight = prior_weight(10, 30)
    alone = learned_spread({"a": None, "b": None}, 0.05, weight)
    assert {s.rho for s in alone.values()} == {0.05}
    assert alone["a"].sessions == alone["a"].suite_sessions == 0
    # twenty sessions of 30 with no drift bring a case, on average, near what they cannot rule
    # out (about 0.02, docs/drift.md)
    rng = random.Random(7)
    draws = []
    for _ in range(200):
        still = [(sum(rng.random() < 0.5 for _ in range(30)), 30) for _ in range(20)]
        learned = learned_spread({"a": dispersion(still), "b": None}, 0.05, weight)
        draws.append(learned["a"].rho)
    assert 0.01 < sum(draws) / len(draws) < 0.025
    # a case with no sessions of its own takes the suite's, which moved with the first's; the
    # first is shrunk towards the others' and the prior, never towards its own sessions twice
    assert learned["b"].rho == learned["b"].suite_rho < 0.05
    assert (learned["b"].suite_sessions, learned["a"].suite_sessions) == (20, 0)
    assert learned["a"].suite_rho == 0.05


def test_sessions_that_do_drift_raise_the_allowance_above_the_prior() -> None:
    rng = random.Random(3)
    weight = prior_weight(10, 30)
    drifting = []
    for _ in range(30):
        rate = rng.betavariate(0.5 * 4, 0.5 * 4)  # rho = 1 / (a + b + 1) = 0.2
        drifting.append((sum(rng.random() < rate for _ in range(30)), 30))
    learned = learned_spread({"a": dispersion(drifting)}, 0.05, weight)
    assert learned["a"].rho > 0.1


def test_shrinkage_weighs_each_estimate_by_its_information() -> None:
    many = Dispersion(rho=0.0, weight=1e9, sessions=200)
    few = Dispersion(rho=0.3, weight=1.0, sessions=2)
    learned = learned_spread({"many": many, "few": few}, 0.05, prior_weight(10, 30))
    assert learned["many"].rho == pytest.approx(0.0, abs=1e-6)
    # the noisy case stays near the suite's, not its own 0.3
    assert learned["few"].rho < 0.01


@pytest.mark.parametrize(
    ("table", "rho"),
    [((50, 100, 12, 40), 0.0), ((90, 100, 5, 10), 0.02), ((21, 100, 0, 40), 0.05)],
)
def test_drift_only_widens_the_doubt(table: tuple[int, int, int, int], rho: float) -> None:
    """At rho 0 the test is the binomial model's predictive check, near Fisher's p; the more
    drift allowed, the larger the p of the same drop."""
    at_zero = drift_p(*table, 0.0)
    assert at_zero == pytest.approx(fisher_regress(*table), rel=0.35)
    assert drift_p(*table, rho + 0.01) > drift_p(*table, rho) >= at_zero
    # a baseline spread over more sessions drifts less as a whole
    assert drift_p(*table, 0.05, concentration=0.2) < drift_p(*table, 0.05)


def test_a_break_of_an_always_passing_case_is_beyond_any_drift_the_prior_allows() -> None:
    assert drift_p(100, 100, 0, 5, 0.05) < 1e-4
    assert drift_p(100, 100, 0, 5, 0.05) < drift_p(50, 100, 0, 5, 0.05)
