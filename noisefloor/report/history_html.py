"""`noisefloor history --html FILE`: one self-contained page of a suite's runs over time, per case
(worst pooled pass rate first) each run's pass rate plotted in time order and its flakiness line.

The report's page style: inline CSS and SVG, no script, nothing fetched, every name escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from noisefloor.report.history import flakiness_line, short_key
from noisefloor.report.html import CASES_IN_DETAIL, escape_html, page
from noisefloor.report.plots import BASELINE_COLOUR, CANDIDATE_COLOUR, HistoryPoint, history_svg
from noisefloor.rules.history import CaseHistory, RunRate

__all__ = ["render", "summary_line"]

_CSS = f"""
.state {{ display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: .85rem;
  text-transform: uppercase; letter-spacing: .03em; background: #cfe8d5; }}
.state-flaky {{ background: #f2c14e; }} .state-failing {{ background: #b3261e; color: #fff; }}
.state-unmeasured {{ background: #eee; }}
section.case-flaky {{ border-left-color: #f2c14e; }}
section.case-failing {{ border-left-color: #b3261e; }}
.swatch-earlier {{ background: {BASELINE_COLOUR}; }} .swatch-pooled {{ background: {CANDIDATE_COLOUR}; }}
"""


def _state(h: CaseHistory) -> str:
    f = h.flakiness
    if not f.valid:
        return "unmeasured"
    if f.flaky:
        return "flaky"
    return "passing" if f.passes else "failing"


def _runs_of(cases: Sequence[CaseHistory]) -> dict[str, RunRate]:
    """Every run shown, by id, oldest first."""
    runs = {r.run_id: r for h in cases for r in h.runs}
    return dict(sorted(runs.items(), key=lambda item: (item[1].started_at, item[0])))


def summary_line(suite: str, cases: Sequence[CaseHistory]) -> str:
    """How many cases, over how many runs, and how many are flaky on the current version."""
    states = [_state(h) for h in cases]
    line = (
        f"{len(cases)} cases of suite {suite!r} over {len(_runs_of(cases))} runs; "
        f"{states.count('flaky')} of {len(cases)} cases flaky on the current target version"
    )
    if states.count("failing"):
        line += f", {states.count('failing')} failing every repeat"
    return line


def _plot(h: CaseHistory) -> str:
    newest = h.runs[0]
    points = [
        HistoryPoint(
            rate=run.rate,
            low=run.interval[0] if run.interval else 0.0,
            high=run.interval[1] if run.interval else 0.0,
            version=short_key(run.target_key),
            # the runs listed are the newest; those of the newest's version are in the pool
            pooled=(run.target_key, run.case_key) == (newest.target_key, newest.case_key),
        )
        for run in reversed(h.runs)
    ]
    svg = history_svg(points, h.flakiness.interval, f"pass rate of {h.case_id} in each run")
    return f'<figure class="plot">{svg}</figure>'


def _table(h: CaseHistory) -> str:
    rows = []
    for run in h.runs:
        interval = f"[{run.interval[0]:.2f}, {run.interval[1]:.2f}]" if run.interval else "-"
        cells = (
            f"<code>{escape_html(run.run_id)}</code>",
            escape_html(run.started_at[:19].replace("T", " ")),
            f"<code>{escape_html(short_key(run.target_key))}</code>",
            escape_html(run.label or "-"),
            escape_html(run.model or "-"),
            f"{run.passes}/{run.valid}" + (f" ({run.invalid} invalid)" if run.invalid else ""),
            interval,
        )
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(
        f"<th>{t}</th>"
        for t in ("run", "started (UTC)", "target", "label", "model", "passed", "95% CI")
    )
    return (
        f'<details class="runs"><summary>The {len(h.runs)} runs, newest first</summary>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></details>"
    )


def _case(h: CaseHistory, detailed: bool) -> list[str]:
    state = _state(h)
    case = escape_html(h.case_id)
    return [
        f'<section class="case case-{state}" id="case-{case}" data-case="{case}" '
        f'data-flakiness="{state}">',
        f'<h2><span class="state state-{state}">{state}</span> <code>{case}</code></h2>',
        f'<p class="flakiness">{escape_html(flakiness_line(h.flakiness))}</p>',
        _plot(h) if detailed else "",
        _table(h),
        "</section>",
    ]


def render(suite: str, cases: Sequence[CaseHistory]) -> str:
    """The page of a suite's cases (worst first, as `suite_history` orders them); the first
    `CASES_IN_DETAIL` get a plot each, the rest their flakiness line and runs."""
    runs = list(_runs_of(cases).values())
    versions = list(dict.fromkeys(short_key(r.target_key) for r in runs))
    body = [
        '<header id="summary">',
        f"<h1>noisefloor history: {escape_html(suite)}</h1>",
        f'<p class="suite-line"><strong>{escape_html(summary_line(suite, cases))}</strong></p>',
        f'<p class="runs">runs from {escape_html(runs[0].started_at[:19].replace("T", " "))} '
        f"to {escape_html(runs[-1].started_at[:19].replace('T', ' '))} UTC, target versions "
        + ", ".join(f"<code>{escape_html(v)}</code>" for v in versions)
        + "</p>",
        '<p class="note"><span class="swatch swatch-pooled"></span> runs of the current target '
        "version, whose pooled pass rate (its interval shaded) is the case's flakiness; "
        '<span class="swatch swatch-earlier"></span> earlier runs. A dashed line marks a new '
        "target version.</p>",
        "</header>",
        '<main id="cases">',
    ]
    for shown, h in enumerate(cases):
        body += [part for part in _case(h, shown < CASES_IN_DETAIL) if part]
    if len(cases) > CASES_IN_DETAIL:
        body.append(
            f'<p class="note">Plots are shown for the first {CASES_IN_DETAIL} cases: '
            "`noisefloor history CASE` prints any case's runs.</p>"
        )
    body.append("</main>")
    return page(f"noisefloor history: {suite}", body, _CSS)
