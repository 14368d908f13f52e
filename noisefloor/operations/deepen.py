"""Deepening a baseline: more samples of the baseline's own target version, so that checks
compare against many repeats per case while paying only for the candidate's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from noisefloor.errors import BaselineMissing, NoisefloorError, UsageError
from noisefloor.executors.base import Executor
from noisefloor.model.records import CaseRecord, RunRecord
from noisefloor.operations.run import RunOptions, past_lost, run_session
from noisefloor.pipeline.cases import case_key as key_of
from noisefloor.pipeline.indexing import index_run
from noisefloor.store.pool import held_repeats
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import build_target

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
    warnings: list[str] = field(default_factory=list)
    """What redaction says of the samples taken (`Redactor.warnings`)."""


def deepen_baseline(
    store: Store, suite: Suite, repeats: int, *, jobs: int, executor: Executor
) -> Deepened:
    """Top every case of the suite's baseline up to `repeats` repeats, and point the baseline at
    a run that rests on them. The target as it is now must be the baseline's version.

    `executor` is as `RunOptions.executor`: what makes the target calls."""
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
    cases, skipped, before, wanted = [], [], {}, {}
    for case in base.cases:
        if inputs.get(case.case_id) != case.case_key:
            skipped.append(case.case_id)
            cases.append(case)
            continue
        held = held_repeats(store, case)
        before[case.case_id] = held
        deeper = max(repeats, held, case.repeats)
        wanted[case.case_id] = deeper
        reach = _reach(store, case, deeper)
        cases.append(case.model_copy(update={"repeats": reach, "first_repeat": held, "start": 0}))
    opts = RunOptions(jobs=jobs, set_baseline=True, executor=executor)
    with run_session(store, suite, opts, built, epoch=base.epoch) as session:
        taken = [c for c in cases if c.case_id not in skipped]
        session.take(taken)
        _refuse_lost(store, taken, wanted, session.taken)
        session.pooled = [base.run_id]
        run = session.finish(cases)
    index_run(store, run)
    return Deepened(run=run, before=before, skipped=skipped, warnings=session.redactor.warnings())


def _refuse_lost(store: Store, cases: list[CaseRecord], wanted: dict[str, int], taken: int) -> None:
    """Refuse to move the baseline when the infrastructure lost repeats this deepen took: a
    baseline that looks deeper than it is would be green by accident.

    Raises:
        NoisefloorError: Some case still lacks valid repeats it asked for (exit 3).
    """
    short = [c.case_id for c in cases if _reach(store, c, wanted[c.case_id]) != c.repeats]
    if short:
        raise NoisefloorError(
            f"repeats of {len(short)} case(s) failed on the infrastructure ({', '.join(short[:5])}"
            f"{', ...' if len(short) > 5 else ''}; {taken} target call(s) made): the baseline "
            "was not moved, and every sample taken is kept",
            hint="run `noisefloor baseline deepen` again once the target answers (it takes only "
            "the repeats it lacks)",
        )


def _reach(store: Store, case: CaseRecord, repeats: int) -> int:
    """Where a case's repeats end when `repeats` of them must be valid or still missing: past
    those the infrastructure lost (kept on disk, never counted)."""
    return past_lost(store, case.model_copy(update={"repeats": repeats, "first_repeat": 0})).repeats
