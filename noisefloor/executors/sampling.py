"""Taking samples: which repeats are missing, and an executor's calls of the target (or the
targets of an A/B's arms, interleaved; a run is the one-arm case) for exactly those.

Each sample is written atomically the moment it arrives, so a killed run loses nothing it finished.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from noisefloor.executors.base import ArmPending, Executor, Pending, SampleHooks
from noisefloor.executors.local import LOCAL
from noisefloor.executors.redaction import Redactor
from noisefloor.model.records import CaseRecord
from noisefloor.store.layout import has_sample
from noisefloor.store.store import Store
from noisefloor.targets.base import Target

if TYPE_CHECKING:
    from noisefloor.targets.source import TargetSource

__all__ = ["pending_samples", "take_interleaved", "take_samples"]


def pending_samples(
    store: Store, cases: Sequence[CaseRecord], inputs: Mapping[str, str] | None = None
) -> list[Pending]:
    """Every missing sample file, here and in the store's remote: the only target calls a run
    needs to make (their order is `schedule.call_order`'s).

    `inputs` maps case id to the input to send, when the records hold a redacted copy.
    """
    inputs = inputs or {}
    missing = [
        (case, repeat, file)
        for case in cases
        for repeat, file in enumerate(store.sample_files(case), case.start)
        if not has_sample(file)
    ]
    # a store with a remote fetches them first, by their keys: another runner may have taken them
    fetched = set(store.fetched([file for _, _, file in missing])) if missing else set()
    return [
        Pending(case, repeat, file, inputs.get(case.case_id, case.input))
        for case, repeat, file in missing
        if file not in fetched
    ]


def take_interleaved(
    store: Store,
    arms: Sequence[ArmPending],
    *,
    seed: int,
    jobs: int = 1,
    hooks: SampleHooks | None = None,
    executor: Executor = LOCAL,
) -> list[int]:
    """Have `executor` call each arm's target for its pending repeats, interleaved, at most
    `jobs` at once, telling `hooks` of each call and sample.

    Calls start repeat by repeat (repeat 0 of every case on every arm first, so an interrupted
    run has evidence on every case), and within a repeat in the random order `seed` draws
    (`schedule.call_order`): no case and no arm always goes first.

    Returns:
        The calls made per arm, in the order of `arms`.
    """
    if not any(arm.pending for arm in arms):
        return [0] * len(arms)
    return executor.take(store, arms, hooks or SampleHooks(), max(1, jobs), seed)


def take_samples(
    store: Store,
    target: Target,
    pending: Sequence[Pending],
    *,
    seed: int,
    jobs: int = 1,
    redactor: Redactor | None = None,
    hooks: SampleHooks | None = None,
    executor: Executor = LOCAL,
    source: TargetSource | None = None,
) -> int:
    """Call the target for every pending repeat, at most `jobs` at once, in the order `seed`
    draws; return the calls made: `take_interleaved` with one arm (`redactor` and `source` are
    as `ArmPending`'s)."""
    arm = ArmPending(target, pending, redactor or Redactor(), source)
    (calls,) = take_interleaved(store, [arm], seed=seed, jobs=jobs, hooks=hooks, executor=executor)
    return calls
