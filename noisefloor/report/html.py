"""The HTML report for the reader of a pull request: one self-contained page (inline CSS and SVG,
no script, nothing fetched) as wide as the window, with the outcome and a table of the cases on
top, then each case that changed worst first: its failing outputs, a plot where the rates differ,
the candidate's repeats before the baseline's, the statistics folded; unchanged cases folded last.

Everything a target printed, and every name from a suite, is escaped; nothing is injected raw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from noisefloor.model.report import CaseReport, Report, Side
from noisefloor.report._console import fit
from noisefloor.report._evidence import (
    calls_text,
    counts_line,
    evidence_line,
    repeats_tag,
    sequential_line,
    side_text,
    suite_change,
)
from noisefloor.report._usage import usage_text
from noisefloor.report._words import (
    FAILING,
    VERDICT_WORDS,
    case_words,
    control_words,
    doubt_text,
    failing_outputs,
    headline,
    scorer_title,
)
from noisefloor.report.html_repeats import repeats_html
from noisefloor.report.plots import BASELINE_COLOUR, CANDIDATE_COLOUR, RatePlot, case_svg
from noisefloor.stats.binary import wilson

if TYPE_CHECKING:
    from noisefloor.model.repeats import SideRepeats
    from noisefloor.model.run import RunSummary

__all__ = ["CASES_IN_DETAIL", "escape_html", "page", "render", "render_run"]

#: Cases a page shows in detail, worst first: a plot each, and the repeats of those that are
#: not unchanged. Later cases show their numbers only: a matplotlib plot takes ~0.1 s and
#: ~15 KB, and a 50-case page must stay quick to write and under 1 MB.
CASES_IN_DETAIL = 20

_EXIT = {
    0: "nothing regressed",
    1: "a case regressed",
    2: "a case is broken",
    3: "the harness or its configuration is wrong",
}

_CSS = f"""
* {{ box-sizing: border-box; }}
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 0; padding: 1rem 1.25rem;
  color: #1d1d1f; background: #fff; overflow-wrap: anywhere; }}
h1 {{ font-size: 1.35rem; margin: 0 0 .3rem; }}
h2 {{ font-size: 1.1rem; margin: 0 0 .2rem; }}
h3 {{ font-size: .95rem; margin: .8rem 0 .3rem; }}
code, pre {{ font: 12.5px/1.4 ui-monospace, monospace; }}
pre {{ white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f8; padding: .4rem .6rem;
  margin: .2rem 0 .5rem; border-radius: 4px; max-height: 24rem; overflow: auto; }}
header, section.case, #settings, details.unchanged {{ border-bottom: 1px solid #ddd;
  padding: .8rem 0; }}
