"""Unit tests of the decision rules, on bands built by hand.

`band` must match the public noisefloor tool's published rule cell for cell, `wilson` the quarantine-lane decision
table row for row, and `exact` its stated statistics (Fisher with Tarone, Welch with Holm); `case_frame` and the exit code are
shared by all three.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from noisefloor import stats
from noisefloor.errors import ExitCode
from noisefloor.model.records import CaseBand, ScorerBand
from noisefloor.model.report import ComparedCase
from noisefloor.model.verdict import Verdict, case_frame
from noisefloor.rules import get_rule
from noisefloor.rules.band import BandRule, compare_scorer
from noisefloor.rules.exact import ExactRule
from noisefloor.rules.exit_policy import exit_code_for
from noisefloor.rules.wilson import WilsonRule, decide_scorer
from noisefloor.settings import RuleName, RuleSettings, ScorerGate
from tests.builders import case_band, continuous, scorer_band

R, IMP, U = Verdict.REGRESSED, Verdict.IMPROVED, Verdict.UNCHANGED


# --- (a) rule `band` -----------------------------------------------------------------------

# the public tool's final rule (after its #7): rows are baseline passes (5/5 first),
# columns candidate passes 0/5..5/5.
BAND_TABLE = """
5/5  R   R   R   R   R   .
4/5  R   R   R   .   .   .
3/5  R   R   .   .   .   I
2/5  R   .   .   .   I   I
1/5  .   .   .   I   I   I
0/5  .   .   I   I   I   I
"""
_SYMBOL = {"R": R, "I": IMP, ".": U}
BAND_CELLS = [
    (int(row[0][0]), cand, _SYMBOL[symbol])
    for row in (line.split() for line in BAND_TABLE.strip().splitlines())
    for cand, symbol in enumerate(row[1:])
]


def test_band_table_has_36_cells() -> None:
    assert len(BAND_CELLS) == 36
    assert {(b, c) for b, c, _ in BAND_CELLS} == {(b, c) for b in range(6) for c in range(6)}


@pytest.mark.parametrize(
    ("base", "cand", "expected"),
    BAND_CELLS,
    ids=[f"{b}of5-to-{c}of5" for b, c, _ in BAND_CELLS],
)
def test_band_table_at_five_repeats(base: int, cand: int, expected: Verdict) -> None:
    verdict, reason = compare_scorer(scorer_band(base, 5), scorer_band(cand, 5), 0.2, 0.0)

    assert verdict is expected, reason
    assert f"{base}/5" in reason and f"{cand}/5" in reason


def test_band_reasons_read_as_published() -> None:
    def reason(b: int, c: int) -> str:
        return compare_scorer(scorer_band(b, 5), scorer_band(c, 5), 0.2, 0.0)[1]

    assert reason(5, 4).startswith("unanimous baseline 5/5 -> 4/5")
    assert reason(3, 1) == "pass rate 3/5 -> 1/5 (drop > 0.20)"
    assert reason(1, 4) == "pass rate 1/5 -> 4/5 (gain > 0.20)"
    assert reason(4, 5) == "4/5 -> 5/5, within noise"


def test_band_unanimous_clause_is_not_mirrored() -> None:
    """Issue #7: 4/5 -> 5/5 is unchanged, although 5/5 -> 4/5 is regressed."""
    assert compare_scorer(scorer_band(4, 5), scorer_band(5, 5), 0.2, 0.0)[0] is U
    assert compare_scorer(scorer_band(5, 5), scorer_band(4, 5), 0.2, 0.0)[0] is R


@pytest.mark.parametrize(
    ("base", "cand", "n"),
    [(4, 3, 5), (3, 2, 5), (2, 1, 5), (8, 6, 10), (6, 4, 10)],
    ids=["4of5-to-3of5", "3of5-to-2of5", "2of5-to-1of5", "8of10-to-6of10", "6of10-to-4of10"],
)
def test_band_drop_of_exactly_the_threshold_never_counts(base: int, cand: int, n: int) -> None:
    """4/5 - 3/5 = 0.20000000000000007: EPS keeps a drop of exactly 0.2 out, whatever N."""
    verdict, _ = compare_scorer(scorer_band(base, n), scorer_band(cand, n), 0.2, 0.0)
    back, _ = compare_scorer(scorer_band(cand, n), scorer_band(base, n), 0.2, 0.0)

    assert (verdict, back) == (U, U)


def test_band_at_three_repeats_one_repeat_is_significant() -> None:
    assert compare_scorer(scorer_band(2, 3), scorer_band(1, 3), 0.2, 0.0)[0] is R
    assert compare_scorer(scorer_band(2, 3), scorer_band(3, 3), 0.2, 0.0)[0] is IMP


