"""A/B against a git ref: the suite's target as REF has it (in a temporary worktree) and as the
working tree has it, sampled interleaved in a random order so that drift and the target's state
hit both arms alike, then judged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from noisefloor import __version__
from noisefloor.errors import UsageError
from noisefloor.executors.base import ArmPending, Executor, OnWritten, Pending
from noisefloor.executors.local import LOCAL
from noisefloor.executors.redaction import Redactor
from noisefloor.executors.sampling import pending_samples, take_interleaved
from noisefloor.executors.schedule import new_schedule_seed
from noisefloor.executors.usage_tally import UsageTally
from noisefloor.model.records import CaseRecord, RunRecord
from noisefloor.model.report import Report, TargetChange
from noisefloor.operations.check import shown_path
from noisefloor.operations.cost_budget import check_priced, cost_budget
from noisefloor.operations.run import RunOptions, attach_usage, new_run_id
from noisefloor.operations.sample_facts import SampleFacts
from noisefloor.operations.sequential_check import sequential_check
from noisefloor.operations.worktree import built_at, checked_out
from noisefloor.pipeline.cases import case_records
from noisefloor.pipeline.comparison import compare_runs
from noisefloor.pipeline.indexing import index_run
from noisefloor.pipeline.sample_hooks import sample_hooks
from noisefloor.rules.exit_policy import finished_report
from noisefloor.settings import REPEATS, RuleSettings
from noisefloor.settings.design import Design
from noisefloor.store.fingerprint import GIT_LABEL
from noisefloor.store.layout import utc_now
from noisefloor.store.pool import pooled_baseline
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import build_target
from noisefloor.targets.base import RawSample
from noisefloor.targets.kinds import kind_named
from noisefloor.targets.source import BuiltTarget
from noisefloor.targets.version_change import version_change

__all__ = ["Arm", "ab_suite", "new_arm", "sample_arms"]


@dataclass
class Arm:
    """One side of an A/B: a version of the suite's target and the sample set of each case."""

    built: BuiltTarget
    epoch: int
    cases: list[CaseRecord]
    """Each case with the repeats this arm holds so far (`sample_arms` raises them)."""
    redactor: Redactor
    inputs: dict[str, str]
    """What the target receives per case id (the records may hold a redacted copy)."""
    calls: int = 0
    """Target calls made for this arm so far."""
    run_id: str = ""
    """The id its run record will have."""
    facts: SampleFacts | None = None
    """What its kind's check of a run needs of each sample it wrote (`sample_arms` notes it)."""
    usage: UsageTally | None = None
    """The usage of the samples it took (`sample_arms` notes it; arms may share one)."""


def new_arm(
    store: Store,
    suite: Suite,
    built: BuiltTarget,
    *,
    fresh: bool = False,
    facts: SampleFacts | None = None,
    usage: UsageTally | None = None,
    redactor: Redactor | None = None,
) -> Arm:
    """An arm for one version of the suite's target, in its current epoch (a new one if `fresh`).

    Its cases start at the suite's repeats; `sample_arms` sets how many each arm takes. Arms
    sampled together may share their `facts` (each sample's is kept once), `usage` and
    `redactor` (whose warnings then count the samples of both).
    """
    key = built.record.key
    epoch = store.bump_epoch(suite.name, key) if fresh else store.epoch(suite.name, key)
    redactor = redactor or Redactor(suite.redact, built.secrets)
    return Arm(
        run_id=new_run_id(suite.name),
        built=built,
        epoch=epoch,
        cases=case_records(store, suite, built, epoch, redactor=redactor),
        redactor=redactor,
        inputs={c.id: c.input for c in suite.cases},
        facts=facts or SampleFacts(store),
        usage=usage,
    )


