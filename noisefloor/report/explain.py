"""`noisefloor explain` rendered: text for the terminal and a markdown section for pull-request
comments and job summaries, both read from one `noisefloor.pipeline.explain.Explanation`: the
counts the check judged, the failures grouped by why, then the few distinct outputs and a diff.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from noisefloor.pipeline.explain import Explanation, Miss, Said, ScorerCounts, SideExplained
from noisefloor.report._console import Page, Screen, fit
from noisefloor.report.markdown import fenced

__all__ = ["render", "render_markdown", "render_text", "repeat_ranges"]

#: Lines of one distinct output shown; the JSON form keeps what the explanation holds.
SHOWN_LINES = 20
#: Distinct outputs of one side listed (most common first); `-v` lists every one.
SHOWN_OUTPUTS = 3
#: Runs of repeats a reason lists before it says how many more.
SHOWN_RANGES = 4


def repeat_ranges(repeats: Sequence[int], most: int | None = None) -> str:
    """`r0-r2, r5`: 0-based repeats in runs; past `most` runs, `and N more`."""
    spans: list[list[int]] = []
    for r in sorted(repeats):
        if spans and r == spans[-1][-1] + 1:
            spans[-1].append(r)
        else:
            spans.append([r])
    shown = [f"r{s[0]}" if len(s) == 1 else f"r{s[0]}-r{s[-1]}" for s in spans]
    if most is not None and len(shown) > most:
        return ", ".join(shown[:most]) + f" and {len(shown) - most} more"
    return ", ".join(shown)


def _lines(said: Said) -> list[str]:
    lines = said.text.splitlines() or [""]
    extra = []
    if len(lines) > SHOWN_LINES:
        extra.append(f"... {len(lines) - SHOWN_LINES} more lines")
        lines = lines[:SHOWN_LINES]
    if said.chars > len(said.text):
        extra.append(f"... cut: {said.chars} characters in all")
    return lines + extra


def _said_head(said: Said) -> str:
    failing = len(said.failing)
    fails = ", all failing" if failing == said.count else f", {failing} failing" if failing else ""
    return f"x{said.count} ({repeat_ranges(said.repeats, SHOWN_RANGES)}{fails})"


def _counts(pair: tuple[int, int] | None) -> str:
    return "-" if pair is None else f"{pair[0]} of {pair[1]}"


def _side_head(name: str, side: SideExplained) -> str:
    label = f", label {side.label}" if side.label else ""
    outputs = len(side.outputs)
    return (
        f"what the {name} said ({side.run_id}{label}): {side.repeats} repeats, {side.passed} "
        f"passed, {outputs} distinct output{'s' * (outputs != 1)}"
    )


def _input_line(expl: Explanation) -> str:
    base, cand = expl.baseline, expl.candidate
    if base is not None and base.input != cand.input:
        return f"input changed: {base.input!r} -> {cand.input!r}"
    return f"input: {cand.input!r}"


@dataclass(frozen=True)
class Reason:
    """The candidate's repeats that failed for one reason: which scorer, why, and which."""

    scorer: str
    why: str
    repeats: list[int]


def reasons(expl: Explanation) -> list[Reason]:
    """The candidate's failures grouped by why (a scorer's detail, or the call's own error),
    most repeats first."""
    titles = {s.scorer: s.title or s.scorer for s in expl.scorers}
    groups: dict[tuple[str, str], list[int]] = {}
    for miss in expl.candidate.misses:
        scorer = titles.get(miss.scorer, miss.scorer) if miss.scorer else _failed_call(miss)
        groups.setdefault((scorer, miss.detail), []).append(miss.repeat)
    found = [Reason(scorer, why, repeats) for (scorer, why), repeats in groups.items()]
    return sorted(found, key=lambda r: (-len(r.repeats), r.repeats[0]))


def _failed_call(miss: Miss) -> str:
    return f"the call ({miss.status.value})"


def _table(scorers: Sequence[ScorerCounts], base: str, cand: str) -> list[tuple[str, str, str]]:
    rows = [("scorer", base, cand)]
    rows += [(s.title or s.scorer, _counts(s.baseline), _counts(s.candidate)) for s in scorers]
    return rows


def _aligned(page: Page, rows: list[tuple[str, str, str]]) -> None:
    counts = max(len(r[1]) for r in rows)
    room = page.screen.width - 2 - counts - 2 - max(len(r[2]) for r in rows) - 2
    name = min(max(len(r[0]) for r in rows), max(room, 12))
    for first, second, third in rows:
        page.line((f"  {fit(first, name):<{name}}  {second:<{counts}}  {third}", ""))