@pytest.mark.parametrize(
    ("base", "cand", "direction", "expected"),
    [
        ([1.0, 2.0, 3.0], [0.5, 0.6, 0.7], "higher_is_better", R),
        ([1.0, 2.0, 3.0], [3.5, 4.0, 4.5], "higher_is_better", IMP),
        ([1.0, 2.0, 3.0], [0.5, 1.0, 1.5], "higher_is_better", U),  # mean 1.0 on the edge
        ([1.0, 2.0, 3.0], [2.5, 3.0, 3.5], "higher_is_better", U),  # mean 3.0 on the edge
        ([1.0, 2.0, 3.0], [1.1, 1.2, 1.3], "higher_is_better", U),  # inside the band
        ([1.0, 2.0, 3.0], [3.5, 4.0, 4.5], "lower_is_better", R),
        ([1.0, 2.0, 3.0], [0.5, 0.6, 0.7], "lower_is_better", IMP),
        ([1.0, 2.0, 3.0], [2.5, 3.0, 3.5], "lower_is_better", U),
        # The candidate's own spread is never used (the ade90b8 fix).
        ([1.0, 2.0, 3.0], [0.0, 0.1, 2.6], "higher_is_better", R),
    ],
    ids=[
        "below-higher-better",
        "above-higher-better",
        "on-lower-edge",
        "on-upper-edge",
        "inside",
        "above-lower-better",
        "below-lower-better",
        "on-upper-edge-lower-better",
        "candidate-spread-ignored",
    ],
)
def test_band_continuous(
    base: list[float], cand: list[float], direction: str, expected: Verdict
) -> None:
    verdict, reason = compare_scorer(
        continuous(base, direction=direction), continuous(cand, direction=direction), 0.2, 0.0
    )

    assert verdict is expected, reason
    if expected is not U:
        assert "outside the baseline band [1.000-3.000]" in reason


def test_band_continuous_min_effect() -> None:
    base, cand = continuous([1.0, 2.0, 3.0]), continuous([3.5, 3.5, 3.5])

    assert compare_scorer(base, cand, 0.2, 1.0)[0] is IMP  # effect 1.5 > 1.0
    assert compare_scorer(base, cand, 0.2, 1.5)[0] is U  # effect 1.5 is not > 1.5
    assert compare_scorer(base, cand, 0.2, 2.0)[0] is U


def test_band_rate_clause_applies_to_continuous_scorers_first() -> None:
    base = continuous([1.0, 2.0, 3.0, 2.0, 2.0])
    cand = scorer_band(1, 5, values=[2.0] * 5, kind="continuous", label=base.label)

    verdict, reason = compare_scorer(base, cand, 0.2, 0.0)

    assert verdict is R
    assert reason.startswith("unanimous baseline 5/5 -> 1/5")


@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_band_unreliable_is_unmeasured(side: str) -> None:
    good, bad = scorer_band(5, 5), scorer_band(0, 5, reliable=False)
    base, cand = (bad, good) if side == "baseline" else (good, bad)

    verdict, reason = compare_scorer(base, cand, 0.2, 0.0)

    assert verdict is Verdict.UNMEASURED
    assert "not comparable" in reason


@pytest.mark.parametrize(
    ("base", "cand"),
    [
        (scorer_band(1, 1), scorer_band(0, 5)),
        (scorer_band(5, 5), scorer_band(0, 1)),
        (scorer_band(0, 0), scorer_band(0, 0)),
        # Target errors are not scored repeats for the public rule.
        (scorer_band(5, 5), scorer_band(0, 5, target_errors=4)),
    ],
    ids=["baseline-1", "candidate-1", "both-0", "target-errors"],
)
def test_band_fewer_than_two_scored_repeats_is_unmeasured(
    base: ScorerBand, cand: ScorerBand
) -> None:
    verdict, reason = compare_scorer(base, cand, 0.2, 0.0)

    assert verdict is Verdict.UNMEASURED
    assert "noise unmeasured" in reason


def test_band_rule_case_takes_its_worst_scorer() -> None:
    base = case_band(scorer_band(5, 5, label="0:a"), scorer_band(1, 5, label="1:b"))
    cand = case_band(scorer_band(4, 5, label="0:a"), scorer_band(5, 5, label="1:b"))

    case = BandRule().compare("c", base, cand, RuleSettings(rule=RuleName.BAND)).dump()

    assert case["verdict"] == "regressed"
    assert case["reason"].startswith("0:a: unanimous baseline")
    assert [s["verdict"] for s in case["scorers"]] == ["regressed", "improved"]


def test_band_rule_valid_rate_drop_is_broken() -> None:
    """A drop in valid repeats is a verdict, not a warning (the public tool's hole)."""
    base = case_band(scorer_band(5, 5))
    cand = case_band(scorer_band(2, 5, target_errors=3), ok=2)

    case = BandRule().compare("c", base, cand, RuleSettings(rule=RuleName.BAND)).dump()

    assert case["verdict"] == "broken"


# --- (b) rule `wilson` ---------------------------------------------------------------------


def wilson(base: ScorerBand, cand: ScorerBand, min_effect: float = 0.2) -> tuple[Verdict, str]:
    return decide_scorer(base, cand, 3, min_effect)


def wilson_case(base: ScorerBand, cand: ScorerBand, **settings: Any) -> dict[str, Any]:
    config = RuleSettings(rule=RuleName.WILSON, **settings)
    return WilsonRule().compare("c", case_band(base), case_band(cand), config).dump()


