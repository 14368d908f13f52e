"""`noisefloor explain` rendered: plain text for the terminal, and a markdown section for
pull-request comments and job summaries, both read from one `noisefloor.pipeline.explain.Explanation`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from noisefloor.pipeline.explain import Explanation, Miss, Said, ScorerCounts, SideExplained

__all__ = ["render", "render_markdown", "render_text", "repeat_ranges"]

#: Lines of one distinct output shown; the JSON form keeps what the explanation holds.
SHOWN_LINES = 20


def repeat_ranges(repeats: Sequence[int]) -> str:
    """`r0-r2, r5`: 0-based repeats in runs."""
    spans: list[list[int]] = []
    for r in sorted(repeats):
        if spans and r == spans[-1][-1] + 1:
            spans[-1].append(r)
        else:
            spans.append([r])
    return ", ".join(f"r{s[0]}" if len(s) == 1 else f"r{s[0]}-r{s[-1]}" for s in spans)


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
    fails = f", {len(said.failing)} failing" if said.failing else ""
    return f"{said.count}x ({repeat_ranges(said.repeats)}{fails})"


def _counts(pair: tuple[int, int] | None) -> str:
    return "-" if pair is None else f"{pair[0]}/{pair[1]}"


def _side_head(name: str, side: SideExplained) -> str:
    label = f" (label {side.label})" if side.label else ""
    return (
        f"{name} {side.run_id}{label}: {side.repeats} repeats, {side.passed} passed, "
        f"{side.failed} failed, {len(side.outputs)} distinct output(s)"
    )


def _why(miss: Miss) -> str:
    return f"{miss.scorer}: {miss.detail}" if miss.scorer else f"{miss.status.value}: {miss.detail}"


def _grouped(misses: Sequence[Miss]) -> list[tuple[str, str]]:
    """(repeats, why) for each distinct reason, in the order of its first repeat."""
    groups: dict[str, list[int]] = {}
    for miss in misses:
        groups.setdefault(_why(miss), []).append(miss.repeat)
    return [(repeat_ranges(repeats), why) for why, repeats in groups.items()]


def _input_line(expl: Explanation) -> str:
    base, cand = expl.baseline, expl.candidate
    if base is not None and base.input != cand.input:
        return f"input changed: {base.input!r} -> {cand.input!r}"
    return f"input: {cand.input!r}"


def _scorer_rows(scorers: Sequence[ScorerCounts]) -> list[tuple[str, str, str]]:
    return [(s.scorer, _counts(s.baseline), _counts(s.candidate)) for s in scorers]


def render_text(expl: Explanation) -> str:
    """The explanation as plain text: scorers, each side's outputs, the diff, the failures."""
    base, cand = expl.baseline, expl.candidate
    out = [f"{expl.case_id} (suite {expl.suite})", f"  {_input_line(expl)}"]
    rows = _scorer_rows(expl.scorers)
    if rows:
        width = max(len(r[0]) for r in rows)
        out.append("\npassing repeats per scorer, baseline -> candidate:")
        out += [f"  {name:<{width}}  {b} -> {c}" for name, b, c in rows]
    for name, side in (("baseline", base), ("candidate", cand)):
        if side is None:
            out.append("\nbaseline: the baseline run has no such case")
            continue
        out.append("\n" + _side_head(name, side))
        for said in side.outputs:
            out.append(f"  {_said_head(said)}")
            out += [f"    | {line}" for line in _lines(said)]
    out.append(f"\ndiff, {expl.diff_of}:")
    if expl.diff:
        out += [f"  {line}" for line in expl.diff]
        if expl.diff_cut:
            out.append(f"  ... {expl.diff_cut} more lines")
    elif base is not None and base.outputs:
        out.append("  (the two outputs are the same)")
    if cand.misses:
        out.append("\nwhat failed on the candidate, by repeat:")
        out += [f"  {repeats}  {why}" for repeats, why in _grouped(cand.misses)]
    else:
        out.append("\nevery scorer passed every repeat of the candidate")
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fenced(lines: Sequence[str], info: str = "") -> list[str]:
    """A fenced code block longer than any backtick run inside it, so nothing escapes it."""
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *lines, fence]


def render_markdown(expl: Explanation) -> str:
    """The explanation as a markdown section (GitHub-flavoured)."""
    base, cand = expl.baseline, expl.candidate
    out = [f"#### `{expl.case_id}`: what the target said ({expl.suite})", ""]
    out.append(f"{_cell(_input_line(expl))}")
    rows = _scorer_rows(expl.scorers)
    if rows:
        out += ["", "| scorer | baseline | candidate |", "|---|---|---|"]
        out += [f"| `{name}` | {b} | {c} |" for name, b, c in rows]
    for name, side in (("baseline", base), ("candidate", cand)):
        if side is None:
            out += ["", "**baseline**: the baseline run has no such case"]
            continue
        out += ["", f"**{_cell(_side_head(name, side))}**"]
        for said in side.outputs:
            out += ["", f"- {_said_head(said)}", "", *_fenced(_lines(said))]
    out += ["", f"Diff, {expl.diff_of}:", ""]
    if expl.diff:
        more = [f"... {expl.diff_cut} more lines"] if expl.diff_cut else []
        out += _fenced([*expl.diff, *more], "diff")
    elif base is not None and base.outputs:
        out.append("(the two outputs are the same)")
    if cand.misses:
        out += ["", "| repeats | why they failed |", "|---|---|"]
        out += [f"| {repeats} | {_cell(why)} |" for repeats, why in _grouped(cand.misses)]
    else:
        out += ["", "Every scorer passed every repeat of the candidate."]
    return "\n".join(out) + "\n"


def render(expl: Explanation, fmt: str) -> str:
    """The explanation in one format: terminal, markdown or json."""
    if fmt == "json":
        return expl.model_dump_json(indent=2) + "\n"
    return render_markdown(expl) if fmt == "markdown" else render_text(expl)
