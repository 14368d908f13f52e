"""The operations behind the commands: run, check, rescore, diff, record and compare.

Each takes a store and settings and returns plain data; printing belongs to the report package.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from noisefloor import __version__
from noisefloor.engine import (
    EngineStats,
    band_tasks,
    comparison_tasks,
    missing_samples,
    run_tasks,
    scorer_gates,
)
from noisefloor.errors import (
    BaselineMissing,
    StoreError,
    TargetChanged,
    UsageError,
)
from noisefloor.fingerprint import GIT_LABEL
from noisefloor.indexing import SampleIndexer
from noisefloor.records import CaseBand, CaseRecord, RunRecord, ScorerUse
from noisefloor.report.model import (
    CaseReport,
    Evidence,
    InputChange,
    Redefinition,
    Report,
    ReportFile,
    Runs,
    RunSummary,
    ScorerDefinition,
    ScorerReport,
    Side,
    TargetChange,
    Work,
)
from noisefloor.sampling import Pending, Redactor, pending_samples, take_samples
from noisefloor.settings import REPEATS, RuleSettings
from noisefloor.store import ReadOnlyStore, Store, short_hash, utc_now
from noisefloor.suite import Case, Suite
from noisefloor.targets.base import RawSample
from noisefloor.targets.factory import BuiltTarget, build_target
from noisefloor.targets.kinds import kind_named
from noisefloor.verdict import (
    Verdict,
    case_frame,
    exit_code_for,
    side,
    sort_cases,
    suite_summary,
)
from noisefloor.version_change import version_change

__all__ = [
    "RunOptions",
    "RunResult",
    "adoption_report",
    "case_key",
    "case_records",
    "check_suite",
    "compare_labels",
    "compare_runs",
    "diff_runs",
    "rescore_run",
    "resolve_run",
    "run_suite",
    "scorer_uses",
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
    on_sample: Callable[[Pending, str], None] | None = None
    on_start: Callable[[int], None] | None = None


@dataclass
class RunResult:
    """A completed run, its bands, and what it cost."""

    run: RunRecord
    bands: dict[str, CaseBand]
    stats: EngineStats
    pending: int
    warnings: list[str] = field(default_factory=list)


def scorer_uses(case: Case) -> list[ScorerUse]:
    """The scorers of a case as a run records them."""
    return [
        ScorerUse(
            label=b.label,
            name=b.scorer.name,
            params=b.scorer.spec.params,
            impl_hash=b.scorer.spec.impl_hash,
            min_effect=b.min_effect,
            suspect_drop=b.suspect_drop,
        )
        for b in case.scorers
    ]


def case_key(case: Case) -> str:
    """The cache key of what the target receives for a case (its id and input)."""
    return short_hash({"case_id": case.id, "input": case.input})


def _run_id(suite: str) -> str:
    stamp = utc_now().replace("-", "").replace(":", "")
    return f"{stamp}-{suite}"


def _bands(
    store: Store, suite: str, cases: list[CaseRecord]
) -> tuple[dict[str, CaseBand], EngineStats]:
    side_tasks = band_tasks(store, suite, cases, {})
    stats = run_tasks(store, side_tasks.tasks)
    return {cid: store.read_model(p, CaseBand) for cid, p in side_tasks.bands.items()}, stats


def case_records(
    store: Store,
    suite: Suite,
    built: BuiltTarget,
    epoch: int,
    repeats: int | None = None,
    redactor: Redactor | None = None,
) -> list[CaseRecord]:
    """Each case as a run records it: its sample directory (the cache key) and its scorers."""
    redactor = redactor or Redactor(suite.redact, built.secrets)
    key = built.record.key
    cases = []
    for case in suite.cases:
        key_of_case = case_key(case)
        sample_dir = store.sample_dir(suite.name, case.id, key, key_of_case, epoch)
        cases.append(
            CaseRecord(
                case_id=case.id,
                case_key=key_of_case,
                input=redactor.text(case.input),
                repeats=repeats or case.repeats,
                sample_dir=store.rel(sample_dir),
                tags=list(case.tags),
                scorers=scorer_uses(case),
                line=case.line,
            )
        )
    return cases


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

    if opts.repeats is not None and opts.repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {opts.repeats}")
    if opts.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {opts.jobs}")
    if opts.replace and not opts.label:
        raise UsageError("--replace starts a label over: it needs --label NAME")
    built = built or build_target(suite, store.root)
    store.ensure()
    started = utc_now()
    with store.lock(suite.name):
        key = built.record.key
        if built.tracked is not None:
            store.save_manifest(built.record.fingerprint[GIT_LABEL], built.tracked)
        prior = _label_pool(store, suite.name, opts, key)
        if prior is not None:
            epoch = prior.epoch
        elif opts.fresh or opts.replace:
            epoch = store.bump_epoch(suite.name, key)
        else:
            epoch = store.epoch(suite.name, key)
        redactor = Redactor(suite.redact, built.secrets)
        cases = case_records(store, suite, built, epoch, opts.repeats, redactor)
        pooled = store.label_runs(suite.name, opts.label) if prior and opts.label else []
        if prior is not None:
            held = {c.case_id: c for c in prior.cases}
            cases = [_after_held(c, held.get(c.case_id)) for c in cases]
        pending = pending_samples(store, cases, {c.id: c.input for c in suite.cases})
        if opts.on_start is not None:
            opts.on_start(len(pending))
        indexer = SampleIndexer(store)
        try:
            calls = take_samples(
                store,
                built.target,
                pending,
                jobs=opts.jobs,
                redactor=redactor,
                on_sample=opts.on_sample,
                on_written=indexer,
            )
        finally:
            indexer.close()
        served = kind_named(built.record.kind).check_run(_samples(store, cases))
        run = RunRecord(
            run_id=_run_id(suite.name),
            suite=suite.name,
            suite_file=suite.path.name,
            label=opts.label,
            started_at=started,
            finished_at=utc_now(),
            harness_version=__version__,
            target=built.record,
            epoch=epoch,
            jobs=opts.jobs,
            calls=calls,
            pooled_runs=pooled,
            served_models=served,
            cases=cases,
        )
        store.save_run(run)
        if opts.label:
            store.set_label(suite.name, opts.label, [*pooled, run.run_id])
        if opts.set_baseline:
            store.set_baseline(suite.name, run.run_id)
    if not score:
        return RunResult(run=run, bands={}, stats=EngineStats(), pending=len(pending))
    bands, stats = _bands(store, suite.name, cases)
    _index(store, run)
    return RunResult(run=run, bands=bands, stats=stats, pending=len(pending))


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


def _after_held(case: CaseRecord, held: CaseRecord | None) -> CaseRecord:
    """A case that takes its repeats after those its label already holds in the same sample set.

    A case whose input changed has a new sample set, and starts from repeat 0 there.
    """
    if held is None or held.sample_dir != case.sample_dir:
        return case
    return case.model_copy(
        update={"first_repeat": held.repeats, "repeats": held.repeats + case.repeats}
    )


def _samples(store: Store, cases: list[CaseRecord]) -> Iterator[RawSample]:
    """Every sample of the cases, read only as a kind's check after a run asks for them."""
    from noisefloor.scoring import read_sample

    for case in cases:
        sample_dir = store.abs(case.sample_dir)
        for repeat in range(case.repeats):
            yield read_sample(store.sample_path(sample_dir, repeat))


