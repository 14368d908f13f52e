"""What a sampled test's failure or warning says, in pytest's words: the outcome and both rates on
the first line, the failing repeat as pytest printed it, then the looks and the version.

Built from the report's fields, never from the command line's rendering of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from noisefloor.model.report import CaseReport, Report, ScorerReport
from noisefloor.model.verdict import Verdict
from noisefloor.pytest_plugin.failing import FailingRepeat
from noisefloor.pytest_plugin.thresholds import Bar, BarVerdict

__all__ = ["Context", "failure_text", "headline", "warning_line"]

#: A score's name ending in one of these reads with the unit: `latency_s: mean 1.2 s -> 1.9 s`.
_UNITS = {"_s": "s", "_ms": "ms", "_bytes": "bytes", "_pct": "%"}
#: Files of a version change a message names before it counts the rest.
_FILES_SHOWN = 3


@dataclass(frozen=True)
class Context:
    """What a message says besides the report: the test's own words and the session's."""

    names: dict[str, str]
    """A scorer's key to what the test calls it: `pass rate`, or a recorded score's name."""
    share: float
    """This test's share of the session's false-alarm rate."""
    alpha: float
    """The session's false-alarm rate."""
    max_repeats: int
    """The repeats a check of this test takes at most (`max_repeats=`)."""
    failing: FailingRepeat | None = None
    bar: Bar | None = None
    refused: str | None = None
    """Why a first session adopted nothing (a test that never passes)."""


def _percent(rate: float) -> str:
    return f"{rate * 100:.0f}%"


def _p(p: float | None) -> str:
    return f"p={p:.2g}" if p is not None else "p unknown"


def _number(value: float, name: str) -> str:
    unit = next((u for suffix, u in _UNITS.items() if name.endswith(suffix)), "")
    return f"{value:.3g}{'' if not unit else '%' if unit == '%' else f' {unit}'}"


def _values_spoke(scorer: ScorerReport) -> bool:
    """Whether the scorer's verdict is its numbers' (the rule gives the numbers' reason first,
    and words it `mean ... -> ...`) rather than its pass rate's."""
    return scorer.evidence.values is not None and scorer.reason.startswith("mean ")


def _scorer(scorer: ScorerReport, names: dict[str, str]) -> str:
    """One scorer's change: `pass rate 85% -> 40% (85/100 before, 4/10 now; p=0.003)`, or
    `latency_s: mean 1.2 s -> 1.9 s (20 before, 10 now; p=0.001)`."""
    name = names.get(scorer.key, scorer.key)
    b, c = scorer.baseline, scorer.candidate
    values = scorer.evidence.values
    if values is not None and _values_spoke(scorer) and b.mean is not None and c.mean is not None:
        change = f"{_number(b.mean, name)} -> {_number(c.mean, name)}"
        if values.deterministic:
            return f"{name}: {change} in every repeat"
        return f"{name}: mean {change} ({b.n} before, {c.n} now; {_p(values.p_worse)})"
    if b.k is None or b.n is None or c.k is None or c.n is None or not b.n or not c.n:
        return f"{name}: {scorer.reason}"
    what = "pass rate" if name == "pass rate" else f"{name} recorded in"
    return (
        f"{what} {_percent(b.k / b.n)} -> {_percent(c.k / c.n)} "
        f"({b.k}/{b.n} before, {c.k}/{c.n} now; {_p(scorer.evidence.p_regress)})"
    )


def _broken(case: CaseReport, adopted_nothing: bool) -> str:
    if case.valid is not None and case.errors_test is not None:
        (ok_b, n_b), (ok_c, n_c) = case.valid.baseline, case.valid.candidate
        return (
            f"{n_c - ok_c} of {n_c} repeats ended in an error ({n_b - ok_b} of {n_b} before; "
            f"{_p(case.errors_test.p)})"
        )
    # none answered: a comparison's counts, or a first session's (no baseline to count in)
    errors = case.valid.candidate[1] if case.valid is not None else None
    if errors is None:
        errors = next((s.candidate.target_errors for s in case.scorers), None) or 0
    said = f"every repeat ended in an error ({errors} of {errors})"
    return f"{said}, so nothing was adopted as its baseline" if adopted_nothing else said


def _deciding(case: CaseReport) -> ScorerReport | None:
    return next((s for s in case.scorers if s.verdict is case.verdict), None)


def _decide_it(case: CaseReport, ctx: Context) -> str:
    stopped = case.sequential.stopped if case.sequential is not None else ""
    if stopped == "budget":
        return "more repeats would decide it: --noisefloor-max-calls ran out"
    return f"more repeats would decide it: raise max_repeats= ({ctx.max_repeats} now)"