WILSON_ROWS = [
    # (id, baseline band, candidate band, verdict, reason prefix)
    (
        "too-few-valid-baseline",
        scorer_band(2, 2),
        scorer_band(5, 5),
        "inconclusive",
        "too_few_valid",
    ),
    (
        "too-few-valid-candidate",
        scorer_band(5, 5),
        scorer_band(0, 2),
        "inconclusive",
        "too_few_valid",
    ),
    (
        "too-few-valid-before-invalid",
        scorer_band(2, 2, infra_errors=3),
        scorer_band(5, 5),
        "inconclusive",
        "too_few_valid",
    ),
    (
        "infra-error-is-invalid",
        scorer_band(5, 5),
        scorer_band(4, 4, infra_errors=1),
        "invalid",
        "infra_or_grader_error",
    ),
    (
        "grader-error-is-invalid",
        scorer_band(4, 4, scorer_errors=1),
        scorer_band(5, 5),
        "invalid",
        "infra_or_grader_error",
    ),
    (
        "invalid-before-quarantine",
        scorer_band(3, 5, infra_errors=1),
        scorer_band(5, 5),
        "invalid",
        "infra_or_grader_error",
    ),
    ("baseline-disagrees", scorer_band(3, 5), scorer_band(5, 5), "quarantine", "repeats_disagree"),
    ("candidate-disagrees", scorer_band(5, 5), scorer_band(4, 5), "quarantine", "repeats_disagree"),
    (
        "regression-5-to-0",
        scorer_band(5, 5),
        scorer_band(0, 5),
        "regressed",
        "regression: delta=-1.00",
    ),
    (
        "regression-4-to-0",
        scorer_band(4, 4),
        scorer_band(0, 4),
        "regressed",
        "regression: delta=-1.00",
    ),
    (
        "target-errors-are-fails",
        scorer_band(5, 5),
        scorer_band(0, 5, target_errors=5),
        "regressed",
        "regression: delta=-1.00",
    ),
    (
        "intervals-overlap-at-3",
        scorer_band(3, 3),
        scorer_band(0, 3),
        "unchanged",
        "ok: delta=-1.00",
    ),
    ("unchanged-all-pass", scorer_band(5, 5), scorer_band(5, 5), "unchanged", "ok: delta=+0.00"),
    ("unchanged-all-fail", scorer_band(0, 5), scorer_band(0, 5), "unchanged", "ok: delta=+0.00"),
    ("improvement-is-ok", scorer_band(0, 5), scorer_band(5, 5), "unchanged", "ok: delta=+1.00"),
]


@pytest.mark.parametrize(
    ("base", "cand", "verdict", "reason"),
    [pytest.param(*row[1:], id=row[0]) for row in WILSON_ROWS],
)
def test_wilson_decision_table(
    base: ScorerBand, cand: ScorerBand, verdict: str, reason: str
) -> None:
    got, why = wilson(base, cand)

    assert got.value == verdict
    assert why.startswith(reason), why


@pytest.mark.parametrize(
    ("base", "cand", "verdict", "reason"),
    [pytest.param(*row[1:], id=row[0]) for row in WILSON_ROWS],
)
def test_wilson_rule_compare_follows_the_table(
    base: ScorerBand, cand: ScorerBand, verdict: str, reason: str
) -> None:
    case = wilson_case(base, cand)

    assert case["verdict"] == verdict
    (entry,) = case["scorers"]
    assert entry["verdict"] == verdict
    assert entry["reason"].startswith(reason)
    assert case["reason"] == f"0:contains: {entry['reason']}"
    assert entry["baseline"]["wilson"] == list(stats.wilson(base.k, base.n))
    assert entry["candidate"]["wilson"] == list(stats.wilson(cand.k, cand.n))
    assert entry["evidence"]["min_effect"] == 0.2


def test_wilson_intervals_explain_the_n3_n4_boundary() -> None:
    """At n=3 the 0/3 upper bound exceeds the 3/3 lower bound; at n=4 it no longer does."""
    assert stats.wilson(0, 3)[1] > stats.wilson(3, 3)[0]
    assert stats.wilson(0, 4)[1] < stats.wilson(4, 4)[0]
    assert stats.wilson(0, 0) == (0.0, 1.0)


def test_wilson_min_effect() -> None:
    assert wilson(scorer_band(5, 5), scorer_band(0, 5), min_effect=1.0)[0] is R
    assert wilson(scorer_band(5, 5), scorer_band(0, 5), min_effect=1.1)[0] is U
    case = wilson_case(scorer_band(5, 5), scorer_band(0, 5), min_effect=1.1)
    assert case["verdict"] == "unchanged"
    assert case["scorers"][0]["evidence"]["min_effect"] == 1.1


def test_wilson_min_valid_setting() -> None:
    case = wilson_case(scorer_band(4, 4), scorer_band(0, 4), min_valid=5)

    assert case["verdict"] == "inconclusive"


def test_wilson_case_takes_its_worst_scorer() -> None:
    base = case_band(scorer_band(5, 5, label="0:a"), scorer_band(3, 5, label="1:b"))
    cand = case_band(scorer_band(0, 5, label="0:a"), scorer_band(5, 5, label="1:b"))

    case = WilsonRule().compare("c", base, cand, RuleSettings(rule=RuleName.WILSON)).dump()

    assert case["verdict"] == "regressed"
    assert [s["verdict"] for s in case["scorers"]] == ["regressed", "quarantine"]


