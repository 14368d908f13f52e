"""A test's failing repeat read back from the store, as pytest printed it: the one a failure or a
warning quotes, whether this session took it or an earlier one of the same version did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from noisefloor.errors import NoisefloorError
from noisefloor.model.report import Report
from noisefloor.model.verdict import Verdict
from noisefloor.pipeline.banding import read_sample
from noisefloor.store.store import Store
from noisefloor.targets.base import Outcome

__all__ = ["FailingRepeat", "failing_repeat"]

#: Where a stored failure says it happened: its last words, `(test_x.py:12)`.
_WHERE = re.compile(r" \([^()\n]*:\d+\)$")


@dataclass(frozen=True)
class FailingRepeat:
    """One repeat that failed, as its sample keeps it."""

    repeat: int
    """Its index among the version's repeats (`noisefloor show RUN` prints it in full)."""
    crash: str
    """Pytest's crash line: `AssertionError: assert 78 <= 65 (test_x.py:12)`."""
    text: str
    """What pytest printed for it: the traceback with the assertion, verbatim."""


def failing_repeat(store: Store, report: Report) -> FailingRepeat | None:
    """The newest repeat that failed among those the verdict of `report` (a test's check, one
    case) rests on: one that raised, when the test broke; else one whose assertion failed.
    None when none did, or its files cannot be read (the message then goes without it)."""
    try:
        run = store.load_run(report.suite, report.candidate)
    except (NoisefloorError, OSError):
        return None
    errors_wanted = report.cases[0].verdict is Verdict.BROKEN
    for case in run.cases:
        for path in reversed(store.sample_paths(case)):
            try:
                sample = read_sample(path)
                said = orjson.loads(sample.output.text)
            except (NoisefloorError, OSError, orjson.JSONDecodeError):
                continue
            if not isinstance(said, dict) or said.get("passed", True):
                continue
            if errors_wanted and sample.outcome is Outcome.OK:
                continue
            failure = str(said.get("failure", ""))
            return FailingRepeat(
                repeat=sample.repeat,
                crash=_crash_line(failure),
                text=str(said.get("report") or failure),
            )
    return None


def _crash_line(failure: str) -> str:
    """A stored failure (`call: AssertionError: assert 3 == 4` and pytest's explanation lines,
    then where) as one line: the phase dropped, the first line kept, and where."""
    body = failure.split(": ", 1)[-1].strip() or "failed"
    first = body.splitlines()[0]
    where = _WHERE.search(body)
    return first if where is None or first.endswith(where.group(0)) else first + where.group(0)
