"""The markdown report, for the reader of a pull request (a comment, a CI job's summary): the
outcome, a table of the cases that changed, each regressed or broken case with its failing
output in a code block, the unchanged cases folded, and the statistics folded last.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from noisefloor.model.report import CaseReport, Report
from noisefloor.report._evidence import (
    calls_text,
    counts_line,
    evidence_line,
    repeats_tag,
    sequential_line,
    side_text,
    suite_change,
)
from noisefloor.report._words import (
    FAILING,
    VERDICT_WORDS,
    case_words,
    control_words,
    doubt_text,
    failing_outputs,
    headline,
)

__all__ = ["fenced", "render"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def fenced(lines: Sequence[str], info: str = "") -> list[str]:
    """A fenced code block longer than any backtick run inside it, so nothing escapes it."""
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *lines, fence]


def _words(case: CaseReport) -> str:
    phrase = case_words(case)
    return f"{phrase.title}: {phrase.words}" if phrase.title else phrase.words


def _verdict(case: CaseReport) -> str:
    word = VERDICT_WORDS.get(case.verdict, case.verdict)
    return f"**{word}**" if case.verdict in FAILING else word


def _table(cases: list[CaseReport]) -> list[str]:
    rows = [f"| {_verdict(c)} | `{_cell(c.case_id)}` | {_cell(_words(c))} |" for c in cases]
    return ["| verdict | case | what the check found |", "|---|---|---|", *rows]


def _failing(case: CaseReport) -> list[str]:
    """A regressed or broken case: its line, what the control took, each failing output."""
    word = VERDICT_WORDS.get(case.verdict, case.verdict)
    out = ["", f"#### {word} `{_cell(case.case_id)}`", "", _words(case)]
    control = control_words(case)
    if control:
        out += ["", f"Concurrent control: {control}."]
    for failing in failing_outputs(case):
        out += ["", f"Repeat r{failing.repeat} failed: {_cell(failing.why)}", ""]
        out += fenced([failing.gist], "text")
    return out


def _statistics(report: Report) -> list[str]:
    """The rule, the design, the suite's mean change and one row per scorer with its intervals
    and test, folded: what `-v` prints in the terminal."""
    lines = [f"rule `{report.rule}`, {calls_text(report)}"]
    sequential = sequential_line(report)
    rule = report.rule_summary
    if sequential is not None:
        lines.append(sequential)
    elif rule is not None and rule.thresholds and rule.K is not None and report.settings:
        lines.append(
            f"alpha {report.settings.alpha} family-wise; Tarone K={rule.K['regress']}, "
            f"threshold {rule.thresholds['regress']}"
        )
    suite = suite_change(report)
    if suite is not None:
        lines.append(suite)
    out = ["", "<details><summary>The statistics</summary>", ""]
    for line in lines:
        out += [_cell(line), ""]
    out += [
        "| case | scorer | baseline | candidate | evidence |",
        "|---|---|---|---|---|",
    ]
    for case in report.cases:
        tags = " ".join(
            t
            for t in (
                case.reason,
                repeats_tag(case),
                "[quarantine: " + "; ".join(f"{k} {v}" for k, v in case.quarantine.items()) + "]"
                if case.quarantine and case.verdict != "quarantine"
                else "",
            )
            if t
        )
        name = _cell(f"{case.case_id} ({case.verdict}): {tags}")
        if not case.scorers:
            out.append(f"| {name} | | - | - | |")
        for s in case.scorers:
            evidence = evidence_line(s.evidence) or s.reason
            out.append(
                f"| {name} | `{s.key}` {s.verdict} | {_cell(side_text(s.baseline))} | "
                f"{_cell(side_text(s.candidate))} | {_cell(evidence)} |"
            )
            name = ""
    return [*out, "", "</details>"]


def render(report: Report) -> str:
    """The comparison report as GitHub-flavoured markdown."""
    title = headline(report, counts_line(report.counts))
    out = [f"### noisefloor: {report.suite} · {title}", ""]
    if report.adopted:
        out += [f"Run `{report.candidate}` adopted as the baseline.", ""]
    elif report.baseline is not None:
        out += [f"Baseline `{report.baseline}` → candidate `{report.candidate}`.", ""]
    changed = [c for c in report.cases if c.verdict != "unchanged"]
    unchanged = [c for c in report.cases if c.verdict == "unchanged"]
    if changed:
        out += _table(changed)
    if unchanged:
        many = f"{len(unchanged)} unchanged case{'s' * (len(unchanged) != 1)}"
        out += ["", f"<details><summary>{many}</summary>", "", *_table(unchanged), "", "</details>"]
    for case in changed:
        if case.verdict in FAILING:
            out += _failing(case)
    notes = set(report.notes)
    doubt = doubt_text(report)
    quoted = [f"**note:** {_cell(doubt)}"] if doubt else []
    quoted += [f"**note:** {_cell(n)}" for n in report.notes]
    quoted += [f"**warning:** {_cell(w)}" for w in report.warnings if w not in notes]
    if report.unmeasured:
        quoted.append(f"**error:** {_cell(report.unmeasured)}")
    for line in quoted:
        out += ["", f"> {line}"]
    failing = [c.case_id for c in report.cases if c.verdict in FAILING]
    if failing:
        out += [
            "",
            f"`noisefloor explain {failing[0]} {report.candidate}` shows what the target said "
            "differently.",
        ]
    out += _statistics(report)
    return "\n".join(out) + "\n"
