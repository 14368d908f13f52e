"""`noisefloor runs`: the stored runs, newest first, one row each: its suite, label, start time,
target version, calls, repeats and whether it is its suite's baseline.
"""

from __future__ import annotations

from typing import Any

from noisefloor.errors import StoreError
from noisefloor.model.records import RunRecord
from noisefloor.store.store import Store

__all__ = ["run_rows"]


def _row(run: RunRecord, baseline: str | None) -> dict[str, Any]:
    reps = sorted({c.repeats for c in run.cases})
    return {
        "run_id": run.run_id,
        "suite": run.suite,
        "label": run.label,
        "started_at": run.started_at,
        "target_key": run.target.key,
        "calls": run.calls,
        "repeats": reps[0] if len(reps) == 1 else reps,
        "cases": len(run.cases),
        "rescored_from": run.rescored_from,
        "baseline": run.run_id == baseline,
    }


def run_rows(store: Store, suite: str | None = None) -> list[dict[str, Any]]:
    """Every completed run (of one suite, or of all), newest first.

    Raises:
        StoreError: If there is no run to list.
    """
    found = store.runs(suite)
    if not found:
        where = f"of suite {suite!r} " if suite else ""
        raise StoreError(
            f"no runs {where}under {store.root}",
            hint="`noisefloor run SUITE` makes one"
            + ("; `noisefloor runs` lists every suite's" if suite else ""),
        )
    baselines = {p.suite: p.run_id for p in store.baselines()}
    rows = [_row(store.load_run(s, r), baselines.get(s)) for s, r in found]
    return sorted(rows, key=lambda row: (row["started_at"], row["run_id"]), reverse=True)
