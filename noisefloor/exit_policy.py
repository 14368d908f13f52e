"""The exit-code policy: from a comparison's case verdicts, scorer errors and suite line to the
exit code, and the finished report that carries it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from noisefloor.errors import ExitCode
from noisefloor.report.model import Report, ScorerReport
from noisefloor.settings import RuleSettings
from noisefloor.verdict import Verdict, quarantine_lane, sort_cases

__all__ = ["exit_code_for", "finished_report"]


def exit_code_for(
    counts: Counter[str] | dict[str, int], *, strict: bool, harness_fault: bool = False
) -> ExitCode:
    """The process exit code for a set of case verdicts."""
    if harness_fault:
        return ExitCode.HARNESS
    if counts.get(Verdict.BROKEN, 0):
        return ExitCode.BROKEN
    if counts.get(Verdict.REGRESSED, 0):
        return ExitCode.REGRESSED
    if strict and (counts.get(Verdict.INCONCLUSIVE, 0) or counts.get(Verdict.REDEFINED, 0)):
        return ExitCode.REGRESSED
    return ExitCode.OK


def _scorer_errors(scorer: ScorerReport) -> int:
    return (scorer.baseline.scorer_errors or 0) + (scorer.candidate.scorer_errors or 0)


def finished_report(
    report: dict[str, Any], settings: RuleSettings, continue_on_scorer_error: bool
) -> Report:
    """The report model from its parts: cases worst first, each marked where its repeats
    disagree within a side (the quarantine lane, which never moves the exit code), counts,
    scorer errors, exit code."""
    cases = sort_cases(report["cases"])
    for case in cases:
        case.quarantine = quarantine_lane(case)
    counts = Counter(c.verdict.value for c in cases)
    scorer_errors = sum(_scorer_errors(s) for c in cases for s in c.scorers)
    warnings = report.setdefault("warnings", [])
    if scorer_errors:
        affected = sorted({c.case_id for c in cases for s in c.scorers if _scorer_errors(s)})
        warnings.append(
            f"{scorer_errors} scorer error(s) in {', '.join(affected[:5])}: a scorer raised; "
            "that is the harness's fault, not the target's (see `noisefloor show`)"
        )
    summary = report.get("suite_summary")
    suite_failed = bool(settings.suite_gate and summary is not None and summary.gate_failed)
    code = exit_code_for(
        counts,
        strict=settings.strict,
        harness_fault=bool(scorer_errors) and not continue_on_scorer_error,
    )
    if suite_failed and code == 0:
        code = exit_code_for({Verdict.REGRESSED: 1}, strict=False)
    report.update(cases=cases, counts=dict(sorted(counts.items())), exit_code=int(code))
    return Report(**report)
