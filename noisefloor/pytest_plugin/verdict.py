"""A test's check as pytest shows it: whether it fails or warns, its message (`message.py`), and
its JUnit properties.
"""

from __future__ import annotations

from dataclasses import dataclass

from noisefloor.model.report import Report
from noisefloor.model.verdict import Verdict
from noisefloor.pytest_plugin.message import Context, failure_text, warning_line
from noisefloor.pytest_plugin.thresholds import BarVerdict

__all__ = ["FAILING", "PROPERTY_PREFIX", "Shown", "shown"]

#: The verdicts that fail a test; inconclusive joins them under `--noisefloor-strict`.
FAILING = frozenset({Verdict.REGRESSED, Verdict.BROKEN})
#: The JUnit properties (and `user_properties`) a sampled test carries begin with it.
PROPERTY_PREFIX = "noisefloor_"


@dataclass(frozen=True)
class Shown:
    """What pytest shows of one sampled test."""

    verdict: str
    failed: bool
    warned: bool
    """Passes with a warning: inconclusive (or a bar in doubt) without `--noisefloor-strict`."""
    message: str
    """The failure's text, or the warning's one line."""
    repeats: int
    """Candidate repeats its verdict rests on (those of the baseline when it adopted)."""
    calls: int
    """Repeats this session took (the rest were stored already)."""
    run_id: str
    share: float
    """Its share of the session's false-alarm rate."""

    def properties(self, suite: str, family: int) -> list[tuple[str, object]]:
        """Its `user_properties`, which JUnit XML writes as properties."""
        return [
            (f"{PROPERTY_PREFIX}verdict", self.verdict),
            (f"{PROPERTY_PREFIX}repeats", self.repeats),
            (f"{PROPERTY_PREFIX}calls", self.calls),
            (f"{PROPERTY_PREFIX}run", self.run_id),
            (f"{PROPERTY_PREFIX}suite", suite),
            (f"{PROPERTY_PREFIX}family", family),
            (f"{PROPERTY_PREFIX}alpha", float(f"{self.share:.6g}")),
        ]


def _repeats(report: Report) -> int:
    case = report.cases[0]
    if case.sequential is not None:
        return case.sequential.verdict_repeats
    sides = [s.candidate.n for s in case.scorers if s.candidate.n is not None]
    return max(sides, default=0)


def shown(node_id: str, report: Report, strict: bool, ctx: Context) -> Shown:
    """How pytest shows the check `report` of the test `node_id` (a suite of one case)."""
    case = report.cases[0]
    verdict = case.verdict
    bar = ctx.bar.verdict if ctx.bar is not None else BarVerdict.MET
    if ctx.refused is not None:
        word, failed = "failing", True
    elif report.adopted:
        word, failed = "adopted", bar is BarVerdict.BELOW
    else:
        word = str(verdict)
        failed = (
            verdict in FAILING
            or bar is BarVerdict.BELOW
            or (strict and (verdict is Verdict.INCONCLUSIVE or bar is BarVerdict.DOUBT))
            or report.unmeasured is not None
            or report.baseline is None  # a first run with no valid result: not adopted
        )
    warned = not failed and (verdict is Verdict.INCONCLUSIVE or bar is BarVerdict.DOUBT)
    if failed:
        message = failure_text(report, ctx)
    elif warned:
        message = warning_line(node_id, report, ctx)
    else:
        message = ""
    return Shown(
        verdict=word,
        failed=failed,
        warned=warned,
        message=message,
        repeats=_repeats(report),
        calls=report.calls,
        run_id=report.candidate,
        share=ctx.share,
    )
