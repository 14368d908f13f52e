"""A case across stored runs: each run's pass rate with its Wilson interval, and its flakiness, the
pass rate pooled over the newest runs of the current target version, each distinct sample once.

Computed from the ledger's rows (`Ledger.history`); rendering lives in `report/history.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from noisefloor.errors import UsageError
from noisefloor.settings import HISTORY_RUNS
from noisefloor.stats.binary import wilson

__all__ = ["CaseHistory", "Flakiness", "RunRate", "case_history", "suite_history"]

Row = dict[str, Any]


class _PassRate:
    """A pass rate out of the valid repeats, and its 95% Wilson interval."""

    passes: int
    valid: int

    @property
    def rate(self) -> float | None:
        return self.passes / self.valid if self.valid else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% Wilson interval of the pass rate; None without a valid repeat."""
        return wilson(self.passes, self.valid) if self.valid else None


@dataclass(frozen=True)
class RunRate(_PassRate):
    """One run's repeats of one case."""

    run_id: str
    suite: str
    label: str | None
    started_at: str
    target_key: str
    case_key: str | None
    """Hash of the case's input as the run sent it; None when its sample files are gone."""
    model: str | None
    passes: int
    valid: int
    """Passes plus fails: invalid repeats (the target or a scorer broke) are left out."""
    invalid: int
    repeats: tuple[Row, ...]
    """The ledger's rows of the run's repeats, in repeat order."""


@dataclass(frozen=True)
class Flakiness(_PassRate):
    """The pass rate of the newest runs of the current target version and case input, pooled.

    Runs of one version share their cached samples (a repeat's file is its cache key), so each
    distinct sample counts once, with the status the newest run that holds it gave it.
    """

    target_key: str
    runs: int
    passes: int
    valid: int
    invalid: int
    shared: int
    """Distinct samples that more than one of the pooled runs held (each counted once)."""

    @property
    def flaky(self) -> bool:
        """Some repeats passed and some failed."""
        return 0 < self.passes < self.valid


@dataclass(frozen=True)
class CaseHistory:
    """One case of one suite across its runs."""

    suite: str
    case_id: str
    runs: list[RunRate]
    """Newest first, at most `last` of them."""
    total_runs: int
    """Every run in the ledger that holds the case."""
    flakiness: Flakiness


def _runs(rows: Iterable[Row]) -> list[RunRate]:
    """The rows of one case grouped by run, oldest run first."""
    grouped: dict[str, list[Row]] = {}
    for row in sorted(rows, key=lambda r: (r["started_at"], r["run_id"], r["repeat_idx"])):
        grouped.setdefault(row["run_id"], []).append(row)
    runs = []
    for run_id, reps in grouped.items():
        statuses = [r["status"] for r in reps]
        first = reps[0]
        runs.append(
            RunRate(
                run_id=run_id,
                suite=first["suite"],
                label=first["label"],
                started_at=first["started_at"],
                target_key=first["target_key"],
                case_key=next((r["case_key"] for r in reps if r["case_key"]), None),
                model=next((r["model"] for r in reps if r["model"]), None),
                passes=statuses.count("pass"),
                valid=statuses.count("pass") + statuses.count("fail"),
                invalid=statuses.count("invalid"),
                repeats=tuple(reps),
            )
        )
    return runs


def _flakiness(runs: Sequence[RunRate], last: int) -> Flakiness:
    """Pool the newest `last` runs (oldest first in `runs`) that share the newest's version and
    case input."""
    current = runs[-1]
    same = [
        r for r in runs if (r.target_key, r.case_key) == (current.target_key, current.case_key)
    ][-last:]
    status: dict[str, str] = {}
    holders: Counter[str] = Counter()
    for run in same:
        for rep in run.repeats:
            status[rep["sample_path"]] = rep["status"]
            holders[rep["sample_path"]] += 1
    statuses = list(status.values())
    passes = statuses.count("pass")
    return Flakiness(
        target_key=current.target_key,
        runs=len(same),
        passes=passes,
        valid=passes + statuses.count("fail"),
        invalid=statuses.count("invalid"),
        shared=sum(1 for n in holders.values() if n > 1),
    )


def _history(suite: str, case_id: str, rows: Iterable[Row], last: int) -> CaseHistory:
    runs = _runs(rows)
    return CaseHistory(
        suite=suite,
        case_id=case_id,
        runs=runs[::-1][:last],
        total_runs=len(runs),
        flakiness=_flakiness(runs, last),
    )


def case_history(rows: Iterable[Row], case_id: str, last: int = HISTORY_RUNS) -> CaseHistory:
    """One case across its runs, from the ledger's rows of that case (`Ledger.history`).

    Args:
        rows: The case's rows, of one suite or of several.
        case_id: The case, for messages.
        last: Runs listed, and runs of the current target version pooled.

    Raises:
        UsageError: The rows hold runs of several suites (the case id is in each).
    """
    rows = list(rows)
    suites = sorted({r["suite"] for r in rows})
    if len(suites) > 1:
        raise UsageError(
            f"case {case_id!r} is in {len(suites)} suites: {', '.join(suites)}",
            hint=f"`--suite {suites[0]}` picks one",
        )
    return _history(suites[0], case_id, rows, last)


def suite_history(rows: Iterable[Row], last: int = HISTORY_RUNS) -> list[CaseHistory]:
    """Every case of one suite's rows across its runs, worst pooled pass rate first (a case
    with no valid repeat before all), then by case id."""
    cases: dict[str, list[Row]] = {}
    for row in rows:
        cases.setdefault(row["case_id"], []).append(row)
    found = [_history(r[0]["suite"], case_id, r, last) for case_id, r in cases.items()]

    def worst(h: CaseHistory) -> tuple[float, str]:
        rate = h.flakiness.rate
        return (-1.0 if rate is None else rate, h.case_id)

    return sorted(found, key=worst)
