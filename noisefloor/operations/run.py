"""Running a suite: sampling every case (reusing cached samples), label pools, the run record,
and scoring the run into bands. `record` is a run under a label.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from noisefloor import __version__
from noisefloor.errors import UsageError
from noisefloor.executors.base import ArmPending, Executor, Pending
from noisefloor.executors.local import LOCAL
from noisefloor.executors.redaction import Redactor
from noisefloor.executors.sampling import pending_samples, take_interleaved
from noisefloor.executors.schedule import new_schedule_seed
from noisefloor.executors.usage_tally import UsageTally
from noisefloor.model.records import CaseBand, CaseRecord, RunRecord
from noisefloor.operations.sample_facts import SampleFacts
from noisefloor.pipeline.cases import case_records
from noisefloor.pipeline.engine import EngineStats, band_tasks, read_rebuilt, run_current
from noisefloor.pipeline.indexing import index_run
from noisefloor.pipeline.sample_hooks import sample_hooks
from noisefloor.rules.exit_policy import measured_bands, unmeasured_cause
from noisefloor.settings import RuleSettings
from noisefloor.store.fingerprint import GIT_LABEL
from noisefloor.store.layout import LOST_MARK, has_sample, lost_to_infra, utc_now
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import build_target
from noisefloor.targets.base import RawSample
from noisefloor.targets.kinds import kind_named
from noisefloor.targets.source import BuiltTarget

if TYPE_CHECKING:
    from noisefloor.model.parts import Usage
    from noisefloor.model.report import Report

__all__ = [
    "RunOptions",
    "RunResult",
    "RunSession",
    "attach_usage",
    "bands_of",
    "new_run_id",
    "past_lost",
    "run_session",
    "run_suite",
]


@dataclass
class RunOptions:
    """How to sample a suite."""

    repeats: int | None = None
    jobs: int = 1
    fresh: bool = False
    label: str | None = None
    replace: bool = False
    set_baseline: bool = False
    executor: Executor = LOCAL
    """What makes the target calls (`executors.executor_of`): here, or a Dask cluster's workers."""
    on_sample: Callable[[Pending, RawSample], None] | None = None
    on_call: Callable[[Pending], None] | None = None
    on_start: Callable[[int], None] | None = None


@dataclass
class RunResult:
    """A completed run, its bands, and what it cost."""

    run: RunRecord
    bands: dict[str, CaseBand]
    stats: EngineStats
    pending: int
    warnings: list[str] = field(default_factory=list)
    usage: UsageTally = field(default_factory=UsageTally)
    """The usage of the samples this run took."""
    spent: Usage | None = None
    """That usage as reports show it; None for a target whose answers report none."""

    def spending(self) -> dict[str, Any]:
        """The target calls the run made and, when its target reports usage, what they used,
        as a run's summary gives them."""
        shown = {"usage": self.spent.dump()} if self.spent is not None else {}
        return {"calls": self.run.calls, **shown}

    unmeasured: str | None = None
    """Why the run measured too little to stand on (`exit_policy.unmeasured_cause`): a record
    exits 3 with it."""


def new_run_id(suite: str) -> str:
    stamp = utc_now().replace("-", "").replace(":", "")
    return f"{stamp}-{suite}"


def bands_of(
    store: Store, suite: str, cases: list[CaseRecord]
) -> tuple[dict[str, CaseBand], EngineStats]:
    side_tasks = band_tasks(store, suite, cases, {})
    bands = list(side_tasks.bands.values())
    directory = store.derived_dir("bands", suite)

    def build() -> EngineStats:
        return run_current(store, side_tasks.tasks, directory, bands)

    stats = build()
    read, rebuilt = read_rebuilt(
        store,
        lambda: {cid: store.read_model(p, CaseBand) for cid, p in side_tasks.bands.items()},
        build,
    )
    return read, stats.merged(rebuilt)


