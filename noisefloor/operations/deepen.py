"""Deepening a baseline: more samples of the baseline's own target version, so that checks
compare against many repeats per case while paying only for the candidate's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from noisefloor.errors import BaselineMissing, UsageError
from noisefloor.indexing import index_run
from noisefloor.operations.run import RunOptions, run_session
from noisefloor.operations.run import case_key as key_of
from noisefloor.pool import held_repeats
from noisefloor.records import RunRecord
from noisefloor.store import Store
from noisefloor.suite import Suite
from noisefloor.targets.factory import build_target

__all__ = ["Deepened", "deepen_baseline"]


@dataclass
class Deepened:
    """What `baseline deepen` did."""

    run: RunRecord
    """The new baseline run: the old one's cases at the deeper repeats."""
    before: dict[str, int]
    """Repeats each case's sample directory held before."""
    skipped: list[str] = field(default_factory=list)
    """Cases of the baseline whose input the suite no longer has, or that the suite dropped."""


def deepen_baseline(
    store: Store, suite: Suite, repeats: int, jobs: int = 1, executor: str | None = None
) -> Deepened:
    """Top every case of the suite's baseline up to `repeats` repeats, and point the baseline at
    a run that rests on them. The target as it is now must be the baseline's version.

    `executor` is as `RunOptions.executor`: a Dask scheduler whose workers take the samples."""
    pointer = store.baseline(suite.name)
    if pointer is None:
        raise BaselineMissing(
            f"no baseline for suite {suite.name!r} under {store.root} to deepen",
            hint="adopt one first: `noisefloor check SUITE` (or `noisefloor run SUITE "
            "--set-baseline`)",
        )
    base = store.load_run(suite.name, pointer.run_id)
    built = build_target(suite, store.root)
    if built.record.key != base.target.key:
        raise UsageError(
            f"the target's version is {built.record.key}, the baseline's {base.target.key}: "
            "deepening samples the baseline's own version",
            where=str(suite.path),
            hint="run it on the code the baseline was taken from (check out that commit), or "
            "move the baseline to this version first (`noisefloor check --repeats N` then "
            "`noisefloor baseline set RUN`)",
        )
    inputs = {c.id: key_of(c) for c in suite.cases}
    cases, skipped, before = [], [], {}
    for case in base.cases:
        if inputs.get(case.case_id) != case.case_key:
            skipped.append(case.case_id)
            cases.append(case)
            continue
        held = held_repeats(store, case)
        before[case.case_id] = held
        deeper = max(repeats, held, case.repeats)
        cases.append(case.model_copy(update={"repeats": deeper, "first_repeat": held, "start": 0}))
    opts = RunOptions(jobs=jobs, set_baseline=True, executor=executor)
    with run_session(store, suite, opts, built, epoch=base.epoch) as session:
        session.take([c for c in cases if c.case_id not in skipped])
        session.pooled = [base.run_id]
        run = session.finish(cases)
    index_run(store, run)
    return Deepened(run=run, before=before, skipped=skipped)