def sample_arms(
    store: Store,
    arms: Sequence[Arm],
    upto: Mapping[str, int],
    jobs: int,
    *,
    seed: int,
    on_sample: Callable[[Pending, RawSample], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_call: Callable[[Pending], None] | None = None,
    executor: Executor = LOCAL,
) -> int:
    """Bring each arm's cases to `upto[case_id]` repeats, taking only the samples they miss.

    The calls interleave (repeat by repeat, each repeat's cases and arms in the random order
    `seed` draws: `schedule.call_order`), at most `jobs` at once; each sample is written and
    indexed as it arrives. Can be called again with more
    repeats for some cases: the samples already taken are kept. Hold the suite's store lock.

    Returns:
        The target calls made, all arms together (each arm's own are added to its `calls`).
    """
    wanted: list[ArmPending] = []
    for arm in arms:
        arm.cases = [
            c.model_copy(update={"repeats": upto[c.case_id]}) if c.case_id in upto else c
            for c in arm.cases
        ]
        pending = pending_samples(store, arm.cases, arm.inputs)
        wanted.append(ArmPending(arm.built.target, pending, arm.redactor, arm.built.source))
    total = sum(len(w.pending) for w in wanted)
    if on_start is not None:
        on_start(total)
    with sample_hooks(store, total, *_notes(arms), on_call=on_call, on_sample=on_sample) as hooks:
        calls = take_interleaved(
            store, wanted, seed=seed, jobs=jobs, hooks=hooks, executor=executor
        )
    for arm, made in zip(arms, calls, strict=True):
        arm.calls += made
    return sum(calls)


def _notes(arms: Sequence[Arm]) -> list[OnWritten]:
    """Each distinct `facts` and `usage` of the arms, told of every sample written."""
    facts = {id(arm.facts): arm.facts for arm in arms if arm.facts is not None}
    usage = {id(arm.usage): arm.usage for arm in arms if arm.usage is not None}
    return [*(f.note for f in facts.values()), *usage.values()]


def _save_run(
    store: Store, suite: Suite, arm: Arm, started: str, jobs: int, label: str | None, seed: int
) -> RunRecord:
    """The run record of one arm, once its samples are taken (the kind's checks may refuse it)."""
    if arm.built.tracked is not None:
        store.save_manifest(arm.built.record.fingerprint[GIT_LABEL], arm.built.tracked)
    run = _run_record(store, suite, arm, arm.cases, started, jobs, label, seed)
    store.save_run(run)
    if label is not None:
        store.set_label(suite.name, label, [run.run_id])
    return run


def _run_record(
    store: Store,
    suite: Suite,
    arm: Arm,
    cases: list[CaseRecord],
    started: str,
    jobs: int,
    label: str | None,
    seed: int,
) -> RunRecord:
    facts = arm.facts or SampleFacts(store)
    served = facts.check_run(kind_named(arm.built.record.kind), cases)
    return RunRecord(
        run_id=arm.run_id,
        suite=suite.name,
        suite_file=suite.path.name,
        label=label,
        started_at=started,
        finished_at=utc_now(),
        harness_version=__version__,
        target=arm.built.record,
        epoch=arm.epoch,
        jobs=jobs,
        calls=arm.calls,
        served_models=served,
        schedule_seed=seed,
        cases=cases,
    )


def _sample(
    store: Store, arms: list[Arm], upto: Mapping[str, int], opts: RunOptions, seed: int
) -> int:
    """`sample_arms` with the run options' concurrency, hooks and executor."""
    return sample_arms(
        store,
        arms,
        upto,
        opts.jobs,
        seed=seed,
        on_sample=opts.on_sample,
        on_start=opts.on_start,
        on_call=opts.on_call,
        executor=opts.executor,
    )


class _ArmsSession:
    """An A/B's arms as a sequential check samples them: each step brings the baseline arm's
    cases to as many repeats as the candidate's, interleaved (`operations.sequential_check`)."""

    def __init__(
        self, store: Store, suite: Suite, arms: list[Arm], opts: RunOptions, label: str, seed: int
    ) -> None:
        self.store, self.suite, self.arms, self.opts, self.label = store, suite, arms, opts, label
        self.seed = seed
        self.started = utc_now()
        self.taken = 0
        self.base_run: RunRecord | None = None

    def cases(self) -> list[CaseRecord]:
        return list(self.arms[-1].cases)

    def _wanted(self, cases: list[CaseRecord]) -> list[list[CaseRecord]]:
        """Per arm, the cases to bring up to date: the candidate's windows, and the baseline
        arm's cases at as many repeats."""
        repeats = {c.case_id: c.repeats for c in cases}
        base = [
            c.model_copy(update={"repeats": max(c.repeats, repeats[c.case_id])})
            for c in self.arms[0].cases
            if c.case_id in repeats
        ]
        return [base, cases]

    def missing(self, cases: list[CaseRecord]) -> int:
        return sum(
            len(pending_samples(self.store, wanted, arm.inputs))
            for arm, wanted in zip(self.arms, self._wanted(cases), strict=True)
        )

    def take(self, cases: list[CaseRecord]) -> int:
        self.taken += self.missing(cases)
        upto = {c.case_id: c.repeats for c in cases}
        return _sample(self.store, self.arms, upto, self.opts, self.seed)

    def base_record(self) -> RunRecord:
        """The baseline arm as it stands: what the deep baseline pools."""
        base = self.arms[0]
        return _run_record(
            self.store, self.suite, base, base.cases, self.started, 1, self.label, self.seed
        )

    def record(self, cases: list[CaseRecord]) -> RunRecord:
        arm = self.arms[-1]
        jobs = self.opts.jobs
        return _run_record(self.store, self.suite, arm, cases, self.started, jobs, None, self.seed)

    def finish(self, cases: list[CaseRecord]) -> RunRecord:
        store, suite, jobs = self.store, self.suite, self.opts.jobs
        self.base_run = _save_run(
            store, suite, self.arms[0], self.started, jobs, self.label, self.seed
        )
        cand = self.arms[-1]
        if cand.built.tracked is not None:
            store.save_manifest(cand.built.record.fingerprint[GIT_LABEL], cand.built.tracked)
        run = self.record(cases).model_copy(update={"calls": cand.calls, "finished_at": utc_now()})
        store.save_run(run)
        return run


def _check_options(suite: Suite, opts: RunOptions) -> None:
    if opts.label or opts.replace or opts.set_baseline:
        raise UsageError(
            "ab labels its baseline arm itself and moves no baseline: "
            "--label, --replace and --set-baseline do not apply"
        )
    if opts.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {opts.jobs}")
    needed = min((opts.repeats or c.repeats) for c in suite.cases)
    if needed < 2:
        raise UsageError(
            f"a comparison needs at least 2 repeats per case and arm to measure noise; got {needed}",
            hint=f"raise --repeats ({REPEATS} is the default)",
        )


def ab_suite(
    store: Store,
    suite: Suite,
    ref: str,
    opts: RunOptions,
    settings: RuleSettings,
    *,
    allow_target_change: bool = False,
    continue_on_scorer_error: bool = False,
    design: Design,
) -> Report:
    """Sample the suite's target at git `ref` and in the working tree, interleaved, and compare.

    `ref` is checked out in a temporary worktree under the store root, removed before this
    returns (or raises). Both arms take the suite's repeats (or `opts.repeats`) per case and are
    saved as runs (the baseline arm's labelled `ab-<sha>`); the report compares them as `check`
    does: sequentially unless `opts.repeats` fixes the repeats, the baseline arm taking as
    many repeats as the candidate's at each step. When both arms are one target version their
    sample sets coincide: they are sampled once, and the report says that nothing differs.

    Raises:
        UsageError: The suite is not in a git work tree, or `ref` names no commit.
    """
    _check_options(suite, opts)
    cand_built = build_target(suite, store.root)
    check_priced(design.max_cost, cand_built.price)
    store.ensure()
    started = utc_now()
    seed = new_schedule_seed()
    with checked_out(suite.base_dir, ref, store.root) as tree:
        base_built = built_at(tree, suite, store)
        same = base_built.record.key == cand_built.record.key
        label = f"ab-{tree.sha[:12]}"
        screens = [opts.repeats or c.repeats for c in suite.cases]
        with store.lock(suite.name):
            facts, usage = SampleFacts(store), UsageTally()
            redactor = Redactor(suite.redact, [*base_built.secrets, *cand_built.secrets])
            arms = [
                new_arm(
                    store,
                    suite,
                    built,
                    fresh=opts.fresh,
                    facts=facts,
                    usage=usage,
                    redactor=redactor,
                )
                for built in ([base_built] if same else [base_built, cand_built])
            ]
            if not same and design.applies(settings, screens):
                session = _ArmsSession(store, suite, arms, opts, label, seed)

                def pool() -> RunRecord:
                    return pooled_baseline(
                        store,
                        session.base_record(),
                        design.baseline_repeats,
                        design.baseline_max_age_s,
                    )

                cost = cost_budget(
                    store,
                    design.max_cost,
                    cand_built.price,
                    usage,
                    [c for a in arms for c in a.cases],
                )
                parts, cand = sequential_check(
                    store,
                    session,
                    settings,
                    pool,
                    design,
                    allow_target_change=allow_target_change,
                    cost=cost,
                )
                assert session.base_run is not None
                runs = [session.base_run, cand]
                report = finished_report(parts, settings, continue_on_scorer_error)
            else:
                upto = {c.id: opts.repeats or c.repeats for c in suite.cases}
                _sample(store, arms, upto, opts, seed)
                runs = [_save_run(store, suite, arms[0], started, opts.jobs, label, seed)]
                if not same:
                    runs.append(_save_run(store, suite, arms[1], started, opts.jobs, None, seed))
                report = compare_runs(
                    store,
                    runs[0],
                    runs[-1],
                    settings,
                    allow_target_change=allow_target_change,
                    continue_on_scorer_error=continue_on_scorer_error,
                )
    base, cand = runs[0], runs[-1]
    calls = sum(arm.calls for arm in arms)
    for run in runs:
        index_run(store, run)
    arm_line = (
        f"baseline arm: {ref} ({tree.sha[:12]}), checked out in a temporary git worktree "
        f"(removed); candidate arm: the working tree; sampled interleaved in a random order"
    )
    if same:
        arm_line += (
            f". Both arms are one target version ({cand.target.key}): nothing differs, so one "
            "sample set stands for both and nothing can regress"
        )
    notes = [arm_line]
    change = version_change(base.target, cand.target, store.load_manifest)
    if change is not None:
        report.target_change = TargetChange.model_validate(change.as_dict())
        notes.append(change.message(shown_path(suite.path)))
    report.warnings[:0] = notes
    # which arms were sampled, and what moved the version, are routine; both arms one version
    # may not be what was meant
    report.notes = notes if not same else notes[1:]
    report.warnings += redactor.warnings()
    report.calls = calls
    attach_usage(report, cand_built, usage)
    return report
