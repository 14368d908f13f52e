"""Rescoring: the suite's current scorers applied to a stored run's samples, saved as a new
run. Never calls the target.
"""

from __future__ import annotations

from noisefloor.errors import StoreError, UsageError
from noisefloor.operations.resolve import newest_sampled, resolve_run
from noisefloor.operations.run import RunResult, bands_of, new_run_id
from noisefloor.pipeline.cases import scorer_uses
from noisefloor.pipeline.comparison import require_samples
from noisefloor.pipeline.indexing import index_run
from noisefloor.store.layout import utc_now
from noisefloor.store.store import ReadOnlyStore, Store
from noisefloor.suite.model import Suite

__all__ = ["rescore_run"]


def rescore_run(store: Store, suite: Suite, run_id: str | None) -> RunResult:
    """Apply the suite's current scorers to a stored run's samples; never calls the target."""
    view = ReadOnlyStore(store.root)
    run = resolve_run(view, run_id, suite.name) if run_id else newest_sampled(view, suite.name)
    if run is None:
        raise StoreError(f"no runs of suite {suite.name!r} under {store.root}")
    if run.suite != suite.name:
        raise UsageError(f"run {run.run_id} belongs to suite {run.suite!r}, not {suite.name!r}")
    current = {c.id: c for c in suite.cases}
    cases = [
        c.model_copy(update={"scorers": scorer_uses(current[c.case_id])})
        if c.case_id in current
        else c
        for c in run.cases
    ]
    new = run.model_copy(
        update={
            "run_id": new_run_id(suite.name),
            "rescored_from": run.run_id,
            "calls": 0,
            "cases": cases,
            "started_at": utc_now(),
            "finished_at": utc_now(),
        }
    )
    require_samples(view, cases)
    bands, stats = bands_of(view, suite.name, cases)
    view.save_run(new)
    index_run(view, new)
    skipped = sorted(set(current) - {c.case_id for c in run.cases})
    warnings = (
        [f"{len(skipped)} case(s) of the suite are not in run {run.run_id} and were skipped"]
        if skipped
        else []
    )
    return RunResult(run=new, bands=bands, stats=stats, pending=0, warnings=warnings)