def test_wilson_frames_added_and_removed() -> None:
    settings = RuleSettings(rule=RuleName.WILSON)
    band = case_band(scorer_band(5, 5))

    assert WilsonRule().compare("c", None, band, settings).dump()["verdict"] == "added"
    assert WilsonRule().compare("c", band, None, settings).dump()["verdict"] == "removed"


def test_wilson_decide_passes_cases_through() -> None:
    case = wilson_case(scorer_band(5, 5), scorer_band(0, 5))

    decided, summary = WilsonRule().decide(
        [ComparedCase.model_validate(case)], RuleSettings(rule=RuleName.WILSON)
    )
    cases, suite = [c.dump() for c in decided], summary.dump()

    assert cases == [case]
    assert suite["min_valid"] == 3


# --- (c) rule `exact` ----------------------------------------------------------------------


def exact(
    pairs: list[tuple[CaseBand | None, CaseBand | None]], **settings: Any
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """compare then decide, the way a check runs the rule; cases by id."""
    rule, config = ExactRule(), RuleSettings(**settings)
    compared = [
        rule.compare((b or c).case_id, b, c, config)  # type: ignore[union-attr]
        for b, c in pairs
    ]
    cases, suite = rule.decide(compared, config)
    return {c.case_id: c.dump() for c in cases}, suite.dump()


def binary_pair(
    kb: int, nb: int, kc: int, nc: int, case_id: str = "c"
) -> tuple[CaseBand, CaseBand]:
    return (
        case_band(scorer_band(kb, nb), case_id=case_id),
        case_band(scorer_band(kc, nc), case_id=case_id),
    )


EVIDENCE = {"p_regress", "p_improve", "threshold", "newcombe", "min_detectable_drop", "diff"}


def test_exact_one_regression_among_fifty_unchanged_all_pass_cases() -> None:
    """Tarone: cases that pass every repeat on both sides cannot reject, so cost no alpha."""
    pairs = [binary_pair(5, 5, 0, 5, "bad")]
    pairs += [binary_pair(5, 5, 5, 5, f"u{i:02d}") for i in range(50)]

    cases, suite = exact(pairs)

    assert cases["bad"]["verdict"] == "regressed"
    assert cases["bad"]["reason"].startswith("0:contains: pass rate 5/5 -> 0/5")
    assert all(cases[f"u{i:02d}"]["verdict"] == "unchanged" for i in range(50))
    assert suite["thresholds"]["regress"] == 0.05
    assert suite["testable"]["regress"] == 1


def test_exact_flaky_cases_that_could_reject_do_cost_alpha() -> None:
    """The contrast: 50 cases at 3/5, each able to reject, lower the threshold below alpha."""
    pairs = [binary_pair(5, 5, 0, 5, "bad")]
    pairs += [binary_pair(3, 5, 3, 5, f"f{i:02d}") for i in range(50)]

    cases, suite = exact(pairs)

    assert suite["thresholds"]["regress"] < 0.05
    assert suite["testable"]["regress"] >= 1
    assert cases["bad"]["verdict"] == "regressed"  # p = 1/252 still clears it
    assert all(cases[f"f{i:02d}"]["verdict"] == "unchanged" for i in range(50))


@pytest.mark.parametrize(
    ("kb", "nb", "kc", "nc"),
    [(1, 1, 0, 1), (2, 2, 0, 2), (5, 5, 0, 2), (2, 2, 0, 5)],
    ids=["1of1-to-0of1", "2of2-to-0of2", "candidate-below", "baseline-below"],
)
def test_exact_below_n_min_is_inconclusive(kb: int, nb: int, kc: int, nc: int) -> None:
    cases, _ = exact([binary_pair(kb, nb, kc, nc)])

    assert cases["c"]["verdict"] == "inconclusive"
    assert "needed" in cases["c"]["scorers"][0]["reason"]


def test_exact_large_drop_that_is_not_significant_is_inconclusive() -> None:
    cases, _ = exact([binary_pair(5, 5, 3, 5)])
    (entry,) = cases["c"]["scorers"]

    assert cases["c"]["verdict"] == "inconclusive"
    assert "a drop of 0.40, not significant" in entry["reason"]
    assert entry["evidence"]["p_regress"] > entry["evidence"]["threshold"]


def test_exact_small_drop_is_unchanged() -> None:
    cases, _ = exact([binary_pair(10, 10, 9, 10)])

    assert cases["c"]["verdict"] == "unchanged"
    assert "smallest detectable drop" in cases["c"]["scorers"][0]["reason"]


def test_exact_suspect_drop_setting() -> None:
    """A drop of at least `suspect_drop` (0.20 by default) that is not significant is suspect."""
    assert exact([binary_pair(5, 5, 4, 5)])[0]["c"]["verdict"] == "inconclusive"
    assert exact([binary_pair(5, 5, 4, 5)], suspect_drop=0.3)[0]["c"]["verdict"] == "unchanged"
    assert exact([binary_pair(10, 10, 9, 10)], suspect_drop=0.1)[0]["c"]["verdict"] == (
        "inconclusive"
    )


@pytest.mark.parametrize(
    ("kb", "nb", "kc", "nc"),
    [(0, 5, 5, 5), (0, 10, 8, 10), (2, 20, 19, 20)],
    ids=["0of5-to-5of5", "0of10-to-8of10", "2of20-to-19of20"],
)
def test_exact_improvements(kb: int, nb: int, kc: int, nc: int) -> None:
    cases, _ = exact([binary_pair(kb, nb, kc, nc)])

    assert cases["c"]["verdict"] == "improved"


def test_exact_significant_drop_below_min_effect_is_not_regressed() -> None:
    cases, _ = exact([binary_pair(200, 200, 180, 200)], min_effect=0.2)

    assert cases["c"]["verdict"] != "regressed"
    assert exact([binary_pair(200, 200, 180, 200)])[0]["c"]["verdict"] == "regressed"


def test_exact_target_errors_rising_significantly_is_broken() -> None:
    base = case_band(scorer_band(10, 10), ok=10)
    cand = case_band(scorer_band(2, 10, target_errors=8), ok=2)

    cases, _ = exact([(base, cand)])
    case = cases["c"]

    assert case["verdict"] == "broken"
    assert case["reason"].startswith("target errors rose: valid results 10/10 -> 2/10")
    assert case["errors_test"]["p"] <= case["errors_test"]["threshold"]


def test_exact_a_few_target_errors_are_not_broken() -> None:
    base = case_band(scorer_band(10, 10), ok=10)
    cand = case_band(scorer_band(9, 10, target_errors=1), ok=9)

    cases, _ = exact([(base, cand)])

    assert cases["c"]["verdict"] != "broken"


def test_exact_every_judged_scorer_carries_its_evidence() -> None:
    cases, _ = exact([binary_pair(5, 5, 0, 5, "a"), binary_pair(4, 5, 4, 5, "b")])

    for case in cases.values():
        (entry,) = case["scorers"]
        assert set(entry["evidence"]) >= EVIDENCE, entry["evidence"]
        for side in ("baseline", "candidate"):
            low, high = entry[side]["wilson"]
            assert 0.0 <= low <= entry[side]["rate"] <= high <= 1.0
        low, high = entry["evidence"]["newcombe"]
        assert low <= entry["evidence"]["diff"] <= high
    assert cases["a"]["scorers"][0]["evidence"]["newcombe"][1] < 0


def test_exact_continuous_clear_shift_is_regressed() -> None:
    base = continuous([10.0, 10.2, 9.8, 10.1, 9.9, 10.0, 10.3, 9.7, 10.1, 9.9])
    cand = continuous([8.0, 8.2, 7.8, 8.1, 7.9, 8.0, 8.3, 7.7, 8.1, 7.9])

    cases, suite = exact([(case_band(base), case_band(cand))])
    (entry,) = cases["c"]["scorers"]

    assert cases["c"]["verdict"] == "regressed"
    assert "Welch" in entry["reason"]
    values = entry["evidence"]["values"]
    assert values["p_worse"] <= values["threshold"]
    assert suite["continuous_tests"] == 1
    # The other way round it is an improvement; with lower_is_better the verdicts swap.
    assert exact([(case_band(cand), case_band(base))])[0]["c"]["verdict"] == "improved"
    low_base = continuous(base.values, direction="lower_is_better")
    low_cand = continuous(cand.values, direction="lower_is_better")
    assert exact([(case_band(low_base), case_band(low_cand))])[0]["c"]["verdict"] == "improved"


def test_exact_continuous_noise_is_unchanged() -> None:
    base = continuous([10.0, 10.2, 9.8, 10.1, 9.9, 10.0, 10.3, 9.7, 10.1, 9.9])
    cand = continuous([10.1, 9.9, 10.0, 10.2, 9.8, 10.0, 9.9, 10.1, 10.2, 9.8])

    assert exact([(case_band(base), case_band(cand))])[0]["c"]["verdict"] == "unchanged"


def test_exact_continuous_constant_and_equal_is_unchanged() -> None:
    cases, suite = exact([(case_band(continuous([3.0] * 5)), case_band(continuous([3.0] * 5)))])
    (entry,) = cases["c"]["scorers"]

    assert cases["c"]["verdict"] == "unchanged"
    assert entry["evidence"]["values"]["deterministic"] is True
    assert suite["continuous_tests"] == 0  # not a test at all: costs no alpha


@pytest.mark.parametrize(
    ("cand", "min_effect", "direction", "expected"),
    [
        (2.0, None, "higher_is_better", "regressed"),
        (4.0, None, "higher_is_better", "improved"),
        (2.0, None, "lower_is_better", "improved"),
        (2.0, 1.5, "higher_is_better", "unchanged"),
        (2.9, 0.05, "higher_is_better", "regressed"),
        (2.9, 0.5, "higher_is_better", "unchanged"),
    ],
)
def test_exact_continuous_constant_but_different_is_a_deterministic_change(
    cand: float, min_effect: float | None, direction: str, expected: str
) -> None:
    base_band = continuous([3.0] * 5, direction=direction)
    cand_band = continuous([cand] * 5, direction=direction)
    gates = {base_band.label: ScorerGate(min_effect=min_effect)}

    cases, _ = exact([(case_band(base_band), case_band(cand_band))], gates=gates)

    assert cases["c"]["verdict"] == expected
    if expected != "unchanged":
        assert "deterministic change" in cases["c"]["reason"]


def test_exact_unreliable_scorer_is_unmeasured() -> None:
    base = case_band(continuous([1.0, 1.1, 1.2], reliable=False))
    cand = case_band(continuous([5.0, 5.1, 5.2]))

    cases, _ = exact([(base, cand)])

    assert cases["c"]["scorers"][0]["verdict"] == "unmeasured"
    assert cases["c"]["verdict"] == "inconclusive"


def test_exact_frames_and_one_sided_scorers() -> None:
    band = case_band(scorer_band(5, 5))
    two = case_band(scorer_band(5, 5), scorer_band(5, 5, label="1:regex"))

    assert exact([(None, band)])[0]["c"]["verdict"] == "added"
    assert exact([(band, None)])[0]["c"]["verdict"] == "removed"
    cases, _ = exact([(two, band)])
    assert [s["verdict"] for s in cases["c"]["scorers"]] == ["unchanged", "unmeasured"]
    assert cases["c"]["scorers"][1]["reason"] == "only on one side"
    assert cases["c"]["verdict"] == "unchanged"


def test_get_rule_returns_each_rule() -> None:
    assert isinstance(get_rule("exact"), ExactRule)
    assert isinstance(get_rule(RuleName.BAND), BandRule)
    assert isinstance(get_rule("wilson"), WilsonRule)
    with pytest.raises(ValueError):
        get_rule("vibes")


# --- (d) the case frame and the exit code --------------------------------------------------


def test_case_frame_added_and_removed() -> None:
    band = case_band(scorer_band(5, 5))

    assert case_frame(None, band)["verdict"] is Verdict.ADDED  # type: ignore[index]
    assert case_frame(band, None)["verdict"] is Verdict.REMOVED  # type: ignore[index]
    with pytest.raises(ValueError):
        case_frame(None, None)


def test_case_frame_new_case_that_never_runs_is_broken() -> None:
    broken = case_band(scorer_band(0, 5, target_errors=5), ok=0)

    assert case_frame(None, broken)["verdict"] is Verdict.BROKEN  # type: ignore[index]


def test_case_frame_joins_by_case_id_when_the_input_changed() -> None:
    frame = case_frame(
        case_band(scorer_band(5, 5), case_key="a"), case_band(scorer_band(5, 5), case_key="b")
    )

    assert frame is None


def decided(
    rule: RuleName, base: CaseBand, cand: CaseBand, settings: RuleSettings
) -> list[dict[str, Any]]:
    """One case through compare then decide, as the JSON report shows it."""
    cases, _ = get_rule(rule).decide([get_rule(rule).compare("c", base, cand, settings)], settings)
    return [c.dump() for c in cases]


@pytest.mark.parametrize("rule", list(RuleName))
def test_an_edited_input_is_compared_on_its_numbers(rule: RuleName) -> None:
    """An edited prompt that breaks the case is a regression, whatever the rule."""
    base = case_band(scorer_band(5, 5), case_key="before")
    cand = case_band(scorer_band(0, 5), case_key="after")
    settings = RuleSettings(rule=rule)

    cases = decided(rule, base, cand, settings)

    assert cases[0]["verdict"] == "regressed"
    scorer = cases[0]["scorers"][0]
    assert (scorer["baseline"]["k"], scorer["candidate"]["k"]) == (5, 0)


def test_case_frame_broken_candidate() -> None:
    frame = case_frame(
        case_band(scorer_band(5, 5)), case_band(scorer_band(0, 5, target_errors=5), ok=0)
    )

    assert frame is not None and frame["verdict"] is Verdict.BROKEN
    assert "error:exit x5" in frame["reason"]


def test_case_frame_both_sides_without_a_valid_result_is_unchanged_not_broken() -> None:
    """Nothing was lost: broken means the candidate lost valid results the baseline had."""
    base = case_band(scorer_band(0, 5, target_errors=5), ok=0)
    cand = case_band(scorer_band(0, 5, target_errors=5), ok=0)
    cand = cand.model_copy(update={"outcomes": {"error:timeout": 3, "error:exit": 2}})

    frame = case_frame(base, cand)

    assert frame is not None and frame["verdict"] is Verdict.UNCHANGED
    assert frame["reason"] == (
        "no valid result on either side: the target failed in the baseline (error:exit x5) "
        "and in the candidate (error:exit x2, error:timeout x3)"
    )


@pytest.mark.parametrize("rule", list(RuleName))
def test_every_rule_passes_both_sides_without_a_valid_result(rule: RuleName) -> None:
    dead = case_band(scorer_band(0, 5, target_errors=5), ok=0)
    settings = RuleSettings(rule=rule)

    cases = decided(rule, dead, dead, settings)

    assert cases[0]["verdict"] == "unchanged"
    assert cases[0]["reason"].startswith("no valid result on either side")
    assert exit_code_for(Counter([cases[0]["verdict"]]), strict=True) is ExitCode.OK


@pytest.mark.parametrize(
    ("rule", "expected"),
    # the quarantine-lane table counts a crash as a fail, so a total loss is its regression
    [(RuleName.EXACT, "broken"), (RuleName.BAND, "broken"), (RuleName.WILSON, "regressed")],
)
def test_every_rule_fails_a_total_loss_of_valid_results(rule: RuleName, expected: str) -> None:
    base = case_band(scorer_band(5, 5))
    dead = case_band(scorer_band(0, 5, target_errors=5), ok=0)
    settings = RuleSettings(rule=rule)

    cases = decided(rule, base, dead, settings)

    assert cases[0]["verdict"] == expected


def test_case_frame_fixed() -> None:
    frame = case_frame(
        case_band(scorer_band(0, 5, target_errors=5), ok=0), case_band(scorer_band(5, 5))
    )

    assert frame is not None and frame["verdict"] is Verdict.FIXED


def test_case_frame_all_infrastructure_errors_is_inconclusive() -> None:
    lost = case_band(scorer_band(0, 0, infra_errors=5), ok=0, infra=5, repeats=5)

    frame = case_frame(case_band(scorer_band(5, 5)), lost)

    assert frame is not None and frame["verdict"] is Verdict.INCONCLUSIVE


def test_case_frame_leaves_ordinary_cases_to_the_scorers() -> None:
    assert case_frame(case_band(scorer_band(5, 5)), case_band(scorer_band(1, 5))) is None


@pytest.mark.parametrize(
    ("counts", "strict", "expected"),
    [
        ({}, False, ExitCode.OK),
        ({"unchanged": 3, "improved": 1, "added": 1}, False, ExitCode.OK),
        ({"regressed": 1}, False, ExitCode.REGRESSED),
        ({"broken": 1}, False, ExitCode.BROKEN),
        ({"broken": 1, "regressed": 4}, False, ExitCode.BROKEN),
        ({"broken": 1, "regressed": 4}, True, ExitCode.BROKEN),
        ({"inconclusive": 2}, False, ExitCode.OK),
        ({"inconclusive": 2}, True, ExitCode.REGRESSED),
        ({"regressed": 1, "inconclusive": 2}, True, ExitCode.REGRESSED),
        ({"quarantine": 3, "invalid": 1}, False, ExitCode.OK),
        ({"redefined": 1}, False, ExitCode.OK),
        ({"redefined": 1, "unchanged": 3}, True, ExitCode.REGRESSED),
    ],
    ids=[
        "nothing",
        "all-good",
        "regressed",
        "broken",
        "broken-over-regressed",
        "broken-over-strict",
        "inconclusive",
        "strict-inconclusive",
        "strict-regressed",
        "wilson-vocabulary",
        "redefined",
        "strict-redefined",
    ],
)
def test_exit_code_for(counts: dict[str, int], strict: bool, expected: ExitCode) -> None:
    assert exit_code_for(counts, strict=strict) is expected
    assert exit_code_for(Counter({Verdict(k): v for k, v in counts.items()}), strict=strict) is (
        expected
    )


def test_exit_code_harness_fault_wins() -> None:
    assert exit_code_for({"broken": 1}, strict=True, harness_fault=True) is ExitCode.HARNESS


def test_exact_splits_alpha_between_the_families_that_can_fail() -> None:
    """Pass rates and continuous values are corrected apart; together they must stay at alpha."""
    from noisefloor.model.report import PendingTest
    from noisefloor.rules.exact import _family_alphas

    binary = PendingTest(family="regress", scorer="0:a", p=0.5, pmin=0.004)
    untestable = PendingTest(family="regress", scorer="0:a", p=1.0, pmin=1.0)
    values = PendingTest(family="worse", scorer="0:a", p=0.2)
    assert _family_alphas([binary], 0.05)["regress"] == 0.05
    assert _family_alphas([untestable, values], 0.05)["worse"] == 0.05
    mixed = _family_alphas([binary, values], 0.05)
    assert mixed["regress"] == mixed["worse"] == 0.025
    assert mixed["improve"] == mixed["better"] == 0.05


def test_scorer_pairs_walk_both_sides_in_suite_order() -> None:
    from noisefloor.model.verdict import scorer_pairs, unjudged

    first, second = scorer_band(3, 5, label="0:contains"), scorer_band(2, 5, label="1:regex")
    late = scorer_band(1, 5, label="10:latency")
    base, cand = case_band(late, first), case_band(second, first)
    assert scorer_pairs(base, cand) == [
        ("0:contains", first, first),
        ("1:regex", None, second),
        ("10:latency", late, None),
    ]
    assert [label for label, _, _ in scorer_pairs(None, cand)] == ["0:contains", "1:regex"]
    assert unjudged(None) == "only on one side"
    assert unjudged(case_frame(None, cand)) == "see the case verdict"


@pytest.mark.parametrize("rule", list(RuleName))
def test_every_rule_pairs_scorers_through_the_shared_walk(
    rule: RuleName, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    module = importlib.import_module(f"noisefloor.rules.{rule.value}")
    seen: list[str] = []
    real = module.scorer_pairs

    def spy(base: CaseBand | None, cand: CaseBand | None) -> Any:
        seen.append(rule.value)
        return real(base, cand)

    monkeypatch.setattr(module, "scorer_pairs", spy)
    band = case_band(scorer_band(3, 5))
    get_rule(rule).compare("c", band, band, RuleSettings(rule=rule))
    assert seen == [rule.value]


# A Louvain-like modularity score: noise of about 0.0015 around 0.566 on both sides.
NOISE = [0.0, 0.002, -0.002, 0.001, -0.001, 0.0015, -0.0015, 0.0005, -0.0005, 0.0]


def modularity(mean: float) -> ScorerBand:
    return continuous([round(mean + e, 6) for e in NOISE])


def test_exact_continuous_tiny_worsening_with_no_min_effect_is_unchanged() -> None:
    """Worse by 0.0009 and more than half a pooled sd, not significant: the 95% interval rules
    out a worsening of 2% of the mean (0.0113), so more repeats would not find one that matters."""
    base, cand = modularity(0.566), modularity(0.5651)

    cases, _ = exact([(case_band(base), case_band(cand))])
    (entry,) = cases["c"]["scorers"]

    values = entry["evidence"]["values"]
    assert values["diff_sd"] < -0.5
    assert values["p_worse"] > values["threshold"]
    assert values["relevant_effect"] == pytest.approx(0.02 * 0.566, rel=1e-4)
    assert values["worse_end"] < values["relevant_effect"]
    assert cases["c"]["verdict"] == "unchanged"
    assert "cannot reach 0.0113 (no min_effect set)" in entry["reason"]


def test_exact_continuous_worsening_whose_interval_reaches_the_relevant_effect_is_inconclusive() -> (
    None
):
    """Noise ten times larger: the same kind of worsening can no longer rule out 2% of the mean,
    nor a min_effect the interval reaches; a min_effect it cannot reach makes it unchanged."""
    base = continuous([round(0.566 + 10 * e, 6) for e in NOISE])
    cand = continuous([round(0.557 + 10 * e, 6) for e in NOISE])
    pair = [(case_band(base), case_band(cand))]

    cases, _ = exact(pair)
    (entry,) = cases["c"]["scorers"]

    assert (
        entry["evidence"]["values"]["worse_end"] >= entry["evidence"]["values"]["relevant_effect"]
    )
    assert cases["c"]["verdict"] == "inconclusive"
    assert "reaches 0.0113 (no min_effect set)" in entry["reason"]
    reach = exact(pair, gates={base.label: ScorerGate(min_effect=0.005)})[0]["c"]
    assert reach["verdict"] == "inconclusive"
    assert "reaches min_effect 0.005" in reach["reason"]
    beyond = exact(pair, gates={base.label: ScorerGate(min_effect=0.05)})[0]["c"]
    assert beyond["verdict"] == "unchanged"


def test_exact_continuous_worsening_below_a_stated_min_effect_is_unchanged() -> None:
    base, cand = modularity(0.566), modularity(0.5651)
    gates = {base.label: ScorerGate(min_effect=0.01)}

    cases, _ = exact([(case_band(base), case_band(cand))], gates=gates)

    assert cases["c"]["verdict"] == "unchanged"
    assert cases["c"]["scorers"][0]["evidence"]["values"]["relevant_effect"] == 0.01


def test_exact_continuous_clear_worsening_is_regressed_whatever_the_relevant_effect() -> None:
    """Significant is regressed: the relevant effect only decides what is worth more repeats."""
    base, cand = modularity(0.566), modularity(0.56)

    assert exact([(case_band(base), case_band(cand))])[0]["c"]["verdict"] == "regressed"


def test_exact_continuous_scores_around_zero_keep_the_half_sd_suspect_rule() -> None:
    """With a baseline mean near 0 the relevant effect is near 0: a worsening of half a pooled sd
    or more that is not significant stays inconclusive."""
    base = continuous([10 * e for e in NOISE])
    cand = continuous([10 * e - 0.009 for e in NOISE])

    cases, _ = exact([(case_band(base), case_band(cand))])

    assert cases["c"]["verdict"] == "inconclusive"
    assert exact([(case_band(base), case_band(continuous([10 * e - 0.002 for e in NOISE])))])[0][
        "c"
    ]["verdict"] == ("unchanged")


def test_exact_pass_rate_drop_whose_interval_cannot_reach_min_effect_is_unchanged() -> None:
    """200/200 -> 180/200 with suspect_drop below min_effect: the Newcombe interval of the drop
    ends near 0.15, short of 0.3, so it is unchanged rather than inconclusive."""
    settings = {"min_effect": 0.3, "suspect_drop": 0.05}

    cases, _ = exact([binary_pair(200, 200, 180, 200)], **settings)
    (entry,) = cases["c"]["scorers"]

    assert -entry["evidence"]["newcombe"][0] < 0.3
    assert cases["c"]["verdict"] == "unchanged"
    # the same drop at 10 repeats has an interval reaching 0.3: inconclusive
    assert exact([binary_pair(10, 10, 9, 10)], **settings)[0]["c"]["verdict"] == "inconclusive"
