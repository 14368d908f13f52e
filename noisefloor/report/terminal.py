"""The terminal report: the headline, the suite line, then every case worst first with its numbers.

Plain text (no colour codes), so that it reads the same in a CI log as in a terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noisefloor.report._evidence import (
    calls_text,
    counts_line,
    evidence_line,
    quoted_examples,
    repeats_tag,
    sequential_line,
    side_text,
)
from noisefloor.report._usage import usage_text

if TYPE_CHECKING:
    from noisefloor.model.report import Report
    from noisefloor.model.run import RunSummary

__all__ = ["render", "render_run"]

_MARK = {
    "broken": "BROKEN",
    "regressed": "REGRESSED",
    "invalid": "INVALID",
    "inconclusive": "inconclusive",
    "quarantine": "quarantine",
    "redefined": "redefined",
    "unmeasured": "unmeasured",
    "removed": "removed",
    "added": "added",
    "fixed": "fixed",
    "improved": "improved",
    "unchanged": "ok",
}


def _suite_line(report: Report) -> list[str]:
    rule = report.rule_summary
    parts = [f"rule {report.rule}"]
    sequential = sequential_line(report)
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
    lines = ["  " + counts_line(report.counts) + "  |  " + ", ".join(parts)]
    if sequential is not None:
        lines.append(f"  {sequential}")
    summary = report.suite_summary
    if summary is not None and summary.cases:
        ci = summary.ci95
        shown = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "(one case: no interval)"
        lines.append(
            f"  suite: mean pass-rate change {summary.mean_diff:+.3f} over {summary.cases} case(s), "
            f"95% CI {shown}"
        )
    return lines


def _span(value: int | list[int]) -> str:
    return f"{value[0]}-{value[-1]}" if isinstance(value, list) else str(value)


def _pool_lines(report: Report) -> list[str]:
    """For each labelled side, the runs its repeats come from (a label pools its runs)."""
    lines = []
    for side_name in ("baseline", "candidate"):
        run = getattr(report.runs, side_name)
        if run is None or not run.label or not run.rests_on:
            continue
        taken = ", ".join(f"{r.run_id} ({_span(r.repeats)})" for r in run.rests_on)
        count = len(run.rests_on)
        lines.append(
            f"  {side_name} {run.label}: {_span(run.repeats)} repeats per case from "
            f"{count} run{'s' if count > 1 else ''}: {taken}"
        )
    return lines


def render(report: Report) -> str:
    """The comparison report as text."""
    head = f"{report.suite}: {report.baseline} -> {report.candidate}"
    if report.adopted:
        head = f"{report.suite}: {report.candidate} (adopted as the baseline)"
    elif report.baseline is None:
        head = f"{report.suite}: {report.candidate} (not adopted as the baseline)"
    lines = [head, *_suite_line(report), *_pool_lines(report), ""]
    for case in report.cases:
        mark = _MARK.get(case.verdict, case.verdict)
        flaky = case.flaky
        tag = f"  [flaky: {', '.join(f'{k} {v:.2f}' for k, v in flaky.items())}]" if flaky else ""
        if case.quarantine and case.verdict != "quarantine":  # (wilson says so already)
            tag += f"  [quarantine: {'; '.join(f'{k} {v}' for k, v in case.quarantine.items())}]"
        repeats = repeats_tag(case)
        repeats = f"  {repeats}" if repeats else ""
        lines.append(f"  {mark:>12}  {case.case_id}  {case.reason}{tag}{repeats}")
        examples = quoted_examples(case.verdict, case.scorers)
        for s, example in zip(case.scorers, examples, strict=True):
            # one line per scorer: its own verdict only where it differs from the case's
            verdict = "" if s.verdict in (case.verdict, "unchanged") else f" [{s.verdict}]"
            evidence = evidence_line(s.evidence)
            lines.append(
                f"  {'':>12}    {s.key}{verdict}: {side_text(s.baseline)} -> "
                f"{side_text(s.candidate)}" + (f"; {evidence}" if evidence else "")
            )
            if example is not None:
                lines.append(f"  {'':>12}      {example}")
    for warning in report.warnings:
        lines.append(f"warning: {warning}")
    if report.unmeasured:
        lines.append(f"error: {report.unmeasured}")
    lines.append(f"exit {report.exit_code}")
    return "\n".join(lines) + "\n"


def render_run(summary: RunSummary) -> str:
    """A run without comparison: per case, the pass count of every scorer."""
    lines = [
        f"{summary.run.run_id}",
        f"  {len(summary.run.cases)} cases, {summary.calls} target calls ({summary.pending} samples were missing)",
    ]
    if summary.usage is not None:
        lines.append(f"  usage: {usage_text(summary.usage)}")
    for case in summary.cases:
        outcomes = ", ".join(f"{k} x{v}" for k, v in sorted(case.outcomes.items()))
        lines.append(f"  {case.case_id}  ({outcomes})")
        for s in case.scorers:
            lines.append(f"      {s.key}: {side_text(s.side)}")
    for warning in summary.warnings:
        lines.append(f"warning: {warning}")
    if summary.unmeasured:
        lines.append(f"error: {summary.unmeasured}")
    return "\n".join(lines) + "\n"