def headline(report: Report, ctx: Context) -> str:
    """The first line: what happened, and the numbers that say so."""
    case = report.cases[0]
    if ctx.refused is not None:
        return ctx.refused
    if report.unmeasured is not None:
        return f"unmeasured: {report.unmeasured}"
    scorer = _deciding(case)
    if case.verdict is Verdict.BROKEN:
        return f"broken: {_broken(case, report.baseline is None)}"
    if case.verdict is Verdict.REGRESSED and scorer is not None:
        return f"regressed: {_scorer(scorer, ctx.names)}"
    if case.verdict is Verdict.INCONCLUSIVE and scorer is not None:
        return f"inconclusive: {_scorer(scorer, ctx.names)}: {_decide_it(case, ctx)}"
    if ctx.bar is not None and ctx.bar.verdict is not BarVerdict.MET:
        line = ctx.bar.line()
        if ctx.bar.verdict is BarVerdict.DOUBT:
            line += f": more repeats would decide it: raise max_repeats= ({ctx.max_repeats} now)"
        return line
    return f"{case.verdict}: {case.reason}"


def _looks(case: CaseReport, ctx: Context) -> str | None:
    seq = case.sequential
    rate = (
        f"this test may spend {ctx.share * 100:.3g}% of the session's "
        f"{ctx.alpha * 100:.3g}% false-alarm rate"
    )
    if seq is None:
        return None
    if seq.stopped == "same":
        return (
            f"looks: none; the baseline's own version, judged on its {seq.verdict_repeats} repeats"
        )
    sizes = [str(n) for n in seq.looks] or [str(seq.verdict_repeats)]
    at = sizes[0] if len(sizes) == 1 else f"{', '.join(sizes[:-1])} and {sizes[-1]}"
    why = {"decided": "decided", "cap": "the cap", "clear": "no drop left plausible"}
    stop = why.get(seq.stopped, seq.stopped)
    scorer = _deciding(case)
    threshold = None
    if scorer is not None:
        values = scorer.evidence.values
        spoke = values is not None and _values_spoke(scorer)
        threshold = values.threshold if spoke and values else scorer.evidence.threshold
    need = f", where p <= {threshold:.2g} fails it" if threshold is not None else ""
    return f"looks: at {at} repeats, stopped at {sizes[-1]} ({stop}{need}); {rate}"


def _version(report: Report) -> str | None:
    change = report.target_change
    if report.adopted or report.baseline is None:
        return None
    if change is None:
        return "version: the baseline's own (no file changed)"
    moved = [
        f"{kind} {path}"
        for kind, paths in (
            ("modified", change.modified),
            ("added", change.added),
            ("removed", change.removed),
        )
        for path in paths
    ]
    more = len(moved) - _FILES_SHOWN
    listed = ", ".join(moved[:_FILES_SHOWN]) + (f", and {more} more" if more > 0 else "")
    reasons = "; ".join(change.reasons)
    count = f"{len(moved)} file{'s' if len(moved) != 1 else ''} changed since the baseline"
    return (
        f"version: {count}"
        + (f" ({listed})" if moved else "")
        + (f"; {reasons}" if reasons else "")
    )


def _stored(report: Report) -> str | None:
    """Where a verdict rests, in part or whole, on repeats an earlier session of this version
    stored: how to take new ones instead."""
    case = report.cases[0]
    rests = case.sequential.verdict_repeats if case.sequential is not None else None
    if report.adopted or rests is None or report.calls >= rests:
        return None
    reused = rests - report.calls
    return (
        f"stored: {reused} of these {rests} repeats were taken by an earlier session of this "
        "version; `pytest --noisefloor --noisefloor-fresh` takes new ones"
    )


def failure_text(report: Report, ctx: Context) -> str:
    """A failing test's message: the headline, the failing repeat as pytest printed it, then
    the looks, the version and where the repeats came from, one line each."""
    lines = [headline(report, ctx)]
    bar = ctx.bar
    if bar is not None and bar.verdict is BarVerdict.BELOW and not lines[0].startswith("below"):
        lines.append(f"also {bar.line()}")
    if ctx.failing is not None:
        lines += ["", f"repeat {ctx.failing.repeat} failed:", ctx.failing.text.rstrip(), ""]
    case = report.cases[0]
    lines += [line for line in (_looks(case, ctx), _version(report), _stored(report)) if line]
    return "\n".join(lines)


def warning_line(node_id: str, report: Report, ctx: Context) -> str:
    """An `InconclusiveWarning`'s one line: the test, both rates, what would decide it, and the
    crash line of a failing repeat."""
    line = f"{node_id}: {headline(report, ctx)}"
    if ctx.failing is not None:
        line += f"; repeat {ctx.failing.repeat} failed: {ctx.failing.crash}"
    return line
