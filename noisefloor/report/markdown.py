"""The markdown report, for pull-request comments: a headline, the suite line, one table row per
scorer with its numbers, worst cases first."""

from __future__ import annotations

from noisefloor.model.report import Report
from noisefloor.report._evidence import (
    calls_text,
    counts_line,
    evidence_line,
    quoted_examples,
    repeats_tag,
    sequential_line,
    side_text,
    suite_change,
)

__all__ = ["render"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(report: Report) -> str:
    """The comparison report as GitHub-flavoured markdown."""
    title = f"`{report.baseline}` → `{report.candidate}`"
    if report.adopted:
        title = "adopted as the baseline"
    elif report.baseline is None:
        title = "not adopted as the baseline"
    out = [f"### noisefloor: {report.suite}, {title}", ""]
    out.append(
        f"**{counts_line(report.counts)}**, rule `{report.rule}`, "
        f"{calls_text(report)}, exit {report.exit_code}"
    )
    rule = report.rule_summary
    sequential = sequential_line(report)
    if sequential is not None:
        out.append(f"\n{sequential}")
    elif rule is not None and rule.thresholds and rule.K is not None and report.settings:
        out.append(
            f"\nalpha {report.settings.alpha} family-wise; Tarone K={rule.K['regress']}, "
            f"threshold {rule.thresholds['regress']}"
        )
    suite = suite_change(report)
    if suite is not None:
        out.append(f"\n{suite}")
    out += [
        "",
        "| verdict | case | scorer | baseline | candidate | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for case in report.cases:
        verdict = f"**{case.verdict}**"
        lane = ""
        if case.quarantine and case.verdict != "quarantine":  # (wilson says so already)
            lane = "[quarantine: " + "; ".join(f"{k} {v}" for k, v in case.quarantine.items()) + "]"
        name = _cell(f"{case.case_id}: {case.reason} {lane} {repeats_tag(case)}".rstrip())
        if not case.scorers:
            # a case without scorers still takes its row
            out.append(f"| {verdict} | {name} | ``  | - | - |  |")
        examples = quoted_examples(case.verdict, case.scorers)
        for s, example in zip(case.scorers, examples, strict=True):
            evidence = evidence_line(s.evidence) or s.reason
            if example is not None:
                evidence += f"; {example}"
            out.append(
                f"| {verdict} | {name} | `{s.key}` {s.verdict} | {_cell(side_text(s.baseline))} | "
                f"{_cell(side_text(s.candidate))} | {_cell(evidence)} |"
            )
            verdict = name = ""
    for warning in report.warnings:
        out.append(f"\n> warning: {_cell(warning)}")
    if report.unmeasured:
        out.append(f"\n> error: {_cell(report.unmeasured)}")
    return "\n".join(out) + "\n"
