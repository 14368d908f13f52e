"""Checking a suite: run it, then compare with its baseline, or adopt the run as the first
baseline (refused under CI without consent, or when a case has no valid result).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from noisefloor.errors import BaselineMissing, PointerMoved, UsageError
from noisefloor.model.records import RunRecord
from noisefloor.model.report import (
    BaselineBranch,
    CaseReport,
    Evidence,
    Report,
    Runs,
    ScorerReport,
    Side,
    TargetChange,
    Work,
)
from noisefloor.model.verdict import Verdict, case_frame, scorer_title, side
from noisefloor.operations.concurrent_control import ConcurrentControl
from noisefloor.operations.cost_budget import check_priced, cost_budget
from noisefloor.operations.run import RunOptions, RunResult, attach_usage, run_session, run_suite
from noisefloor.operations.sequential_check import sequential_check
from noisefloor.pipeline.comparison import (
    check_comparable,
    compare_runs,
    few,
    run_summary,
    served_warnings,
)
from noisefloor.pipeline.indexing import index_run
from noisefloor.rules.exit_policy import finished_report
from noisefloor.settings import REPEATS, RuleSettings
from noisefloor.settings.design import Design
from noisefloor.store.branches import Branch
from noisefloor.store.mirrored import MirroredStore
from noisefloor.store.pool import against_pool, pooled_baseline
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import build_target
from noisefloor.targets.version_change import version_change

__all__ = ["adoption_report", "check_suite", "shown_path"]


def adoption_report(
    result: RunResult,
    settings: RuleSettings,
    continue_on_scorer_error: bool = False,
    *,
    deliberate: bool = False,
    deep: bool = False,
) -> Report:
    """The report of a first check: every case added, none passing by absence.

    A run with a case that produced no valid result is not adopted (`"adopted": False`,
    `"baseline": None`): that case could never regress from it. `deliberate` (--set-baseline)
    adopts it anyway. `deep`: the run was sampled at the sequential design's baseline depth.
    """
    run = result.run
    frames = {c.case_id: case_frame(None, result.bands[c.case_id]) for c in run.cases}
    unusable = Counter(
        f["verdict"].value for f in frames.values() if f and f["verdict"] is not Verdict.ADDED
    )
    adopted = deliberate or not unusable
    cases = []
    for case in run.cases:
        band = result.bands[case.case_id]
        frame = frames[case.case_id]
        assert frame is not None
        reason = frame["reason"]
        if frame["verdict"] is Verdict.ADDED:
            reason = "adopted as the baseline" if adopted else "new (the run was not adopted)"
        cases.append(
            CaseReport(
                case_id=case.case_id,
                verdict=frame["verdict"],
                reason=reason,
                scorers=[
                    ScorerReport(
                        key=s.label,
                        verdict=Verdict.ADDED,
                        reason="new",
                        baseline=Side(),
                        candidate=Side.model_validate(side(s)),
                        evidence=Evidence(),
                        title=scorer_title(s.name, s.params),
                    )
                    for s in band.scorers
                ],
            )
        )
    what = ", ".join(
        f"{n} case{'s' if n > 1 else ''} {verdict}" for verdict, n in sorted(unusable.items())
    )
    ids = few(sorted(c for c, f in frames.items() if f and f["verdict"] is not Verdict.ADDED))
    head = f"no baseline for {run.suite!r} yet: "
    if not adopted:
        note = (
            f"{head}{run.run_id} not adopted as the baseline: {what} ({ids}); fix the target, "
            "or adopt deliberately with --set-baseline "
            f"(`noisefloor baseline set {run.run_id}` adopts this run)."
        )
    elif unusable:
        note = (
            f"{head}adopted {run.run_id} as the baseline deliberately, with {what} ({ids}). "
            "Nothing was compared; those cases pass until the baseline moves."
        )
    else:
        note = f"{head}adopted {run.run_id} as the baseline. "
        if deep:
            depth = max(c.repeats - c.start for c in run.cases) if run.cases else 0
            note += (
                f"It was sampled at {depth} repeats per case ({result.pending} calls), once: "
                "every later check compares against that depth and looks at its own cases "
                "only as long as doubt remains. "
            )
        note += "Nothing was compared; run check again after a change."
    report = {
        "suite": run.suite,
        "rule": settings.rule,
        "baseline": run.run_id if adopted else None,
        "candidate": run.run_id,
        "adopted": adopted,
        "cases": cases,
        "warnings": [note, *served_warnings(run, "run"), *result.warnings],
        # a clean adoption is routine; one refused or made with unusable cases may be wrong
        "notes": [note] if adopted and not unusable else [],
        "runs": Runs(candidate=run_summary(run)),
        "calls": run.calls,
        "work": Work.model_validate(result.stats.as_dict()),
    }
    return finished_report(report, settings, continue_on_scorer_error)


def check_suite(
    store: Store,
    suite: Suite,
    opts: RunOptions,
    settings: RuleSettings,
    *,
    allow_target_change: bool = False,
    require_baseline: bool = False,
    ci: bool = False,
    continue_on_scorer_error: bool = False,
    design: Design,
    refuse: Callable[[Report], str | None] | None = None,
) -> Report:
    """Run the suite, then compare with its baseline (adopting the run when there is none).

    `ci`: running under CI without consent to adopt (the command line passes `$CI` set and
    no --adopt), where adopting would turn a missing baseline into a green build. The baseline
    is the deep one (`pool.pooled_baseline`); without a fixed --repeats, the check samples
    sequentially (`design`). `refuse`: given a first run's adoption report, a reason not to
    adopt it (the pytest plugin's: a test that never passed), which the report then carries as
    its last warning, with no baseline.
    """
    pointer = store.baseline(suite.name)
    if pointer is None and require_baseline:
        raise BaselineMissing(
            f"no baseline for suite {suite.name!r} under {store.root}",
            hint="commit one (`noisefloor run SUITE --set-baseline`), or drop --require-baseline",
        )
    if pointer is None and ci and not opts.set_baseline:
        raise _missing_in_ci(store, suite)
    needed = min((opts.repeats or c.repeats) for c in suite.cases)
    if needed < 2:
        raise UsageError(
            f"a check needs at least 2 repeats per case to measure noise; got {needed}",
            hint=f"raise --repeats ({REPEATS} is the default); `noisefloor run` takes single samples",
        )
    built = build_target(suite, store.root)
    # refused before any call, wherever the budget would apply
    check_priced(design.max_cost, built.price)
    screens = [opts.repeats or c.repeats for c in suite.cases]
    sequential = design.applies(settings, screens)
    if pointer is None:
        # the newcomer's first check samples the baseline as deep as the design counts on, so
        # that the next check decides as a deepened baseline's would (a fixed --repeats adopts
        # its own N): the one-time cost is the baseline's depth times the cases
        depth = max(design.baseline_repeats, *screens)
        adopt = dataclasses.replace(opts, repeats=depth) if sequential else opts
        result = run_suite(store, suite, adopt, built)
        report = adoption_report(
            result,
            settings,
            continue_on_scorer_error,
            deliberate=opts.set_baseline,
            deep=sequential,
        )
        attach_usage(report, built, result.usage)
        if not report.adopted:
            return report
        refused = refuse(report) if refuse is not None else None
        if refused is not None:
            report.adopted, report.baseline = False, None
            report.warnings.append(refused)
            return report
        lost = None
        with store.lock(suite.name):
            # checks started together on an empty store: the first to finish adopts, and the
            # others compare with it (their samples are its samples: no call is taken again)
            pointer = store.baseline(suite.name)
            if pointer is None or pointer.run_id == result.run.run_id:  # (--set-baseline set it)
                try:
                    store.set_baseline(suite.name, result.run.run_id)
                except PointerMoved as moved:
                    if opts.set_baseline or not isinstance(store, MirroredStore):
                        raise  # a deliberate move that lost is the user's to settle
                    # another runner adopted first, in the remote: compare with its baseline
                    store.reread(suite.name)
                    lost = moved.message
                else:
                    _branch(store, suite.name, report, adopted=True)
                    return report
        compared = check_suite(
            store,
            suite,
            opts,
            settings,
            allow_target_change=allow_target_change,
            continue_on_scorer_error=continue_on_scorer_error,
            design=design,
            refuse=refuse,
        )
        if lost is not None and compared.baseline_branch is not None:
            compared.baseline_branch.race = lost
            compared.calls += result.run.calls  # (its adoption's calls are this command's)
            compared.warnings.insert(
                0,
                f"{lost}; this check compared {result.run.run_id} with that baseline instead "
                "(its samples stay in the remote)",
            )
        return compared
    base = store.load_run(suite.name, pointer.run_id)
    # refuse before spending calls on a target that cannot be compared
    if base.target.spec != built.record.spec and not allow_target_change:
        check_comparable(base, base.model_copy(update={"target": built.record}), False)

    def pool() -> RunRecord:
        return pooled_baseline(store, base, design.baseline_repeats, design.baseline_max_age_s)

    if sequential:
        with run_session(store, suite, opts, built) as session:
            usage = session.usage
            cost = cost_budget(
                store, design.max_cost, built.price, usage, [*base.cases, *session.cases()]
            )
            parts, run = sequential_check(
                store,
                session,
                settings,
                pool,
                design,
                allow_target_change=allow_target_change,
                cost=cost,
                control=ConcurrentControl(store, suite, base, session, design.max_calls, cost),
            )
        report = finished_report(parts, settings, continue_on_scorer_error)
        report.warnings += session.redactor.warnings()
    else:
        result = run_suite(store, suite, opts, built, score=False)
        run, usage = result.run, result.usage
        deep = pool()
        report = compare_runs(
            store,
            deep,
            against_pool(deep, run),
            settings,
            allow_target_change=allow_target_change,
            continue_on_scorer_error=continue_on_scorer_error,
        )
        report.warnings += result.warnings
    change = version_change(base.target, run.target, store.load_manifest)
    if change is not None:
        report.target_change = TargetChange.model_validate(change.as_dict())
        report.warnings.append(change.message(shown_path(suite.path)))
        report.notes = [*report.notes, report.warnings[-1]]  # an edit of the target is routine
    index_run(store, run)
    report.calls = run.calls
    attach_usage(report, built, usage)
    _branch(store, suite.name, report, adopted=False)
    return report


def _branch(store: Store, suite: str, report: Report, *, adopted: bool) -> None:
    """With a remote: the branch whose pointer this check compared with (or moved, adopting),
    and why that one, in the report."""
    if not isinstance(store, MirroredStore):
        return
    found = store.compared.get(suite)
    read = " or ".join(repr(b) for b in store.branches.read)
    if found is None and adopted:  # the pointer moved is the write branch's
        name = store.branches.write
        found = Branch(name, f"adopted here: no baseline on {read}; {store.branches.reason(name)}")
    elif found is None:
        report.baseline_branch = BaselineBranch(
            name=None, why=f"no pointer on {read} in the remote: the local store's baseline"
        )
        return
    report.baseline_branch = BaselineBranch(name=found.name, why=found.why)


def _missing_in_ci(store: Store, suite: Suite) -> BaselineMissing:
    """The refusal of a check under CI with no baseline to compare with: where it looked (the
    remote and its branches, when one is set) and how to put one there."""
    why = "and CI is set: adopting one here would pass without comparing anything"
    if isinstance(store, MirroredStore):
        read = " or ".join(repr(b) for b in store.branches.read)
        return BaselineMissing(
            f"no baseline for suite {suite.name!r} in {store.remote.url} on branch {read} "
            f"(nor under {shown_path(store.root)}), {why}",
            where=str(suite.path),
            hint=f"adopt one into the remote on branch {store.branches.read[0]!r}: run "
            "`noisefloor check SUITE --adopt` on that branch with this remote (or `noisefloor "
            "baseline set RUN --branch BRANCH`), or --baseline-branch BRANCH to compare with "
            "another branch's; or pass --adopt to adopt here",
        )
    return BaselineMissing(
        f"no baseline for suite {suite.name!r} under {store.root}, {why}",
        where=str(suite.path),
        hint="commit one: run `noisefloor check SUITE --adopt` (or `noisefloor run SUITE "
        f"--set-baseline`) where you work, then commit {shown_path(store.root)}/, whose own "
        ".gitignore leaves exactly the baseline to commit; or pass --adopt to adopt here",
    )


def shown_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
