"""The suite's figures from its case reports: their order, worst first; the quarantine lane of
each case; and the paired mean difference in pass rate across cases with its interval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noisefloor import stats
from noisefloor.model.verdict import SEVERITY, Verdict, round6
from noisefloor.settings import RuleSettings

if TYPE_CHECKING:
    from noisefloor.model.report import CaseReport, SuiteSummary

__all__ = ["quarantine_lane", "sort_cases", "suite_summary"]


def sort_cases(cases: list[CaseReport]) -> list[CaseReport]:
    """Worst first, then by case id."""
    return sorted(cases, key=lambda c: (SEVERITY.index(c.verdict), c.case_id))


def quarantine_lane(case: CaseReport) -> dict[str, str] | None:
    """The quarantine lane of research/quarantine-lane.md as information, under every rule: each
    scorer whose repeats disagree (pass and fail) within one side, with those sides' counts."""
    lane = {}
    for scorer in case.scorers:
        disagree = [
            f"{name} {numbers.k}/{numbers.n}"
            for name, numbers in (("baseline", scorer.baseline), ("candidate", scorer.candidate))
            if numbers.k is not None and numbers.n is not None and 0 < numbers.k < numbers.n
        ]
        if disagree:
            lane[scorer.key] = ", ".join(disagree)
    return lane or None


def suite_summary(cases: list[CaseReport], settings: RuleSettings) -> SuiteSummary:
    """The paired mean difference in pass rate across cases, with its case-clustered 95% interval.

    Repeats shrink only the within-case variance; the case is the unit.
    """
    # a run that compares nothing (its exit policy included) never loads the report model
    from noisefloor.model.report import SuiteSummary

    diffs = []
    for case in cases:
        rates = [
            (s.candidate.rate - s.baseline.rate)
            for s in case.scorers
            if s.baseline.rate is not None and s.candidate.rate is not None
        ]
        if rates and case.verdict not in (Verdict.REDEFINED, Verdict.ADDED, Verdict.REMOVED):
            diffs.append(sum(rates) / len(rates))
    if not diffs:
        return SuiteSummary(cases=0)
    # a mean pass-rate change lies in [-1, 1]: the interval of few cases is cut to that range
    mean, lo, hi = stats.paired_mean_ci(diffs, bounds=(-1.0, 1.0))
    return SuiteSummary(
        cases=len(diffs),
        mean_diff=round6(mean),
        ci95=[round6(lo), round6(hi)] if len(diffs) > 1 else None,
        suite_min_effect=settings.suite_min_effect,
        gate_failed=len(diffs) > 1 and hi < -settings.suite_min_effect,
    )