def render_text(expl: Explanation, screen: Screen | None = None, verbosity: int = 0) -> str:
    """The explanation as a person reads it: the counts the check judged (the control's apart),
    why the candidate's repeats failed, grouped, then what each side said and the diff."""
    page = Page(screen or Screen())
    base, cand = expl.baseline, expl.candidate
    page.line((f"{expl.case_id}", "bold"), (f" (suite {expl.suite})", ""))
    page.para("", _input_line(expl), indent=2)
    if expl.scorers:
        page.blank()
        _aligned(page, _table(expl.scorers, "baseline", "candidate"))
    if expl.control is not None:
        control = expl.control
        page.blank()
        page.para(
            "",
            f"beside the concurrent control (the baseline's version re-run in the check, "
            f"{control.repeats} repeats, and {control.candidate_repeats} more of the candidate):",
        )
        _aligned(page, _table(control.scorers, "control", "candidate"))
    page.blank()
    found = reasons(expl)
    if found:
        page.line((f"why the candidate's repeats failed ({cand.repeats} taken):", ""))
        for reason in found:
            ranges = repeat_ranges(reason.repeats, SHOWN_RANGES)
            page.para(f"  x{len(reason.repeats)}", f"{reason.scorer}: {reason.why} ({ranges})")
    else:
        page.line(("every scorer passed every repeat of the candidate", ""))
    for name, side in (("candidate", cand), ("baseline", base)):
        page.blank()
        if side is None:
            page.line(("the baseline run has no such case", ""))
            continue
        page.para("", _side_head(name, side))
        listed = side.outputs if verbosity > 0 else side.outputs[:SHOWN_OUTPUTS]
        for said in listed:
            page.para("", _said_head(said), indent=2)
            for line in _lines(said):
                page.para("|", line, indent=4)
        if len(listed) < len(side.outputs):
            more = len(side.outputs) - len(listed)
            page.para("", f"... and {more} more distinct outputs (-v lists them)", indent=2)
    page.blank()
    page.para("", f"diff, {expl.diff_of}:")
    if expl.diff:
        for line in expl.diff:
            page.para("", line, indent=2)
        if expl.diff_cut:
            page.para("", f"... {expl.diff_cut} more lines", indent=2)
    elif base is not None and base.outputs:
        page.para("", "(the two outputs are the same)", indent=2)
    return page.text()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown_table(scorers: Sequence[ScorerCounts], base: str) -> list[str]:
    rows = [f"| scorer | {base} | candidate |", "|---|---|---|"]
    rows += [
        f"| {_cell(s.title or s.scorer)} | {_counts(s.baseline)} | {_counts(s.candidate)} |"
        for s in scorers
    ]
    return rows


def render_markdown(expl: Explanation) -> str:
    """The explanation as a markdown section (GitHub-flavoured)."""
    base, cand = expl.baseline, expl.candidate
    out = [f"#### `{expl.case_id}`: what the target said ({expl.suite})", ""]
    out.append(f"{_cell(_input_line(expl))}")
    if expl.scorers:
        out += ["", *_markdown_table(expl.scorers, "baseline")]
    if expl.control is not None:
        control = expl.control
        out += [
            "",
            f"Beside the concurrent control (the baseline's version re-run in the check, "
            f"{control.repeats} repeats, and {control.candidate_repeats} more of the candidate):",
            "",
            *_markdown_table(control.scorers, "control"),
        ]
    found = reasons(expl)
    if found:
        out += ["", "| repeats | scorer | why they failed |", "|---|---|---|"]
        out += [
            f"| x{len(r.repeats)} ({repeat_ranges(r.repeats, SHOWN_RANGES)}) | {_cell(r.scorer)} "
            f"| {_cell(r.why)} |"
            for r in found
        ]
    else:
        out += ["", "Every scorer passed every repeat of the candidate."]
    for name, side in (("candidate", cand), ("baseline", base)):
        if side is None:
            out += ["", "**baseline**: the baseline run has no such case"]
            continue
        out += ["", f"**{_cell(_side_head(name, side))}**"]
        for said in side.outputs[:SHOWN_OUTPUTS]:
            out += ["", f"- {_said_head(said)}", "", *fenced(_lines(said))]
        if len(side.outputs) > SHOWN_OUTPUTS:
            out += ["", f"... and {len(side.outputs) - SHOWN_OUTPUTS} more distinct outputs"]
    out += ["", f"Diff, {expl.diff_of}:", ""]
    if expl.diff:
        more = [f"... {expl.diff_cut} more lines"] if expl.diff_cut else []
        out += fenced([*expl.diff, *more], "diff")
    elif base is not None and base.outputs:
        out.append("(the two outputs are the same)")
    return "\n".join(out) + "\n"


def render(expl: Explanation, fmt: str, screen: Screen | None = None, verbosity: int = 0) -> str:
    """The explanation in one format: terminal, markdown or json."""
    if fmt == "json":
        return expl.model_dump_json(indent=2) + "\n"
    return render_markdown(expl) if fmt == "markdown" else render_text(expl, screen, verbosity)