class RunSession:
    """A run being taken, under its suite's lock: the target, epoch and redaction are fixed, and
    cases are sampled in as many steps as the caller needs (a sequential check takes two)."""

    def __init__(
        self,
        store: Store,
        suite: Suite,
        opts: RunOptions,
        built: BuiltTarget,
        epoch: int | None = None,
    ) -> None:
        self.store, self.suite, self.opts, self.built = store, suite, opts, built
        self.started = utc_now()
        self.run_id = new_run_id(suite.name)
        self.calls = 0
        self.taken = 0
        self.prior = _label_pool(store, suite.name, opts, built.record.key)
        key = built.record.key
        if epoch is not None:
            self.epoch = epoch
        elif self.prior is not None:
            self.epoch = self.prior.epoch
        elif opts.fresh or opts.replace:
            self.epoch = store.bump_epoch(suite.name, key)
        else:
            self.epoch = store.epoch(suite.name, key)
        self.redactor = Redactor(suite.redact, built.secrets)
        self.pooled = store.label_runs(suite.name, opts.label) if self.prior and opts.label else []
        self._inputs = {c.id: c.input for c in suite.cases}
        self._facts = SampleFacts(store)
        self.usage = UsageTally()
        self.last_taken: Counter[str] = Counter()
        """Samples the last `take` took, by case id."""
        self.schedule_seed = new_schedule_seed()
        """The order of every take's calls (`schedule.call_order`), kept in the run record."""

    def cases(self, repeats: int | None = None) -> list[CaseRecord]:
        """Every case's record at `repeats` (default: the options', else the suite's), after
        the repeats its label already holds."""
        cases = case_records(
            self.store,
            self.suite,
            self.built,
            self.epoch,
            repeats or self.opts.repeats,
            self.redactor,
        )
        if self.prior is not None:
            held = {c.case_id: c for c in self.prior.cases}
            cases = [_after_held(c, held.get(c.case_id)) for c in cases]
        return [past_lost(self.store, c) for c in cases]

    def pending(self, cases: list[CaseRecord]) -> list[Pending]:
        """The samples of `cases` not on disk yet."""
        return pending_samples(self.store, cases, self._inputs)

    def missing(self, cases: list[CaseRecord]) -> int:
        """How many samples `take(cases)` would take."""
        return len(self.pending(cases))

    def take(self, cases: list[CaseRecord]) -> int:
        """Take the missing samples of `cases`; return the calls made. With a remote, samples
        another runner claimed first are waited for and fetched, not taken again (those whose
        claimant stopped are taken here)."""
        pending = self.pending(cases)
        if not pending:
            return self._take([ArmPending(self.built.target, [], self.redactor)], [])
        calls, taken = 0, Counter[str]()
        while pending:
            theirs = self.store.claimed([p.file for p in pending])
            mine = [p for p in pending if p.file not in theirs]
            if mine:
                arm = ArmPending(self.built.target, mine, self.redactor, self.built.source)
                calls += self._take([arm], mine)
                taken += self.last_taken
            left = set(self.store.await_claimed(sorted(theirs))) if theirs else set()
            pending = [p for p in pending if p.file in left]
        self.last_taken = taken
        return calls

    def take_beside(
        self, cases: list[CaseRecord], other: BuiltTarget, others: list[CaseRecord]
    ) -> int:
        """Take the missing samples of `cases` interleaved with those of `others`, cases of
        another version of the target (`other`: the baseline's, for a concurrent control), in
        one take; return the calls made, the other version's included (they are this run's
        cost)."""
        mine = self.pending(cases)
        theirs = pending_samples(self.store, others, self._inputs)
        # the k-th call of a case on one side meets the k-th on the other: their blocks open
        # where each side's new repeats start
        size = {o.case_id: o.repeats - o.start for o in others}
        arms = [
            ArmPending(
                other.target,
                theirs,
                Redactor(self.suite.redact, other.secrets),
                other.source,
                first_block={o.case_id: o.start for o in others},
            ),
            ArmPending(
                self.built.target,
                mine,
                self.redactor,
                self.built.source,
                first_block={c.case_id: c.repeats - size.get(c.case_id, 0) for c in cases},
            ),
        ]
        return self._take(arms, mine)

    def _take(self, arms: list[ArmPending], own: list[Pending]) -> int:
        """Take every arm's pending samples in the run's order, telling the run's hooks; `own`
        are this version's (what `last_taken` counts). Returns the calls made."""
        total = sum(len(arm.pending) for arm in arms)
        self.last_taken = Counter(item.case.case_id for item in own)
        if self.opts.on_start is not None:
            self.opts.on_start(total)
        with sample_hooks(
            self.store,
            total,
            self._facts.note,
            self.usage,
            on_call=self.opts.on_call,
            on_sample=self.opts.on_sample,
        ) as hooks:
            calls = take_interleaved(
                self.store,
                arms,
                jobs=self.opts.jobs,
                hooks=hooks,
                executor=self.opts.executor,
                seed=self.schedule_seed,
            )
        self.calls += sum(calls)
        self.taken += total
        return sum(calls)

    def record(self, cases: list[CaseRecord]) -> RunRecord:
        """The run record of `cases` as it stands (not saved)."""
        suite, built = self.suite, self.built
        served = self._facts.check_run(kind_named(built.record.kind), cases)
        return RunRecord(
            run_id=self.run_id,
            suite=suite.name,
            suite_file=suite.path.name,
            label=self.opts.label,
            started_at=self.started,
            finished_at=utc_now(),
            harness_version=__version__,
            target=built.record,
            epoch=self.epoch,
            jobs=self.opts.jobs,
            calls=self.calls,
            pooled_runs=self.pooled,
            served_models=served,
            schedule_seed=self.schedule_seed,
            cases=cases,
        )

    def finish(self, cases: list[CaseRecord]) -> RunRecord:
        """Save the run record of `cases` (and its label, and the baseline if asked)."""
        store, suite = self.store, self.suite
        run = self.record(cases)
        store.save_run(run)
        if self.opts.label:
            store.set_label(suite.name, self.opts.label, [*self.pooled, run.run_id])
        if self.opts.set_baseline:
            store.set_baseline(suite.name, run.run_id)
        return run


