"""A test's check as pytest shows it: whether it fails, the message holding the evidence (the
terminal report of its case and a failing repeat's assertion), and its JUnit properties.
"""

from __future__ import annotations

from dataclasses import dataclass

from noisefloor.model.report import Report
from noisefloor.model.verdict import Verdict
from noisefloor.report.terminal import Screen, render

__all__ = ["FAILING", "PROPERTY_PREFIX", "Shown", "shown"]

#: The verdicts that fail a test; inconclusive joins them under `--noisefloor-strict`.
FAILING = frozenset({Verdict.REGRESSED, Verdict.BROKEN})
#: The JUnit properties (and `user_properties`) a sampled test carries begin with it.
PROPERTY_PREFIX = "noisefloor_"
#: The screen the terminal report is drawn for in a test's message: wide enough never to wrap.
_UNWRAPPED = Screen(width=1 << 16)
#: The command line's and a suite's words for a setting, and where a pytest session sets it.
_SET_IN_PYTEST = {
    "`target.fingerprint:`": "`noisefloor_fingerprint`",
    "`fingerprint:`": "the ini's `noisefloor_fingerprint`",
    "--max-repeats": "the marker's max_repeats=",
}


@dataclass(frozen=True)
class Shown:
    """What pytest shows of one sampled test."""

    verdict: str
    failed: bool
    warned: bool
    """Passes with a warning: inconclusive without `--noisefloor-strict`."""
    message: str
    repeats: int
    """Candidate repeats its verdict rests on (those of the baseline when it adopted)."""
    calls: int
    """Repeats this session took (the rest were stored already)."""
    run_id: str

    def properties(self, suite: str) -> list[tuple[str, object]]:
        """Its `user_properties`, which JUnit XML writes as properties."""
        return [
            (f"{PROPERTY_PREFIX}verdict", self.verdict),
            (f"{PROPERTY_PREFIX}repeats", self.repeats),
            (f"{PROPERTY_PREFIX}calls", self.calls),
            (f"{PROPERTY_PREFIX}run", self.run_id),
            (f"{PROPERTY_PREFIX}suite", suite),
        ]


def _repeats(report: Report) -> int:
    case = report.cases[0]
    if case.sequential is not None:
        return case.sequential.verdict_repeats
    sides = [s.candidate.n for s in case.scorers if s.candidate.n is not None]
    return max(sides, default=0)


def shown(report: Report, strict: bool, failing_repeat: str | None) -> Shown:
    """How pytest shows the check `report` of one test (a suite of one case).

    Args:
        report: The check's finished report.
        strict: `--noisefloor-strict`: an inconclusive test fails.
        failing_repeat: A failed repeat of this session, as `rN: what pytest reported`.
    """
    case = report.cases[0]
    verdict = case.verdict
    if report.adopted:
        verdict_word = "adopted"
        failed = False
    else:
        verdict_word = str(verdict)
        failed = (
            verdict in FAILING
            or (strict and verdict is Verdict.INCONCLUSIVE)
            or report.unmeasured is not None
            or report.baseline is None  # a first run with no valid result: not adopted
        )
    warned = not failed and verdict is Verdict.INCONCLUSIVE
    # the report with its statistics, unwrapped: pytest shows the message as it is
    message = f"{verdict_word}: {case.reason}\n{render(report, _UNWRAPPED, verbosity=1).rstrip()}"
    for said, meant in _SET_IN_PYTEST.items():
        message = message.replace(said, meant)
    if failing_repeat is not None and (failed or warned):
        message += f"\na failing repeat, {failing_repeat}"
    return Shown(
        verdict=verdict_word,
        failed=failed,
        warned=warned,
        message=message,
        repeats=_repeats(report),
        calls=report.calls,
        run_id=report.candidate,
    )
