"""Comparing two stored runs: both scored with the candidate's scorers, judged by a rule, and
assembled into a report with what changed between them. Never calls a target.
"""

from __future__ import annotations

from typing import Any

from noisefloor.errors import StoreError, TargetChanged, UsageError
from noisefloor.model.records import CaseRecord, RunRecord, ScorerUse
from noisefloor.model.report import (
    CaseReport,
    InputChange,
    Redefinition,
    Report,
    ReportFile,
    Runs,
    RunSummary,
    ScorerDefinition,
    Side,
    Work,
)
from noisefloor.model.summary import suite_summary
from noisefloor.pipeline.engine import (
    band_tasks,
    comparison_tasks,
    missing_samples,
    read_rebuilt,
    run_comparison,
    scorer_gates,
)
from noisefloor.rules.exit_policy import finished_report
from noisefloor.settings import RuleSettings
from noisefloor.store.store import ReadOnlyStore, Store
from noisefloor.targets.kinds import kind_named

__all__ = [
    "check_comparable",
    "compare_runs",
    "comparison_parts",
    "few",
    "require_samples",
    "run_summary",
    "served_warnings",
]


def require_samples(store: Store, cases: list[CaseRecord]) -> None:
    # a case both runs share (nothing changed) names the same files twice: stat them once
    sets = {(c.sample_dir, c.start, c.repeats): c for c in cases}
    gone = {key: missing_samples(store, [case]) for key, case in sets.items()}
    missing = [path for c in cases for path in gone[c.sample_dir, c.start, c.repeats]]
    if missing:
        shown = ", ".join(store.rel(p) for p in missing[:3])
        raise StoreError(
            f"{len(missing)} sample file(s) named by the runs are missing (e.g. {shown})",
            hint="this command never calls the target for a stored run's samples: `noisefloor "
            "baseline deepen SUITE` takes a baseline's again on the baseline's code (or move the "
            "baseline with `noisefloor baseline set RUN`), `noisefloor run SUITE` the current "
            "version's",
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


def check_comparable(base: RunRecord, cand: RunRecord, allow_target_change: bool) -> list[str]:
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


def _rests_on(store: Store, run: RunRecord, saved: RunRecord | None) -> list[dict[str, Any]]:
    """The runs that took the repeats a run's cases hold, oldest first: the run itself and the
    earlier runs of its label, each with the repeats per case it took."""
    held = {c.case_id: c.sample_dir for c in run.cases}
    out = []
    for run_id in [*run.pooled_runs, run.run_id]:
        # a deep baseline rests on more than its run took: what each run took is on disk
        path = store.run_path(run.suite, run_id)
        if saved is not None and saved.run_id == run_id:
            taker = saved
        else:
            taker = store.load_run(run.suite, run_id) if path.exists() else run
        taken = {
            c.repeats - c.first_repeat for c in taker.cases if held.get(c.case_id) == c.sample_dir
        }
        if taken:
            out.append({"run_id": run_id, "repeats": _one_or_all(taken)})
    return out


def run_summary(
    run: RunRecord, store: Store | None = None, saved: RunRecord | None = None
) -> RunSummary:
    """What a report says of one side; given the store, which runs its repeats come from
    (`saved`: the run as its file holds it, when the caller has it at hand)."""
    reps = sorted({c.repeats - c.start for c in run.cases})
    rests_on = {"rests_on": _rests_on(store, run, saved)} if store is not None else {}
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


def served_warnings(run: RunRecord, side: str) -> list[str]:
    return kind_named(run.target.kind).run_warnings(run, side)


def _definition(use: ScorerUse) -> ScorerDefinition:
    return ScorerDefinition(name=use.name, params=use.params, impl_hash=use.impl_hash)


def few(ids: list[str]) -> str:
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
            f"input changed since the baseline for {len(inputs)} case(s) ({few(inputs)}): "
            "compared by case id; once the new input is meant, move the baseline "
            f"(`noisefloor baseline set {cand.run_id}`)"
        )
    if scorers:
        warnings.append(
            f"{len(scorers)} scorer(s) differ from the baseline's ({few(scorers)}): the "
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
            f"{len(dead)} case(s) produced no valid result on either side ({few(dead)}): not "
            "broken, since the baseline had none either, but the gate cannot see them; fix the "
            "target, then move the baseline (`noisefloor baseline set RUN`)"
        )
    if revived:
        warnings.append(
            f"{len(revived)} case(s) produce valid results where the baseline had none "
            f"({few(revived)}): the gate cannot see them regress until the baseline moves "
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
    parts = comparison_parts(store, base, cand, settings, allow_target_change=allow_target_change)
    return finished_report(parts, settings, continue_on_scorer_error)


def comparison_parts(
    store: Store,
    base: RunRecord,
    cand: RunRecord,
    settings: RuleSettings,
    *,
    allow_target_change: bool = False,
) -> dict[str, Any]:
    """The parts of a comparison's report, before the exit policy has seen them."""
    warnings = check_comparable(base, cand, allow_target_change)
    warnings += served_warnings(base, "baseline") + served_warnings(cand, "candidate")
    view = ReadOnlyStore(store.root)
    require_samples(view, [*base.cases, *cand.cases])
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
    tasks = base_side.tasks + cand_side.tasks + comparison.tasks
    stats = run_comparison(view, comparison, tasks)
    data, rebuilt = read_rebuilt(
        view,
        lambda: view.read_model(comparison.report, ReportFile),
        lambda: run_comparison(view, comparison, tasks),
    )
    stats = stats.merged(rebuilt)
    warnings += _mark_changes(data.cases, base, cand)
    warnings += _baseline_gaps(data.cases, cand)
    return {
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
        "runs": Runs(baseline=run_summary(base, view), candidate=run_summary(cand, view)),
        # a comparison calls nothing; `check` puts in the calls of its own run
        "calls": 0,
        "work": Work.model_validate(stats.as_dict()),
    }