@contextmanager
def run_session(
    store: Store,
    suite: Suite,
    opts: RunOptions,
    built: BuiltTarget | None = None,
    epoch: int | None = None,
) -> Iterator[RunSession]:
    """A run of `suite` under its lock, with the options checked; `epoch` adds to the sample
    sets of an earlier epoch (a baseline being deepened) instead of the current one."""
    if opts.repeats is not None and opts.repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {opts.repeats}")
    if opts.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {opts.jobs}")
    if opts.replace and not opts.label:
        raise UsageError("--replace starts a label over: it needs --label NAME")
    built = built or build_target(suite, store.root)
    store.ensure()
    with store.lock(suite.name):
        if built.tracked is not None:
            store.save_manifest(built.record.fingerprint[GIT_LABEL], built.tracked)
        yield RunSession(store, suite, opts, built, epoch)


def run_suite(
    store: Store,
    suite: Suite,
    opts: RunOptions,
    built: BuiltTarget | None = None,
    score: bool = True,
) -> RunResult:
    """Sample every case (reusing cached samples), save the run, and score it.

    `score=False` leaves scoring to a comparison that follows, so the engine runs once.
    """
    with run_session(store, suite, opts, built) as session:
        cases = _retaking_lost(session)
        run = session.finish(cases)
    taken, usage = session.taken, session.usage
    spent = usage.usage(session.built.price) if _reports_usage(session.built) else None
    warnings = session.redactor.warnings()
    if not score:
        return RunResult(
            run=run,
            bands={},
            stats=EngineStats(),
            pending=taken,
            warnings=warnings,
            usage=usage,
            spent=spent,
        )
    bands, stats = bands_of(store, suite.name, cases)
    index_run(store, run)
    short = unmeasured_cause(measured_bands(list(bands.values())), RuleSettings.min_valid)
    return RunResult(
        run=run,
        bands=bands,
        stats=stats,
        pending=taken,
        warnings=warnings,
        usage=usage,
        spent=spent,
        unmeasured=short,
    )


