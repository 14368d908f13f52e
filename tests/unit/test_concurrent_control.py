"""A case the deep baseline called regressed, judged against its concurrent control: drift clears
it only when the control measured something."""

from __future__ import annotations

from noisefloor.model.parts import Side
from noisefloor.model.report import CaseReport, Evidence, ScorerReport, Sequential
from noisefloor.model.verdict import Verdict
from noisefloor.operations.concurrent_control import confirmed

SCREENED = CaseReport(
    case_id="c",
    verdict=Verdict.REGRESSED,
    reason="1:contains: pass rate 50/50 -> 2/5 (p=0.001 <= 0.004)",
    scorers=[],
    sequential=Sequential(
        baseline_repeats=50, candidate_repeats=5, screen=5, verdict_repeats=5, stopped="decided"
    ),
)


def _against(verdict: Verdict, control: tuple[int, int], fresh: tuple[int, int]) -> CaseReport:
    scorer = ScorerReport(
        key="1:contains",
        verdict=verdict,
        reason="",
        baseline=Side(k=control[0], n=control[1]),
        candidate=Side(k=fresh[0], n=fresh[1]),
        evidence=Evidence(p_regress=0.5),
    )
    return CaseReport(
        case_id="c", verdict=verdict, reason="no significant change", scorers=[scorer]
    )


def test_a_measured_control_no_worse_than_the_candidate_calls_it_drift() -> None:
    case = confirmed(
        SCREENED, _against(Verdict.UNCHANGED, (20, 40), (20, 40)), (5, 45, 50, 90), "", 2
    )
    assert case.verdict is Verdict.UNCHANGED
    assert "(drift), not a regression" in case.reason and "50/50 -> 2/5" in case.reason
    assert case.sequential is not None and case.sequential.control is not None
    assert (case.sequential.control.repeats, case.sequential.candidate_repeats) == (40, 45)
    assert "20/40 -> 20/40" in case.sequential.control.reason


def test_a_control_the_infrastructure_left_unscored_never_clears_a_regression() -> None:
    # every control repeat lost to the infrastructure: nothing measured on the control's side
    case = confirmed(
        SCREENED, _against(Verdict.INCONCLUSIVE, (0, 0), (20, 40)), (5, 45, 50, 90), "", 2
    )
    assert case.verdict is Verdict.REGRESSED
    assert case.sequential is not None and case.sequential.control is not None
    assert case.sequential.control.reason.startswith("no concurrent control: too few of its")


def test_a_regression_the_control_confirms_keeps_the_deep_evidence() -> None:
    case = confirmed(
        SCREENED, _against(Verdict.REGRESSED, (20, 40), (0, 40)), (5, 45, 50, 90), "", 2
    )
    assert case.verdict is Verdict.REGRESSED and case.reason == SCREENED.reason
    assert case.sequential is not None and case.sequential.control is not None
    assert case.sequential.control.verdict is Verdict.REGRESSED


def test_without_a_control_the_deep_verdict_stands_and_says_why() -> None:
    case = confirmed(SCREENED, None, None, "its input changed since the baseline", 2)
    assert case.verdict is Verdict.REGRESSED
    assert case.sequential is not None and case.sequential.control is not None
    assert case.sequential.control.reason == (
        "no concurrent control: its input changed since the baseline"
    )