def _served_warnings(run: RunRecord, side: str) -> list[str]:
    return kind_named(run.target.kind).run_warnings(run, side)


def _index(store: Store, run: RunRecord) -> None:
    """Index a scored run in the SQLite ledger (an index of the JSON files, rebuildable)."""
    from noisefloor.indexing import index_run

    index_run(store, run)


def _require_samples(store: Store, cases: list[CaseRecord]) -> None:
    missing = missing_samples(store, cases)
    if missing:
        shown = ", ".join(store.rel(p) for p in missing[:3])
        raise StoreError(
            f"{len(missing)} sample file(s) named by the runs are missing (e.g. {shown})",
            hint="this command never calls the target; `noisefloor run SUITE` takes them again",
        )


def _spec_diff(base: RunRecord, cand: RunRecord) -> list[str]:
    a, b = base.target.spec, cand.target.spec
    out = [
        f"{k}: {a.get(k)!r} -> {b.get(k)!r}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    if base.target.kind != cand.target.kind:
        out.insert(0, f"kind: {base.target.kind} -> {cand.target.kind}")
    return out


def _check_comparable(base: RunRecord, cand: RunRecord, allow_target_change: bool) -> list[str]:
    if base.suite != cand.suite:
        raise UsageError(f"runs of different suites: {base.suite!r} and {cand.suite!r}")
    changes = _spec_diff(base, cand)
    if changes and not allow_target_change:
        raise TargetChanged(
            "the target spec changed between the baseline and the candidate",
            details=changes,
            hint="a code change is compared as usual; a different command, cwd or model needs a new "
            "baseline (`noisefloor baseline set RUN`) or --allow-target-change",
        )
    return [f"target spec changed ({'; '.join(changes)}), compared anyway"] if changes else []


def _one_or_all(values: set[int]) -> int | list[int]:
    ordered = sorted(values)
    return ordered[0] if len(ordered) == 1 else ordered


def _rests_on(store: Store, run: RunRecord) -> list[dict[str, Any]]:
    """The runs that took the repeats a run's cases hold, oldest first: the run itself and the
    earlier runs of its label, each with the repeats per case it took."""
    held = {c.case_id: c.sample_dir for c in run.cases}
    out = []
    for run_id in [*run.pooled_runs, run.run_id]:
        taker = run if run_id == run.run_id else store.load_run(run.suite, run_id)
        taken = {
            c.repeats - c.first_repeat for c in taker.cases if held.get(c.case_id) == c.sample_dir
        }
        if taken:
            out.append({"run_id": run_id, "repeats": _one_or_all(taken)})
    return out


def _run_summary(run: RunRecord, store: Store | None = None) -> RunSummary:
    """What a report says of one side; given the store, which runs its repeats come from."""
    reps = sorted({c.repeats for c in run.cases})
    rests_on = {"rests_on": _rests_on(store, run)} if store is not None else {}
    summary = {
        "run_id": run.run_id,
        "started_at": run.started_at,
        "target_key": run.target.key,
        "epoch": run.epoch,
        "repeats": reps[0] if len(reps) == 1 else reps,
        "calls": run.calls,
        "jobs": run.jobs,
        "label": run.label,
        "cases": len(run.cases),
        "target": {"kind": run.target.kind, **run.target.spec},
        "served_models": run.served_models,
        **rests_on,
    }
    return RunSummary.model_validate(summary)


def _scorer_errors(scorer: ScorerReport) -> int:
    return (scorer.baseline.scorer_errors or 0) + (scorer.candidate.scorer_errors or 0)


def _finish(
    report: dict[str, Any], settings: RuleSettings, continue_on_scorer_error: bool
) -> Report:
    """The report model from its parts: cases worst first, counts, scorer errors, exit code."""
    cases = sort_cases(report["cases"])
    counts = Counter(c.verdict.value for c in cases)
    scorer_errors = sum(_scorer_errors(s) for c in cases for s in c.scorers)
    warnings = report.setdefault("warnings", [])
    if scorer_errors:
        affected = sorted({c.case_id for c in cases for s in c.scorers if _scorer_errors(s)})
        warnings.append(
            f"{scorer_errors} scorer error(s) in {', '.join(affected[:5])}: a scorer raised; "
            "that is the harness's fault, not the target's (see `noisefloor show`)"
        )
    summary = report.get("suite_summary")
    suite_failed = bool(settings.suite_gate and summary is not None and summary.gate_failed)
    code = exit_code_for(
        counts,
        strict=settings.strict,
        harness_fault=bool(scorer_errors) and not continue_on_scorer_error,
    )
    if suite_failed and code == 0:
        code = exit_code_for({Verdict.REGRESSED: 1}, strict=False)
    report.update(cases=cases, counts=dict(sorted(counts.items())), exit_code=int(code))
    return Report(**report)


def _definition(use: ScorerUse) -> ScorerDefinition:
    return ScorerDefinition(name=use.name, params=use.params, impl_hash=use.impl_hash)


def _few(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _mark_changes(cases: list[CaseReport], base: RunRecord, cand: RunRecord) -> list[str]:
    """Mark the cases whose input, and the scorers whose definition, differ from the baseline's.

    Cases are joined by id and both sides are scored with the candidate's scorers, so either
    change is compared on its numbers; the marks say so, in the case and in warnings.
    """
    base_cases = {c.case_id: c for c in base.cases}
    cand_cases = {c.case_id: c for c in cand.cases}
    inputs: list[str] = []
    scorers: list[str] = []
    for case in cases:
        b, c = base_cases.get(case.case_id), cand_cases.get(case.case_id)
        if b is None or c is None:
            continue
        if b.case_key != c.case_key:
            case.input_changed = InputChange(baseline=b.case_key, candidate=c.case_key)
            case.reason = f"input changed since the baseline; {case.reason}"
            inputs.append(case.case_id)
        recorded = {u.label: _definition(u) for u in b.scorers}
        for use in c.scorers:
            was, now = recorded.get(use.label), _definition(use)
            entry = next((s for s in case.scorers if s.key == use.label), None)
            if was == now or entry is None:
                continue
            entry.evidence.scorer_redefined = Redefinition(baseline=was, candidate=now)
            entry.reason += (
                "; scorer redefined since the baseline: baseline samples re-scored"
                if was is not None
                else "; scorer added since the baseline: baseline samples scored with it"
            )
            scorers.append(f"{case.case_id} {use.label}")
    warnings = []
    if inputs:
        warnings.append(
            f"input changed since the baseline for {len(inputs)} case(s) ({_few(inputs)}): "
            "compared by case id; once the new input is meant, move the baseline "
            f"(`noisefloor baseline set {cand.run_id}`)"
        )
    if scorers:
        warnings.append(
            f"{len(scorers)} scorer(s) differ from the baseline's ({_few(scorers)}): the "
            "baseline's samples were re-scored with the current definition"
        )
    return warnings


def _no_valid_result(scorer_side: Side) -> bool:
    return bool(scorer_side.n) and scorer_side.target_errors == scorer_side.n


def _baseline_gaps(cases: list[CaseReport], cand: RunRecord) -> list[str]:
    """Warn about cases whose baseline has no valid result: whatever the rule, they pass."""
    dead: list[str] = []
    revived: list[str] = []
    for case in cases:
        sides = [s for s in case.scorers if not s.baseline.empty]
        if not sides or not all(_no_valid_result(s.baseline) for s in sides):
            continue
        alive = not all(_no_valid_result(s.candidate) for s in sides if not s.candidate.empty)
        (revived if alive else dead).append(case.case_id)
    warnings = []
    if dead:
        warnings.append(
            f"{len(dead)} case(s) produced no valid result on either side ({_few(dead)}): not "
            "broken, since the baseline had none either, but the gate cannot see them; fix the "
            "target, then move the baseline (`noisefloor baseline set RUN`)"
        )
    if revived:
        warnings.append(
            f"{len(revived)} case(s) produce valid results where the baseline had none "
            f"({_few(revived)}): the gate cannot see them regress until the baseline moves "
            f"(`noisefloor baseline set {cand.run_id}`)"
        )
    return warnings


def compare_runs(
    store: Store,
    base: RunRecord,
    cand: RunRecord,
    settings: RuleSettings,
    *,
    allow_target_change: bool = False,
    continue_on_scorer_error: bool = False,
) -> Report:
    """Compare two stored runs: both scored with the candidate's scorers. Never calls a target."""
    warnings = _check_comparable(base, cand, allow_target_change)
    warnings += _served_warnings(base, "baseline") + _served_warnings(cand, "candidate")
    view = ReadOnlyStore(store.root)
    _require_samples(view, [*base.cases, *cand.cases])
    scorers = {c.case_id: c.scorers for c in cand.cases}
    cand_side = band_tasks(view, cand.suite, cand.cases, scorers)
    # a case whose sample set both runs share (nothing changed) needs its band built once
    cand_sets = {c.case_id: (c.sample_dir, c.repeats) for c in cand.cases}
    same = {c.case_id for c in base.cases if cand_sets.get(c.case_id) == (c.sample_dir, c.repeats)}
    base_side = band_tasks(
        view, base.suite, [c for c in base.cases if c.case_id not in same], scorers
    )
    base_bands = {**{cid: cand_side.bands[cid] for cid in same}, **base_side.bands}
    # a case's scorers' own thresholds, from the scorers it was scored with
    gates = {c.case_id: scorer_gates(c.scorers) for c in base.cases}
    gates.update((cid, scorer_gates(uses)) for cid, uses in scorers.items())
    comparison = comparison_tasks(view, cand.suite, base_bands, cand_side.bands, settings, gates)
    stats = run_tasks(view, base_side.tasks + cand_side.tasks + comparison.tasks)
    data = view.read_model(comparison.report, ReportFile)
    base_reps = {c.case_id: c.repeats for c in base.cases}
    changed = sorted(
        c.case_id
        for c in cand.cases
        if c.case_id in base_reps and base_reps[c.case_id] != c.repeats
    )
    if changed:
        warnings.append(
            f"repeat count changed for {len(changed)} case(s) (e.g. {changed[0]}: "
            f"{base_reps[changed[0]]} -> {next(c.repeats for c in cand.cases if c.case_id == changed[0])})"
        )
    warnings += _mark_changes(data.cases, base, cand)
    warnings += _baseline_gaps(data.cases, cand)
    report = {
        "suite": cand.suite,
        "rule": settings.rule,
        "baseline": base.run_id,
        "candidate": cand.run_id,
        "adopted": False,
        "cases": data.cases,
        "warnings": warnings,
        "rule_summary": data.suite,
        "settings": data.settings,
        "suite_summary": suite_summary(data.cases, settings),
        "runs": Runs(baseline=_run_summary(base, view), candidate=_run_summary(cand, view)),
        # a comparison calls nothing; `check` puts in the calls of its own run
        "calls": 0,
        "work": Work.model_validate(stats.as_dict()),
    }
    return _finish(report, settings, continue_on_scorer_error)


def adoption_report(
    result: RunResult,
    settings: RuleSettings,
    continue_on_scorer_error: bool = False,
    *,
    deliberate: bool = False,
) -> Report:
    """The report of a first check: every case added, none passing by absence.

    A run with a case that produced no valid result is not adopted (`"adopted": False`,
    `"baseline": None`): that case could never regress from it. `deliberate` (--set-baseline)
    adopts it anyway.
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
                    )
                    for s in band.scorers
                ],
            )
        )
    what = ", ".join(
        f"{n} case{'s' if n > 1 else ''} {verdict}" for verdict, n in sorted(unusable.items())
    )
    ids = _few(sorted(c for c, f in frames.items() if f and f["verdict"] is not Verdict.ADDED))
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
        note = (
            f"{head}adopted {run.run_id} as the baseline. "
            "Nothing was compared; run check again after a change."
        )
    report = {
        "suite": run.suite,
        "rule": settings.rule,
        "baseline": run.run_id if adopted else None,
        "candidate": run.run_id,
        "adopted": adopted,
        "cases": cases,
        "warnings": [note, *_served_warnings(run, "run")],
        "runs": Runs(candidate=_run_summary(run)),
        "calls": run.calls,
        "work": Work.model_validate(result.stats.as_dict()),
    }
    return _finish(report, settings, continue_on_scorer_error)


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
) -> Report:
    """Run the suite, then compare with its baseline (adopting the run when there is none).

    `ci`: running under CI without consent to adopt (the command line passes `$CI` set and
    no --adopt), where adopting would turn a missing baseline into a green build.
    """
    pointer = store.baseline(suite.name)
    if pointer is None and require_baseline:
        raise BaselineMissing(
            f"no baseline for suite {suite.name!r} under {store.root}",
            hint="commit one (`noisefloor run SUITE --set-baseline`), or drop --require-baseline",
        )
    if pointer is None and ci and not opts.set_baseline:
        raise BaselineMissing(
            f"no baseline for suite {suite.name!r} under {store.root}, and CI is set: adopting "
            "one here would pass without comparing anything",
            where=str(suite.path),
            hint="commit one: run `noisefloor check SUITE --adopt` (or `noisefloor run SUITE "
            f"--set-baseline`) where you work, then commit {_shown(store.root)}/, whose own "
            ".gitignore leaves exactly the baseline to commit; or pass --adopt to adopt here",
        )
    needed = min((opts.repeats or c.repeats) for c in suite.cases)
    if needed < 2:
        raise UsageError(
            f"a check needs at least 2 repeats per case to measure noise; got {needed}",
            hint=f"raise --repeats ({REPEATS} is the default); `noisefloor run` takes single samples",
        )
    built = build_target(suite, store.root)
    base = None
    if pointer is not None:
        base = store.load_run(suite.name, pointer.run_id)
        # refuse before spending calls on a target that cannot be compared
        if base.target.spec != built.record.spec and not allow_target_change:
            _check_comparable(base, base.model_copy(update={"target": built.record}), False)
    result = run_suite(store, suite, opts, built, score=base is None)
    if base is None:
        report = adoption_report(
            result, settings, continue_on_scorer_error, deliberate=opts.set_baseline
        )
        if report.adopted:
            store.set_baseline(suite.name, result.run.run_id)
        return report
    report = compare_runs(
        store,
        base,
        result.run,
        settings,
        allow_target_change=allow_target_change,
        continue_on_scorer_error=continue_on_scorer_error,
    )
    change = version_change(base.target, result.run.target, store.load_manifest)
    if change is not None:
        report.target_change = TargetChange.model_validate(change.as_dict())
        report.warnings.append(change.message(_shown(suite.path)))
    _index(store, result.run)
    report.calls = result.run.calls
    stats = result.stats.merged(
        EngineStats(Counter(report.work.executed), Counter(report.work.up_to_date))
    )
    report.work = Work.model_validate(stats.as_dict())
    return report


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def resolve_run(store: Store, ref: str, suite: str | None = None) -> RunRecord:
    """A run id, a unique prefix of one, or a label."""
    labelled = store.find_label(ref, suite) if _is_name(ref) else None
    return labelled or store.find_run(ref)


def _is_name(text: str) -> bool:
    return bool(text) and all(ch.isalnum() or ch in "._-" for ch in text)


def diff_runs(
    store: Store,
    candidate: str | None,
    baseline: str | None,
    settings: RuleSettings,
    *,
    allow_target_change: bool = False,
    continue_on_scorer_error: bool = False,
) -> Report:
    """Compare stored runs: the newest run (or CANDIDATE) against the baseline (or --baseline)."""
    cand = resolve_run(store, candidate) if candidate else store.latest_run()
    if cand is None:
        raise StoreError(f"no runs under {store.root}", hint="`noisefloor run SUITE` makes one")
    if baseline:
        base = resolve_run(store, baseline, cand.suite)
    else:
        pointer = store.baseline(cand.suite)
        if pointer is None:
            raise BaselineMissing(
                f"no baseline for suite {cand.suite!r}",
                hint="pass --baseline RUN or set one with `noisefloor baseline set RUN`",
            )
        base = store.load_run(cand.suite, pointer.run_id)
    if base.run_id == cand.run_id:
        raise UsageError(
            f"the candidate {cand.run_id} is the baseline itself: nothing to compare",
            hint="name another run, or run the suite again",
        )
    return compare_runs(
        store,
        base,
        cand,
        settings,
        allow_target_change=allow_target_change,
        continue_on_scorer_error=continue_on_scorer_error,
    )


def compare_labels(
    store: Store,
    baseline: str,
    current: str,
    settings: RuleSettings,
    *,
    suite: str | None = None,
    allow_target_change: bool = False,
) -> Report:
    """The quarantine-lane `compare`: two labelled runs."""
    found = []
    for label in (baseline, current):
        run = store.find_label(label, suite)
        if run is None:
            raise StoreError(
                f"no run is labelled {label!r}",
                hint="`noisefloor record SUITE --label NAME` makes one",
            )
        found.append(run)
    return compare_runs(
        store,
        found[0],
        found[1],
        settings,
        allow_target_change=allow_target_change,
        continue_on_scorer_error=True,
    )


def rescore_run(store: Store, suite: Suite, run_id: str | None) -> RunResult:
    """Apply the suite's current scorers to a stored run's samples; never calls the target."""
    view = ReadOnlyStore(store.root)
    run = resolve_run(view, run_id, suite.name) if run_id else view.latest_run(suite.name)
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
            "run_id": _run_id(suite.name),
            "rescored_from": run.run_id,
            "calls": 0,
            "cases": cases,
            "started_at": utc_now(),
            "finished_at": utc_now(),
        }
    )
    _require_samples(view, cases)
    bands, stats = _bands(view, suite.name, cases)
    view.save_run(new)
    _index(view, new)
    skipped = sorted(set(current) - {c.case_id for c in run.cases})
    warnings = (
        [f"{len(skipped)} case(s) of the suite are not in run {run.run_id} and were skipped"]
        if skipped
        else []
    )
    return RunResult(run=new, bands=bands, stats=stats, pending=0, warnings=warnings)
