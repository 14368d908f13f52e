"""The sequential design's false-alarm rate, power and cost on the LLM-like noisy mix, simulated
through the design's own functions (bench/calibration.py): slow, run with `-m quality`."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "calibration.py"
#: Suites per cell: enough for the targets below to hold with a margin for sampling error
#: (a share near 0.9 moves by about 0.02 at this size).
SUITES = 300

pytestmark = pytest.mark.quality


@pytest.fixture(scope="module")
def calibration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("calibration", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibration"] = module
    spec.loader.exec_module(module)
    return module


NOISY = ("noisy", 100, 60, 1.0)


def test_unchanged_noisy_suites_rarely_fail_and_cost_about_five_calls_a_case(
    calibration: ModuleType,
) -> None:
    variant = calibration.Variant(*NOISY)
    null = calibration.sequential_cell((variant, 5, SUITES, 11, "null binary"))
    assert np.mean([o.failed for o in null]) <= 0.05
    assert np.mean([o.calls for o in null]) / calibration.M <= 7.0


@pytest.mark.parametrize(
    ("what", "floor"),
    [("1.0->0.6", 0.85), ("0.9->0.5", 0.70), ("0.7->0.4", 0.35), ("0.5->0.2", 0.35)],
)
def test_mid_range_drops_are_found(calibration: ModuleType, what: str, floor: float) -> None:
    variant = calibration.Variant(*NOISY)
    changed = calibration.sequential_cell((variant, 5, SUITES, 12, what))
    assert np.mean([o.flagged for o in changed]) >= floor


#: Suites per drift cell: a false-alarm rate near 0.05 moves by about 0.015 at this size, so the
#: bounds below hold the targets with two standard errors of margin.
DRIFT_SUITES = 200
#: The guards held: the one `check` takes (`calibration.CHECKS_GUARD`: a case the looks leave
#: regressed, or in doubt at the cap, then takes a concurrent control of the baseline's own
#: version at looks of 5, 10, 20, 40 and 80 repeats, each beside as many fresh candidate repeats
#: judged against it, alpha spent across them, the controlled cases one family; one in doubt
#: also stops at the check's futility bounds; none for a drop beyond the learned drift; unchanged
#: against it only on evidence), and the control inside the looks it was weighed against (at
#: least 40, judged at each later look in a family of the controlled cases at half the look's
#: alpha).
GUARDS = {
    "check's": {},
    "in the looks": {"control": 40, "matched": True, "own_family": True, "control_alpha": 0.5},
}


def _guard(calibration: ModuleType, name: str, **more: object) -> object:
    if name == "check's":
        return replace(calibration.CHECKS_GUARD, **more)
    return calibration.Guard(**GUARDS[name], **more)


@pytest.mark.parametrize("guard", list(GUARDS))
@pytest.mark.parametrize(
    "sessions", [{"rho": 0.05}, {"off": True}], ids=["rho 0.05", "baseline off"]
)
def test_a_concurrent_control_keeps_false_alarms_rare_when_sessions_drift(
    calibration: ModuleType, sessions: dict[str, object], guard: str
) -> None:
    variant = calibration.Variant(
        *NOISY, sessions=calibration.Sessions(**sessions), guard=_guard(calibration, guard)
    )
    null = calibration.sequential_cell((variant, 5, DRIFT_SUITES, 21, "null binary"))
    assert np.mean([o.failed for o in null]) <= 0.05 + 0.03


def test_an_adoption_session_that_sits_off_breaks_a_check_without_a_guard(
    calibration: ModuleType,
) -> None:
    variant = calibration.Variant(*NOISY, sessions=calibration.Sessions(off=True))
    null = calibration.sequential_cell((variant, 5, DRIFT_SUITES, 21, "null binary"))
    assert np.mean([o.failed for o in null]) >= 0.5


@pytest.mark.parametrize("what", ["0.9->0.5", "0.7->0.4", "0.5->0.2"])
def test_the_checks_control_costs_a_mid_range_drop_at_most_three_points_of_power(
    calibration: ModuleType, what: str
) -> None:
    """Without drift, on the same draws of baselines and candidates: the control confirms what
    the deep baseline flags (its last look of 80 keeps the loss small; a single control of 40
    lost 6-11 points) and decides what the looks left in doubt (a gain)."""
    deep = calibration.sequential_cell((calibration.Variant(*NOISY), 5, DRIFT_SUITES, 31, what))
    guarded = calibration.Variant(*NOISY, guard=calibration.CHECKS_GUARD)
    controlled = calibration.sequential_cell((guarded, 5, DRIFT_SUITES, 31, what))
    lost = np.mean([o.flagged for o in deep]) - np.mean([o.flagged for o in controlled])
    assert lost <= 0.03


def test_the_checks_control_costs_an_unchanged_suite_about_seven_calls_a_case(
    calibration: ModuleType,
) -> None:
    """Without drift, an unchanged noisy suite pays for the controls of the cases its looks
    flag or leave in doubt: 6.93 calls per case over 2,000 suites (docs/sequential.md), about
    7 at this size. A doubt its control does not resolve stays inconclusive, never more often
    than without a control."""
    guarded = calibration.Variant(*NOISY, guard=calibration.CHECKS_GUARD)
    null = calibration.sequential_cell((guarded, 5, SUITES, 11, "null binary"))
    assert np.mean([o.failed for o in null]) <= 0.02
    assert np.mean([o.calls + o.control_calls for o in null]) / calibration.M <= 7.1
    deep = calibration.sequential_cell((calibration.Variant(*NOISY), 5, SUITES, 11, "null binary"))
    assert np.mean([o.inconclusive for o in null]) <= np.mean([o.inconclusive for o in deep])


@pytest.mark.parametrize(
    ("what", "least", "most"),
    [("1.0->0.0", 1.0, 1.0), ("1.0->0.6", 0.05, 0.5), ("0.7->0.4", 0.0, 0.02)],
)
def test_a_drop_beyond_the_priors_drift_takes_no_control_and_one_within_it_does(
    calibration: ModuleType, what: str, least: float, most: float
) -> None:
    """With the store holding the adoption alone, a break of an always-passing case is beyond
    any drift the prior allows and is confirmed with no control; most 1.0 -> 0.6 drops and
    every mid-range one are within it and take theirs."""
    guarded = calibration.Variant(*NOISY, guard=calibration.CHECKS_GUARD)
    changed = calibration.sequential_cell((guarded, 5, DRIFT_SUITES, 41, what))
    flagged = [o for o in changed if o.flagged]
    assert flagged
    share = np.mean([o.skipped0 for o in flagged])
    assert least <= share <= most, share


def test_drift_learned_from_the_stores_sessions_moves_the_line_both_ways(
    calibration: ModuleType,
) -> None:
    """Five more sessions of the baseline's version in the store: where they show no drift,
    most 1.0 -> 0.6 drops are confirmed with no control; where sessions drift at rho 0.05, the
    false alarms stay at the target."""
    learning = calibration.Variant(*NOISY, guard=_guard(calibration, "check's", history=5))
    changed = calibration.sequential_cell((learning, 5, DRIFT_SUITES, 41, "1.0->0.6"))
    assert np.mean([o.skipped0 for o in changed if o.flagged]) >= 0.8
    drifting = replace(learning, sessions=calibration.Sessions(rho=0.05))
    null = calibration.sequential_cell((drifting, 5, DRIFT_SUITES, 21, "null binary"))
    assert np.mean([o.failed for o in null]) <= 0.05 + 0.03