section.case {{ border-left: 4px solid #ddd; padding-left: .8rem; }}
section.case-regressed, section.case-broken, section.case-invalid {{ border-left-color: #b3261e; }}
section.case-inconclusive, section.case-quarantine {{ border-left-color: #f2c14e; }}
.exit {{ font-weight: 600; }}
.exit-0 {{ color: #1b7f3b; }} .exit-1, .exit-2 {{ color: #b3261e; }} .exit-3 {{ color: #8a5a00; }}
.verdict {{ display: inline-block; padding: 0 .4rem; border-radius: 3px;
  font-size: .85rem; text-transform: uppercase; letter-spacing: .03em; background: #eee; }}
.v-regressed, .v-broken, .v-invalid {{ background: #b3261e; color: #fff; }}
.v-inconclusive, .v-quarantine, .v-redefined, .v-unmeasured {{ background: #f2c14e; }}
.v-improved, .v-fixed, .v-unchanged {{ background: #cfe8d5; }}
.reason {{ margin: .1rem 0 .4rem; }}
table {{ border-collapse: collapse; width: 100%; font-size: 13px; table-layout: fixed; }}
th, td {{ text-align: left; vertical-align: top; padding: .2rem .5rem .2rem 0;
  border-bottom: 1px solid #eee; overflow-wrap: anywhere; }}
table.summary td:first-child, table.summary th:first-child {{ width: 7.5rem; }}
table.summary td:nth-child(2), table.summary th:nth-child(2) {{ width: 30%; }}
svg.plot {{ width: 100%; max-width: 42rem; height: auto; display: block; }}
.swatch {{ display: inline-block; width: .8rem; height: .8rem; border-radius: 50%;
  vertical-align: -1px; }}
.swatch-baseline {{ background: {BASELINE_COLOUR}; }}
.swatch-candidate {{ background: {CANDIDATE_COLOUR}; }}
details > summary {{ cursor: pointer; }}
.status {{ font-weight: 600; }} .status-fail, .status-invalid {{ color: #b3261e; }}
.note, .muted {{ color: #666; font-size: 12.5px; }}
ul.warnings {{ color: #8a5a00; padding-left: 1.2rem; }}
ul.notes {{ color: #444; padding-left: 1.2rem; }}
"""


def escape_html(value: object) -> str:
    """Text as HTML shows it, quotes included, so that it is safe in an attribute too."""
    return escape(str(value), quote=True)


_e = escape_html


def _listed(notes: list[str], warnings: list[str], unmeasured: str | None) -> list[str]:
    """The header's notes (routine events), warnings, and the error of a run that measured too
    little."""
    out = []
    if notes:
        out += ['<ul class="notes">', *(f"<li>note: {_e(n)}</li>" for n in notes), "</ul>"]
    items = [f"<li>warning: {_e(w)}</li>" for w in warnings]
    if unmeasured:
        items.append(f"<li>error: {_e(unmeasured)}</li>")
    if items:
        out += ['<ul class="warnings">', *items, "</ul>"]
    return out


def page(title: str, body: list[str], css: str = "") -> str:
    """A whole page: the report's style (plus `css`), then `body`."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(title)}</title>",
            f"<style>{_CSS}{css}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def _point(s: Side) -> tuple[float, float, float] | None:
    """A side's pass rate with its Wilson interval (computed here when the rule gave none)."""
    if s.empty or not s.n or s.k is None:
        return None
    if s.wilson:
        low, high = s.wilson
    else:
        low, high = wilson(s.k, s.n)
    return s.k / s.n, low, high


def _telling(base: Side, cand: Side) -> bool:
    """Whether a scorer's plot says something: values to show, or pass rates that differ."""
    if base.values or cand.values:
        return True
    rates = {s.k / s.n for s in (base, cand) if s.n and s.k is not None}
    return len(rates) > 1


def _plot(case_id: str, scorers: Sequence[tuple[str, Side, Side]]) -> str:
    plots = [
        RatePlot(key, _point(base), _point(cand), base.values or (), cand.values or ())
        for key, base, cand in scorers
    ]
    svg = case_svg(plots, f"pass rates of {case_id}, baseline and candidate")
    return f'<figure class="plot">{svg}</figure>' if svg else ""


def _badge(verdict: str) -> str:
    word = VERDICT_WORDS.get(verdict, verdict)
    return f'<span class="verdict v-{_e(verdict)}">{_e(word)}</span>'


def _words(case: CaseReport) -> str:
    phrase = case_words(case)
    return f"{phrase.title}: {phrase.words}" if phrase.title else phrase.words


def _header(report: Report) -> list[str]:
    if report.adopted:
        runs = f"run <code>{_e(report.candidate)}</code>, adopted as the baseline"
    elif report.baseline is None:
        runs = f"run <code>{_e(report.candidate)}</code>, not adopted as the baseline"
    else:
        runs = (
            f'<span class="swatch swatch-baseline"></span> baseline <code>{_e(report.baseline)}'
            f'</code> &rarr; <span class="swatch swatch-candidate"></span> candidate '
            f"<code>{_e(report.candidate)}</code>"
        )
    code = report.exit_code
    counts, _, rest = headline(report, counts_line(report.counts)).partition(" · ")
    out = [
        '<header id="summary">',
        f"<h1>noisefloor: {_e(report.suite)}</h1>",
        f'<p class="suite-line"><strong>{_e(counts)}</strong> &middot; '
        f'<span class="exit exit-{code}" id="exit-code">exit {code}: {_e(_EXIT.get(code, ""))}'
        f"</span> &middot; {_e(rest.partition(' · ')[2])}</p>",
        f'<p class="runs">{runs}</p>',
    ]
    rows = [
        f'<tr><td>{_badge(c.verdict)}</td><td><a href="#case-{_e(c.case_id)}"><code>'
        f"{_e(c.case_id)}</code></a></td><td>{_e(_words(c))}</td></tr>"
        for c in report.cases
        if c.verdict != "unchanged"
    ]
    if rows:
        out.append(
            '<table class="summary"><thead><tr><th>verdict</th><th>case</th><th>what the check '
            f"found</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    doubt = doubt_text(report)
    notes = ([doubt] if doubt else []) + report.notes
    warnings = [w for w in report.warnings if w not in set(report.notes)]
    out += _listed(notes, warnings, report.unmeasured)
    out.append("</header>")
    return out


def _settings(report: Report) -> list[str]:
    """The design, the suite line, the settings the rule ran with and what it computed across
    cases, folded."""
    rows: list[tuple[str, Any]] = [("calls", calls_text(report))]
    sequential = sequential_line(report)
    if sequential is not None:
        rows.append(("design", sequential))
    suite = suite_change(report)
    if suite is not None:
        rows.append(("suite", suite))
    if report.settings is not None:
        rows += sorted(report.settings.dump().items())
    rule = report.rule_summary
    if rule is not None:
        rows += [(f"rule: {k}", v) for k, v in sorted(rule.dump().items())]
    cells = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_value(v))}</td></tr>" for k, v in rows)
    return [
        '<section id="settings"><details><summary>The design, the settings and the '
        f"corrections</summary><table>{cells}</table></details></section>",
    ]


def _value(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} {_value(x)}" for k, x in v.items()) or "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def _statistics(case: CaseReport) -> str:
    """Per scorer its verdict, both sides' counts with their intervals and the test, folded."""
    rows = []
    for s in case.scorers:
        evidence = evidence_line(s.evidence) or s.reason
        rows.append(
            f'<tr class="scorer"><td><code>{_e(s.key)}</code></td>'
            f'<td><span class="verdict v-{_e(s.verdict)}">{_e(s.verdict)}</span></td>'
            f"<td>{_e(side_text(s.baseline))}</td>"
            f"<td>{_e(side_text(s.candidate))}</td><td>{_e(evidence)}</td></tr>"
        )
    tags = [case.reason, repeats_tag(case)]
    if case.flaky:
        tags.append("[flaky: " + ", ".join(f"{k} {v:.2f}" for k, v in case.flaky.items()) + "]")
    if case.quarantine and case.verdict != "quarantine":  # (wilson says so already)
        tags.append(
            "[quarantine: " + "; ".join(f"{k} {v}" for k, v in case.quarantine.items()) + "]"
        )
    head = "<tr><th>scorer</th><th>verdict</th><th>baseline</th><th>candidate</th><th>evidence</th></tr>"
    table = (
        f'<table class="scorers"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
        if rows
        else ""
    )
    shown = " ".join(t for t in tags if t)
    return (
        f'<details class="statistics"><summary>The statistics</summary><p class="note">'
        f"{_e(shown)}</p>{table}</details>"
    )


def _failing(case: CaseReport) -> list[str]:
    out = []
    for failing in failing_outputs(case):
        out.append(
            f'<p class="failing">r{failing.repeat} failed: {_e(failing.why)}</p>'
            f"<pre>{_e(failing.gist)}</pre>"
        )
    return out


def _case(case: CaseReport, body: list[str]) -> list[str]:
    control = control_words(case)
    return [
        f'<section class="case case-{_e(case.verdict)}" id="case-{_e(case.case_id)}" '
        f'data-case="{_e(case.case_id)}" data-verdict="{_e(case.verdict)}">',
        f"<h2>{_badge(case.verdict)} <code>{_e(case.case_id)}</code></h2>",
        f'<p class="reason">{_e(_words(case))}</p>',
        f'<p class="note">Concurrent control: {_e(control)}.</p>' if control else "",
        *body,
        "</section>",
    ]


def render(report: Report, repeats: Mapping[str, list[SideRepeats]] | None = None) -> str:
    """The comparison report as one HTML page. The first `CASES_IN_DETAIL` cases get a plot
    where their rates differ and, given the repeats behind them
    (`noisefloor.operations.repeats.repeats_behind`), those not unchanged list their repeats,
    each output expandable."""
    body = [*_header(report), '<main id="cases">']
    unchanged: list[str] = []
    for shown, case in enumerate(report.cases):
        detailed = shown < CASES_IN_DETAIL
        # a plot's labels sit in a fixed margin: each title cut to fit it
        scorers = [(fit(scorer_title(s), 20), s.baseline, s.candidate) for s in case.scorers]
        telling = [x for x in scorers if _telling(x[1], x[2])]
        parts = _failing(case)
        if detailed and telling and case.verdict != "unchanged":
            parts.append(_plot(case.case_id, telling))
        if case.usage is not None and case.usage.samples:
            parts.append(
                f'<p class="usage">{case.usage.samples} samples taken, using '
                f"{_e(usage_text(case.usage))}</p>"
            )
        if repeats is not None and case.verdict != "unchanged":
            if detailed:
                listed = repeats_html(case, repeats.get(case.case_id, []))
                # a failing case's repeats are open: they are what a reviewer came for
                opened = " open" if case.verdict in FAILING else ""
                parts.append(
                    f'<details class="repeats"{opened}><summary>The repeats behind this verdict'
                    f"</summary>{listed}</details>"
                )
            else:
                parts.append(
                    f'<p class="note">Plots and repeats are shown for the first {CASES_IN_DETAIL} '
                    f"cases: `noisefloor show {_e(report.candidate)} --case {_e(case.case_id)}` "
                    "prints this one's.</p>"
                )
        parts.append(_statistics(case))
        section = _case(case, [p for p in parts if p])
        if case.verdict == "unchanged":
            unchanged += section
        else:
            body += section
    if unchanged:
        count = sum(1 for c in report.cases if c.verdict == "unchanged")
        body += [
            f'<details class="unchanged"><summary>{count} unchanged case'
            f"{'s' * (count != 1)}</summary>",
            *unchanged,
            "</details>",
        ]
    body += ["</main>", *_settings(report)]
    return page(f"noisefloor: {report.suite}", [line for line in body if line])


def render_run(summary: RunSummary) -> str:
    """A run without a comparison: per case, each scorer's pass rate and values."""
    run = summary.run
    body = [
        '<header id="summary">',
        f"<h1>noisefloor: {_e(run.suite)}</h1>",
        f'<p class="runs"><span class="swatch swatch-candidate"></span> run '
        f"<code>{_e(run.run_id)}</code>: {len(run.cases)} cases, "
        f"{summary.calls} target calls ({summary.pending} samples were missing)</p>",
    ]
    if summary.usage is not None:
        used = usage_text(summary.usage)
        body.append(f'<p class="usage" id="usage">usage: {_e(used)}</p>')
    body += _listed([], summary.warnings, summary.unmeasured)
    body += ["</header>", '<main id="cases">']
    for shown, case in enumerate(summary.cases):
        sides = [(s.key, Side(), s.side) for s in case.scorers]
        outcomes = ", ".join(f"{k} x{v}" for k, v in sorted(case.outcomes.items()))
        rows = "".join(
            f"<tr><td><code>{_e(key)}</code></td><td>{_e(side_text(side))}</td></tr>"
            for key, _, side in sides
        )
        body += [
            f'<section class="case" id="case-{_e(case.case_id)}" data-case="{_e(case.case_id)}">',
            f"<h2><code>{_e(case.case_id)}</code></h2>",
            f'<p class="reason">{_e(outcomes)}</p>',
            _plot(case.case_id, sides) if shown < CASES_IN_DETAIL else "",
            f'<table class="scorers"><tbody>{rows}</tbody></table>',
            "</section>",
        ]
    body.append("</main>")
    return page(f"noisefloor: {run.suite}", body)
