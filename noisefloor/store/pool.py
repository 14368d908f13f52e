"""The deep baseline: every sample of the baseline's target version and case input counts, across
the runs that took them, up to a depth and, for endpoints that drift, a maximum age.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from noisefloor.errors import UsageError
from noisefloor.model.records import CaseRecord, RunRecord
from noisefloor.store.layout import has_sample
from noisefloor.store.store import Store

__all__ = ["against_pool", "held_repeats", "pooled_baseline"]


def held_repeats(store: Store, case: CaseRecord) -> int:
    """How many repeats the case's sample directory holds without a gap from r0.

    A stat per repeat and one past the last: listing the directory first cost more syscalls
    than the stat it spares."""
    prefix = os.path.join(store.abs_str(case.sample_dir), "r")
    held = 0
    while has_sample(f"{prefix}{held}.json"):
        held += 1
    return held


def _started(path: str) -> datetime | None:
    try:
        stamp = orjson.loads(Path(path).read_bytes()).get("started_at", "")
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except (OSError, ValueError, AttributeError, orjson.JSONDecodeError):
        return None


def _fresh_from(store: Store, case: CaseRecord, start: int, end: int, cutoff: datetime) -> int:
    """The first repeat of [start, end) from which every sample is younger than `cutoff`."""
    prefix = os.path.join(store.abs_str(case.sample_dir), "r")
    first = end
    for repeat in range(end - 1, start - 1, -1):
        when = _started(f"{prefix}{repeat}.json")
        if when is None or when < cutoff:
            break
        first = repeat
    return first


def pooled_baseline(
    store: Store, base: RunRecord, depth: int, max_age_s: float | None = None
) -> RunRecord:
    """The baseline run with each case resting on its deep pool: the newest `depth` repeats its
    sample directory holds (never fewer than the run itself took), none older than `max_age_s`.

    Raises a usage error naming the cases whose every sample is too old.
    """
    cutoff = datetime.now(UTC) - timedelta(seconds=max_age_s) if max_age_s is not None else None
    cases = []
    stale = []
    for case in base.cases:
        end = max(held_repeats(store, case), case.repeats)
        start = max(0, end - max(depth, case.repeats - case.start))
        if cutoff is not None:
            start = _fresh_from(store, case, start, end, cutoff)
            if start == end:
                stale.append(case.case_id)
        if (end, start) != (case.repeats, case.start):
            case = case.model_copy(update={"repeats": end, "start": start})
        cases.append(case)
    if stale:
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        raise UsageError(
            f"every baseline sample of {len(stale)} case(s) is older than --baseline-max-age "
            f"({shown})",
            hint="refresh the baseline on its own code (`noisefloor baseline deepen SUITE`), "
            "move it (`noisefloor baseline set RUN`), or allow older samples",
        )
    return base.model_copy(update={"cases": cases})


def against_pool(pool: RunRecord, cand: RunRecord) -> RunRecord:
    """The candidate as a comparison with the pool sees it: a case of the baseline's own target
    version and input rests on the pool's repeats too, never on a subset of them."""
    held = {c.case_id: c for c in pool.cases}
    cases = []
    for case in cand.cases:
        same = held.get(case.case_id)
        if (
            same is not None
            and same.sample_dir == case.sample_dir
            and (same.repeats, same.start) != (case.repeats, case.start)
        ):
            case = case.model_copy(update={"repeats": same.repeats, "start": same.start})
        cases.append(case)
    return cand.model_copy(update={"cases": cases})
