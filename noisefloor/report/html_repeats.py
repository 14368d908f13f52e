"""The repeats behind a verdict as the HTML page lists them: the candidate's first, each failing
one with why (in the scorers' titles) and what the target printed, the baseline's folded.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import TYPE_CHECKING

from noisefloor.report._words import candidate_split, scorer_title

if TYPE_CHECKING:
    from noisefloor.model.repeats import Repeat, SideRepeats
    from noisefloor.model.report import CaseReport

__all__ = ["repeats_html"]


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _repeat_html(r: Repeat, titles: Mapping[str, str], opened: bool = False) -> str:
    why = "; ".join(f"{titles.get(label, label)}: {d}" for label, d in r.failures) or r.reason
    streams = []
    for s in r.streams:
        notes = f' <span class="note">({_e("; ".join(s.notes))})</span>' if s.notes else ""
        streams.append(f"<div>{_e(s.name)}{notes}</div><pre>{_e(s.text)}</pre>")
    summary = (
        f'r{r.repeat} <span class="status status-{_e(r.status)}">{_e(r.status)}</span>'
        + (f' <span class="muted">{_e(r.outcome)}</span>' if r.outcome != "ok" else "")
        + (f" &mdash; {_e(why)}" if r.status != "pass" else "")
    )
    shown = "".join(streams) or '<p class="note">(no output)</p>'
    return (
        f'<details class="repeat status-{_e(r.status)}" data-repeat="{r.repeat}"'
        f"{' open' if opened else ''}><summary>{summary}</summary>{shown}</details>"
    )


def _taken(case: CaseReport, side: SideRepeats) -> str:
    """How a side's repeats count: the candidate's split between the deep baseline and its
    concurrent control, as the other reports count them."""
    split = candidate_split(case) if side.side == "candidate" else None
    if split is None:
        return f"{side.total} repeats"
    return (
        f"{side.total} repeats: {split[0]} judged against the baseline, {split[1]} taken beside "
        "the concurrent control"
    )


def repeats_html(case: CaseReport, sides: list[SideRepeats]) -> str:
    """The candidate's repeats, then the baseline's, folded; the candidate's first failing one
    open."""
    titles = {s.key: scorer_title(s) for s in case.scorers}
    parts = []
    for side in sorted(sides, key=lambda s: s.side != "candidate"):
        shown, run_id = side.shown, side.run_id
        more = (
            f" ({len(shown)} shown, failing ones first; `noisefloor show {_e(run_id)} --case "
            f"{_e(case.case_id)}` prints every one)"
            if len(shown) < side.total
            else ""
        )
        first_fail = next((r for r in shown if r.status == "fail"), None)
        opened = first_fail if side.side == "candidate" else None
        listed = "".join(_repeat_html(r, titles, r is opened) for r in shown)
        head = (
            f'<span class="swatch swatch-{side.side}"></span> {side.side} <code>{_e(run_id)}'
            f'</code>: <span class="note">{_e(_taken(case, side))}{more}</span>'
        )
        if side.side != "candidate":  # what the candidate said comes first; this, on request
            listed = f"<details><summary>{head}</summary>{listed}</details>"
            head = ""
        parts.append(
            f'<div class="side side-{side.side}">'
            + (f"<h3>{head}</h3>" if head else "")
            + listed
            + "</div>"
        )
    return "".join(parts)