def _reports_usage(built: BuiltTarget) -> bool:
    return "usage" in kind_named(built.record.kind).provides


def attach_usage(report: Report, built: BuiltTarget, usage: UsageTally) -> None:
    """Give `report` what its calls used and cost, in all and per case, when the target's answers
    report usage (a command's report none: its reports show nothing, never a zero)."""
    if _reports_usage(built):
        usage.attach(report, built.price)


def _label_pool(store: Store, suite: str, opts: RunOptions, key: str) -> RunRecord | None:
    """The newest run of the label this run adds its repeats to; None when it starts the label.

    A label pools repeats of one target version, in one epoch: a different version is refused,
    and so is `--fresh`, which would silently drop the repeats the label holds.
    """
    if not opts.label or opts.replace:
        return None
    prior = store.find_label(opts.label, suite)
    if prior is None:
        return None
    if prior.target.key != key:
        raise UsageError(
            f"label {opts.label!r} holds runs of target version {prior.target.key} "
            f"(newest {prior.run_id}); this target's version is {key}",
            hint=f"a label pools repeats of one target version: record under another label, "
            f"or pass --replace to start {opts.label!r} over",
        )
    if opts.fresh:
        raise UsageError(
            f"--fresh would start label {opts.label!r} over, dropping the repeats it holds",
            hint="drop --fresh (a run under an existing label takes new repeats anyway), "
            "or pass --replace to start the label over",
        )
    return prior


def _retaking_lost(session: RunSession) -> list[CaseRecord]:
    """Take every case's missing repeats, then, into new files, those the infrastructure lost
    of a case whose last take also gained valid ones (a flaky connection), as long as it does;
    a case that lost all it took (an endpoint that is down) waits for the next run. Returns the
    cases as taken."""
    cases = {c.case_id: c for c in session.cases()}
    session.take(list(cases.values()))
    while session.last_taken:
        taken = session.last_taken
        widened = [c for c in session.cases() if taken[c.case_id]]
        lost = {c.case_id: len(session.pending([c])) for c in widened}
        again = [c for c in widened if 0 < lost[c.case_id] < taken[c.case_id]]
        if not again:
            break
        session.take(again)
        cases.update((c.case_id, c) for c in again)
    return list(cases.values())


def past_lost(store: Store, case: CaseRecord) -> CaseRecord:
    """A case whose repeats reach past those of its own that the infrastructure lost (kept on
    disk, never counted): as many valid or missing ones as it asks for. A run after an outage
    so takes only the repeats it lacks, into new files: a sample file never changes."""
    directory = store.abs_str(case.sample_dir)
    if not os.path.exists(os.path.join(directory, LOST_MARK)):
        return case
    end, wanted = case.first_repeat, case.repeats - case.first_repeat
    while wanted:
        file = os.path.join(directory, f"r{end}.json")
        if not (has_sample(file) and lost_to_infra(file)):
            wanted -= 1
        end += 1
    return case if end == case.repeats else case.model_copy(update={"repeats": end})


def _after_held(case: CaseRecord, held: CaseRecord | None) -> CaseRecord:
    """A case that takes its repeats after those its label already holds in the same sample set.

    A case whose input changed has a new sample set, and starts from repeat 0 there.
    """
    if held is None or held.sample_dir != case.sample_dir:
        return case
    return case.model_copy(
        update={"first_repeat": held.repeats, "repeats": held.repeats + case.repeats}
    )
