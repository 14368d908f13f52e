"""The summary of a run without comparison, as `run`, `record` and `rescore` print it: the run,
what it cost, and per case every scorer's numbers. Its JSON dump is the `run --format json` output.
"""

from __future__ import annotations

from noisefloor.model.parts import Part, Side, Usage
from noisefloor.model.records import CaseRecord

__all__ = ["RunHead", "RunSummary", "ScorerSide", "SummaryCase", "Work"]


class RunHead(Part):
    """The run a summary is of: its id, suite, label and cases as recorded."""

    run_id: str
    suite: str
    label: str | None
    cases: list[CaseRecord]
    rescored_from: str | None


class Work(Part):
    """The pipeline's steps this run executed and those it found up to date, by kind."""

    executed: dict[str, int]
    up_to_date: dict[str, int]


class ScorerSide(Part):
    """One scorer's numbers on the run."""

    key: str
    side: Side


class SummaryCase(Part):
    """One case of the run: how its repeats ended, and every scorer's numbers."""

    case_id: str
    outcomes: dict[str, int]
    scorers: list[ScorerSide]


class RunSummary(Part):
    """A run without comparison; absent keys (`usage`) stay absent when dumped."""

    run: RunHead
    calls: int
    """Target calls the run made."""
    usage: Usage | None = None
    """What the samples taken used; absent for a target whose answers report none."""
    pending: int
    """Samples that were missing, and taken."""
    warnings: list[str]
    unmeasured: str | None
    """Why the run measured too little to stand on; the command exits 3 with it."""
    work: Work
    cases: list[SummaryCase]
