"""The terminal report, read in ten seconds: the outcome and counts first, then one line per case
worst first in plain words with the numbers a person checks, the failing output under its case.

`-v` adds the statistics (`report.statistics`); `-q` keeps the outcome and what failed. Drawn with
rich at the screen's width, coloured only on a screen that takes colour (`_console.Screen`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noisefloor.model.verdict import scorer_title
from noisefloor.report._console import Page, Screen
from noisefloor.report._evidence import counts_line, side_text
from noisefloor.report._usage import usage_text
from noisefloor.report._words import (
    FAILING,
    VERDICT_WORDS,
    case_words,
    control_words,
    doubt_text,
    failing_outputs,
    headline,
    passed,
    possible_drop,
)
from noisefloor.report.statistics import case_lines, suite_lines

if TYPE_CHECKING:
    from noisefloor.model.report import CaseReport, Report
    from noisefloor.model.run import RunSummary, SummaryCase

__all__ = ["LISTED", "Screen", "render", "render_run"]

#: Unchanged cases listed one by one; more than this are one line with their count.
LISTED = 5

_STYLE = {
    "broken": "bold red",
    "regressed": "bold red",
    "invalid": "bold red",
    "inconclusive": "yellow",
    "quarantine": "yellow",
    "unmeasured": "yellow",
    "redefined": "yellow",
    "improved": "green",
    "fixed": "green",
    "unchanged": "green",
}
_EXIT_STYLE = {0: "bold green", 1: "bold red", 2: "bold red"}
#: The start of the message `targets.version_change` words.
_VERSION_NOTE = "the target's version changed"
#: The start of the message a first check's adoption is worded with (`operations.check`).
_ADOPTION_NOTE = "no baseline for"


def _word(verdict: str) -> str:
    return VERDICT_WORDS.get(verdict, verdict)


def _head(page: Page, report: Report) -> None:
    text = headline(report, counts_line(report.counts))
    counts, _, rest = text.partition(" · ")
    page.line((counts, _EXIT_STYLE.get(report.exit_code, "bold yellow")), (f" · {rest}", ""))


def _without_path(title: str) -> str:
    head, sep, _ = title.rpartition(" at ")
    return head if sep else title


def _case_row(page: Page, case: CaseReport, column: int) -> None:
    """A case's line, fitted to the width by shortening the scorer's title; when even its name
    leaves no room, the words go to a row of their own under the case id."""
    phrase = case_words(case)
    word = _word(case.verdict).ljust(column)
    titles = (phrase.title, _without_path(phrase.title), phrase.name) if phrase.title else ("",)
    tail = phrase.words
    for title in titles:
        tail = f"{title}: {phrase.words}" if title else phrase.words
        if len(word) + len(case.case_id) + len(tail) + 4 <= page.screen.width:
            page.line(
                (word, _STYLE.get(case.verdict, "")),
                ("  " + case.case_id, "bold"),
                ("  " + tail, ""),
            )
            return
    page.line((word, _STYLE.get(case.verdict, "")), ("  " + case.case_id, "bold"))
    page.para("", tail, indent=column + 2)


def _failing_rows(page: Page, case: CaseReport) -> None:
    control = control_words(case)
    if control:
        page.line((f"    {control}", ""))
    for failing in failing_outputs(case):
        page.line((f"    {failing.why}", ""), (f" · r{failing.repeat}: {failing.gist}", "dim"))


def _collapsed(page: Page, verdict: str, cases: list[CaseReport], column: int) -> None:
    """Many unchanged (or cleanly added) cases as one line."""
    if verdict == "added":
        words = f"{len(cases)} cases: every scorer passed every repeat"
    else:
        drops = [d for c in cases if (d := _drop(c)) is not None]
        found = f"no drop over {max(drops):.2f} found in any" if drops else "no change found"
        words = f"{len(cases)} cases: {found} (-v lists each)"
    page.line((_word(verdict).ljust(column), _STYLE.get(verdict, "")), (f"  {words}", ""))


def _drop(case: CaseReport) -> float | None:
    if case.sequential is not None and case.sequential.stopped == "same":
        return None  # the baseline's own samples: nothing could have dropped
    drops = [d for s in case.scorers if (d := possible_drop(s)) is not None]
    return max(drops) if drops else None


def _quiet(case: CaseReport) -> bool:
    """A case that may be folded into a count: unchanged, or added with every repeat passing."""
    if case.verdict == "unchanged":
        return True
    return case.verdict == "added" and all(s.candidate.k == s.candidate.n for s in case.scorers)


def _cases(page: Page, report: Report, verbosity: int) -> None:
    shown = [c for c in report.cases if verbosity >= 0 or c.verdict in FAILING]
    column = max((len(_word(c.verdict)) for c in shown), default=0)
    folded: dict[str, list[CaseReport]] = {}
    if verbosity == 0:
        for verdict in ("unchanged", "added"):
            quiet = [c for c in shown if c.verdict == verdict and _quiet(c)]
            if len(quiet) > LISTED:
                folded[verdict] = quiet
    done: set[str] = set()
    for case in shown:
        group = folded.get(case.verdict)
        if group is not None and case in group:
            if case.verdict not in done:
                done.add(case.verdict)
                _collapsed(page, case.verdict, group, column)
            continue
        _case_row(page, case, column)
        if verbosity >= 0:
            _failing_rows(page, case)
        if verbosity > 0:
            for line in case_lines(case):
                page.para("", line, indent=column + 4)


def _notes(report: Report, verbosity: int) -> list[str]:
    """The notes, each routine event in a few words (the whole message under -v)."""
    if verbosity > 0:
        return list(report.notes)
    out = []
    for note in report.notes:
        if report.adopted and note.startswith(_ADOPTION_NOTE):
            run = report.runs.candidate
            depth = run.repeats if isinstance(run.repeats, int) else run.repeats[-1]
            out.append(
                f"adopted as the baseline of {report.suite} ({depth} repeats per case); "
                "check again after a change"
            )
        elif report.target_change is not None and note.startswith(_VERSION_NOTE):
            change = report.target_change
            kinds = [("modified", change.modified), ("added", change.added)]
            kinds.append(("removed", change.removed))
            files = [f"{kind} {', '.join(paths[:3])}" for kind, paths in kinds if paths]
            out.append("new target version: " + ("; ".join(files) or "; ".join(change.reasons)))
        else:
            out.append(note)
    return out


def _tail(page: Page, report: Report, verbosity: int) -> None:
    if verbosity >= 0:
        doubt = doubt_text(report, short=verbosity == 0)
        if doubt is not None:
            page.para("note:", doubt, "cyan")
        for note in _notes(report, verbosity):
            page.para("note:", note, "cyan")
    notes = set(report.notes)
    for warning in report.warnings:
        if warning not in notes:
            page.para("warning:", warning, "yellow")
    if report.unmeasured:
        page.para("error:", report.unmeasured, "bold red")


def render(report: Report, screen: Screen | None = None, verbosity: int = 0) -> str:
    """The comparison report as a person reads it; `verbosity` 1 adds the statistics, -1 keeps
    the outcome, the failing cases and the warnings."""
    page = Page(screen or Screen())
    _head(page, report)
    if verbosity > 0:
        for line in suite_lines(report):
            page.para("", line, indent=2)
    _cases(page, report, verbosity)
    _tail(page, report, verbosity)
    return page.text()


def _run_case(page: Page, case: SummaryCase, titles: dict[str, str], verbosity: int) -> None:
    rated = [s for s in case.scorers if s.side.n]
    worst = min(rated, key=lambda s: (s.side.k or 0) / (s.side.n or 1), default=None)
    if worst is None:
        words = ", ".join(f"{k} x{v}" for k, v in sorted(case.outcomes.items()))
    elif all(s.side.k == s.side.n for s in rated):
        words = f"every scorer passed all {worst.side.n} repeats"
    else:
        words = f"{titles.get(worst.key, worst.key)}: {passed(worst.side)}"
    page.line(("  " + case.case_id, "bold"), (f"  {words}", ""))
    if verbosity > 0:
        outcomes = ", ".join(f"{k} x{v}" for k, v in sorted(case.outcomes.items()))
        page.para("", f"({outcomes})", indent=6)
        for s in case.scorers:
            page.para("", f"{s.key}: {side_text(s.side)}", indent=6)


def render_run(summary: RunSummary, screen: Screen | None = None, verbosity: int = 0) -> str:
    """A run without comparison: its id and calls, then per case the scorer that passed least."""
    page = Page(screen or Screen())
    run = summary.run
    page.line((f"{run.suite}: run {run.run_id}", "bold"))
    calls = f"{summary.calls} target calls ({summary.pending} samples were missing)"
    page.para("", f"{len(run.cases)} cases, {calls}", indent=2)
    if summary.usage is not None:
        page.para("", f"usage: {usage_text(summary.usage)}", indent=2)
    titles = {u.label: scorer_title(u.name, u.params) for c in run.cases for u in c.scorers}
    if verbosity >= 0:
        for case in summary.cases:
            _run_case(page, case, titles, verbosity)
    for warning in summary.warnings:
        page.para("warning:", warning, "yellow")
    if summary.unmeasured:
        page.para("error:", summary.unmeasured, "bold red")
    return page.text()
