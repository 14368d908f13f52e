"""The statistics behind a comparison, as `-v` adds them to the terminal report: the runs, the
rule and its correction, the sequential design, the suite's mean change, and per scorer of a
case its counts with their intervals, the test against its threshold, the looks and the control.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noisefloor.report._evidence import (
    calls_text,
    evidence_line,
    repeats_tag,
    sequential_line,
    side_text,
)

if TYPE_CHECKING:
    from noisefloor.model.report import CaseReport, Report

__all__ = ["case_lines", "suite_lines"]


def _span(value: int | list[int]) -> str:
    return f"{value[0]}-{value[-1]}" if isinstance(value, list) else str(value)


def _runs(report: Report) -> str:
    if report.adopted:
        return f"{report.suite}: {report.candidate} (adopted as the baseline)"
    if report.baseline is None:
        return f"{report.suite}: {report.candidate} (not adopted as the baseline)"
    return f"{report.suite}: {report.baseline} -> {report.candidate}"


def suite_lines(report: Report) -> list[str]:
    """The runs compared, the rule with its false-alarm rate and correction, the design and what
    it spent, the suite's mean change with its interval, and the runs a label pools."""
    rule = report.rule_summary
    parts = [f"rule {report.rule}"]
    if report.sequential is not None and report.settings is not None:
        looks = len(report.sequential.looks)
        shown = "one look" if looks == 1 else f"{looks} looks"
        parts.append(f"alpha {report.settings.alpha} family-wise, spent over {shown}")
    elif report.rule == "exact" and rule is not None:
        alpha = report.settings.alpha if report.settings is not None else None
        parts.append(f"alpha {alpha} family-wise")
        k = (rule.K or {}).get("regress")
        parts.append(f"K={k} (thresh {(rule.thresholds or {}).get('regress')})")
    parts.append(calls_text(report))
    lines = [_runs(report), ", ".join(parts)]
    sequential = sequential_line(report)
    if sequential is not None:
        lines.append(sequential)
    summary = report.suite_summary
    if summary is not None and summary.cases:
        ci = summary.ci95
        shown = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "(one case: no interval)"
        lines.append(
            f"suite: mean pass-rate change {summary.mean_diff:+.3f} over {summary.cases} case(s), "
            f"95% CI {shown}"
        )
    for side_name in ("baseline", "candidate"):
        run = getattr(report.runs, side_name)
        if run is None or not run.label or not run.rests_on:
            continue
        taken = ", ".join(f"{r.run_id} ({_span(r.repeats)})" for r in run.rests_on)
        count = len(run.rests_on)
        lines.append(
            f"{side_name} {run.label}: {_span(run.repeats)} repeats per case from "
            f"{count} run{'s' if count > 1 else ''}: {taken}"
        )
    return lines


def case_lines(case: CaseReport) -> list[str]:
    """A case's statistics: the rule's reason with the sample sizes, looks and control it rests
    on, the flaky and quarantine marks, then one line per scorer with its counts, intervals and
    test."""
    tags = [case.reason]
    if case.flaky:
        tags.append(f"[flaky: {', '.join(f'{k} {v:.2f}' for k, v in case.flaky.items())}]")
    if case.quarantine and case.verdict != "quarantine":  # (wilson says so already)
        tags.append(f"[quarantine: {'; '.join(f'{k} {v}' for k, v in case.quarantine.items())}]")
    repeats = repeats_tag(case)
    if repeats:
        tags.append(repeats)
    lines = ["  ".join(tags)]
    for s in case.scorers:
        # its own verdict only where it differs from the case's
        verdict = "" if s.verdict in (case.verdict, "unchanged") else f" [{s.verdict}]"
        evidence = evidence_line(s.evidence)
        lines.append(
            f"{s.key}{verdict}: {side_text(s.baseline)} -> {side_text(s.candidate)}"
            + (f"; {evidence}" if evidence else "")
        )
    return lines
