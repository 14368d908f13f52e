"""Tests for noisefloor.operations.plan: every printed figure is recomputed by brute force with scipy.

Detectable drops by one Fisher test per candidate count, Fisher power by summing the binomial
outcomes of both arms, the t test's power by simulation; N and M from the flags or the suite.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from noisefloor.operations.plan import CHANGES, SHIFTS, plan_inputs, plan_text
from noisefloor.store.store import ReadOnlyStore
from tests.builders import write_suite

#: The gate's own slack when a p-value meets a threshold (`stats.P_RTOL`), plus rounding.
SLACK = 1 + 1e-9


# -- brute force with scipy -----------------------------------------------------------------


def fisher_p(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """One-sided Fisher p that the candidate passes less often than the baseline."""
    table = [[k_b, n_b - k_b], [k_c, n_c - k_c]]
    return float(sps.fisher_exact(table, alternative="greater").pvalue)


def brute_drop(k_b: int, n: int, threshold: float) -> float | None:
    """The smallest drop from k_b/n to k_c/n whose Fisher p reaches the threshold."""
    flagged = [k_c for k_c in range(n + 1) if fisher_p(k_b, n, k_c, n) <= threshold * SLACK]
    return (k_b - max(flagged)) / n if flagged else None


def brute_power(n: int, p_b: float, p_c: float, threshold: float) -> float:
    """P(reject) summed over every (k_b, k_c): binomial weights, hypergeometric p-values."""
    k_b = np.arange(n + 1)[:, None]
    k_c = np.arange(n + 1)[None, :]
    p = sps.hypergeom.sf(k_b - 1, 2 * n, k_b + k_c, n)
    weight = sps.binom.pmf(k_b, n, p_b) * sps.binom.pmf(k_c, n, p_c)
    return float(weight[p <= threshold * SLACK].sum())


def brute_needed(p_b: float, p_c: float, threshold: float, power: float) -> int:
    """The first N (power is not monotone in N for a discrete test) that reaches the power."""
    return next(n for n in range(1, 401) if brute_power(n, p_b, p_c, threshold) >= power)


def simulated_t_power(n: int, shift_sd: float, threshold: float, sims: int = 40_000) -> float:
    """Share of simulated pairs of n-sample arms, the candidate's mean lower by shift_sd sds, that
    a one-sided two-sample t test flags."""
    rng = np.random.default_rng(20261201)
    base = rng.standard_normal((sims, n))
    cand = rng.standard_normal((sims, n)) - shift_sd
    p = sps.ttest_ind(base, cand, axis=1, alternative="greater").pvalue
    return float(np.mean(p <= threshold))


# -- reading the plan ------------------------------------------------------------------------


def parse(text: str) -> dict[str, Any]:
    """The figures of a printed plan."""
    head = re.search(r"N = (\d+) repeats per side, M = (\d+) cases, alpha = ([\d.]+)", text)
    assert head is not None, text
    threshold = re.search(r"per-case threshold alpha/K = ([\d.e-]+)", text)
    assert threshold is not None, text
    drops = {
        int(k): None if shown.startswith("none") else float(shown)
        for k, shown in re.findall(r"^  baseline (\d+)/\d+: (.+)$", text, re.MULTILINE)
    }
    # with a baseline in the store: the drop found from each pass rate it holds, at N
    drops |= {
        int(k): None if shown == "none" else float(shown)
        for k, shown in re.findall(
            r"^  baseline (\d+) of \d+ \([^)]*\): (\S+) at \d+", text, re.MULTILINE
        )
    }
    rates = {
        label: (float(power) / 100, None if need == "more than 400" else int(need))
        for label, power, need in re.findall(
            r"^  pass rate (.+?): power +([\d.]+)%, needs N = (.+)$", text, re.MULTILINE
        )
    }
    shifts = {
        float(shift): (float(power) / 100, int(need))
        for shift, power, need in re.findall(
            r"^  mean shift of ([\d.]+) sd: power +([\d.]+)%, needs N = (\d+)$",
            text,
            re.MULTILINE,
        )
    }
    return {
        "n": int(head[1]),
        "m": int(head[2]),
        "alpha": float(head[3]),
        "threshold": float(threshold[1]),
        "drops": drops,
        "rates": rates,
        "shifts": shifts,
    }


def plan(tmp_path: Path, **kw: Any) -> str:
    args: dict[str, Any] = {
        "suite_path": None,
        "repeats": None,
        "cases": None,
        "alpha": 0.05,
        "power": 0.8,
    }
    return plan_text(**{**args, **kw}, store=ReadOnlyStore(tmp_path / "store"))


# -- the figures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repeats", "cases", "alpha"), [(None, None, 0.05), (10, 20, 0.05), (20, 5, 0.1), (3, 1, 0.2)]
)
def test_detectable_drops_match_a_fisher_test_per_candidate_count(tmp_path, repeats, cases, alpha):
    figures = parse(plan(tmp_path, repeats=repeats, cases=cases, alpha=alpha))
    n, m = figures["n"], figures["m"]
    assert (n, m) == (repeats or 5, cases or 50)
    assert figures["threshold"] == pytest.approx(alpha / m, rel=5e-3)
    assert sorted(figures["drops"]) == sorted({n, round(0.9 * n), round(0.8 * n)})
    for k_b, shown in figures["drops"].items():
        expected = brute_drop(k_b, n, alpha / m)
        if expected is None:
            assert shown is None, (k_b, n)
        else:
            assert shown == pytest.approx(expected, abs=0.005), (k_b, n)


def test_the_default_plan_detects_no_drop_at_5_repeats_over_50_cases(tmp_path):
    # alpha/M = 0.001, while 5/5 -> 0/5, the most extreme table, has p = 1/252
    figures = parse(plan(tmp_path))
    assert figures["drops"] == {5: None, 4: None}
    assert fisher_p(5, 5, 0, 5) == pytest.approx(1 / 252)


def test_fisher_power_and_repeats_needed_match_brute_force(tmp_path):
    figures = parse(plan(tmp_path, repeats=10, cases=20))
    threshold = 0.05 / 20
    assert set(figures["rates"]) == {label for label, _, _ in CHANGES}
    for label, p_b, p_c in CHANGES:
        power, needed = figures["rates"][label]
        assert power == pytest.approx(brute_power(10, p_b, p_c, threshold), abs=0.0005), label
        assert needed == brute_needed(p_b, p_c, threshold, 0.8), label


def test_a_higher_power_needs_more_repeats(tmp_path):
    at_80 = parse(plan(tmp_path, repeats=8, cases=10))["rates"]
    at_95 = parse(plan(tmp_path, repeats=8, cases=10, power=0.95))["rates"]
    for label, p_b, p_c in CHANGES:
        needed = at_95[label][1]
        assert needed >= at_80[label][1], label
        assert (
            brute_power(needed, p_b, p_c, 0.005) >= 0.95 > brute_power(needed - 1, p_b, p_c, 0.005)
        )


def test_t_power_and_repeats_needed_match_a_simulation(tmp_path):
    figures = parse(plan(tmp_path, repeats=10, cases=20))
    threshold = 0.05 / 20
    assert set(figures["shifts"]) == set(SHIFTS)
    for shift, (power, needed) in figures["shifts"].items():
        # 40,000 simulated checks: the standard error of a power is at most 0.0025
        assert power == pytest.approx(simulated_t_power(10, shift, threshold), abs=0.012)
        assert simulated_t_power(needed, shift, threshold) >= 0.8 - 0.012
        assert simulated_t_power(needed - 1, shift, threshold) < 0.8 + 0.012


# -- where N and M come from -----------------------------------------------------------------


def planned_suite(directory: Path, repeats: list[int]) -> Path:
    """A suite of `echo`, one case per entry of `repeats` (its repeats)."""
    doc = {
        "name": "planned",
        "target": {"command": ["echo", "{{input}}"]},
        "defaults": {"repeats": 5},
        "cases": [
            {"id": f"c{i}", "input": f"q{i}", "repeats": r, "scorers": ["json_valid"]}
            for i, r in enumerate(repeats)
        ],
    }
    return write_suite(directory, doc)


def test_flags_alone_or_the_defaults(tmp_path):
    store = ReadOnlyStore(tmp_path / "store")
    given = plan_inputs(None, 12, 30, 0.1, store)
    assert (given.repeats, given.cases, given.source) == (12, 30, "flags")
    assert given.threshold == pytest.approx(0.1 / 30)
    default = plan_inputs(None, None, None, 0.05, store)
    assert (default.repeats, default.cases, default.threshold) == (5, 50, 0.05 / 50)


def test_a_suite_gives_its_smallest_repeats_and_its_case_count(tmp_path):
    suite = planned_suite(tmp_path, [6, 4, 8])
    store = ReadOnlyStore(tmp_path / "store")
    inputs = plan_inputs(suite, None, None, 0.05, store)
    assert (inputs.repeats, inputs.cases, inputs.source) == (4, 3, "suite planned")
    # without a baseline, every case is assumed able to fail: Bonferroni's alpha/M
    assert inputs.threshold == pytest.approx(0.05 / 3)
    # flags win over the suite
    flagged = plan_inputs(suite, 9, 7, 0.05, store)
    assert (flagged.repeats, flagged.cases) == (9, 7)
    assert flagged.threshold == pytest.approx(0.05 / 7)


def _looks(depth: int) -> Any:
    from noisefloor import stats
    from noisefloor.settings.design import Design

    design = Design(baseline_repeats=depth)
    sizes = design.schedule(5)
    shares = stats.spending(sizes, design.rho)
    return stats.Looks(
        sizes=tuple(sizes),
        thresholds=tuple(0.05 / 10 * s for s in shares),
        futility=tuple(
            f for j in range(len(sizes)) if (f := design.futility_at(j, len(sizes))) is not None
        ),
    )


def test_drift_flagged_matches_a_simulation_of_drifting_sessions() -> None:
    """The quadrature over two sessions' rates against scipy's beta draws of them."""
    from noisefloor import stats
    from noisefloor.operations.plan import drift_flagged

    looks, rho, p = _looks(30), 0.05, 0.5
    total = (1 - rho) / rho
    draws = sps.beta.rvs(p * total, (1 - p) * total, size=(300, 2), random_state=7)
    simulated = [stats.look_outcome(30, looks, float(b), float(c))[0] for b, c in draws]
    se = np.std(simulated) / np.sqrt(len(simulated))
    assert abs(drift_flagged(30, looks, p, rho) - np.mean(simulated)) <= 3 * se


def test_drift_flagged_grows_with_drift_from_the_fixed_rates_figure() -> None:
    from noisefloor import stats
    from noisefloor.operations.plan import drift_flagged

    looks = _looks(30)
    fixed = stats.look_outcome(30, looks, 0.7, 0.7)[0]
    flagged = [drift_flagged(30, looks, 0.7, rho) for rho in (1e-5, 0.02, 0.1)]
    assert flagged[0] == pytest.approx(fixed, abs=1e-3)
    assert fixed < flagged[1] < flagged[2]


def test_a_plan_with_drift_says_what_it_does_to_an_unchanged_case(tmp_path: Path) -> None:
    store = ReadOnlyStore(tmp_path / "store")
    kwargs: dict[str, Any] = dict(
        suite_path=None, repeats=5, cases=10, alpha=0.05, power=0.9, store=store
    )
    assert "sessions that drift" not in plan_text(**kwargs)
    text = plan_text(**kwargs, baseline_repeats=30, drift=0.05)
    lines = [line for line in text.splitlines() if "the deep baseline alone calls it" in line]
    assert [line.split(":")[0].strip() for line in lines] == [
        "pass rate 0.9",
        "pass rate 0.7",
        "pass rate 0.5",
    ]
    assert all(re.search(r"in \d+\.\d% of checks \(\d+\.\d% without drift\)", x) for x in lines)
