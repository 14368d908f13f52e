"""A sequential check: screen every case against the deep baseline, confirm the cases in doubt
on fresh repeats within the per-case cap and the check's budget, and report what it spent.
"""

from __future__ import annotations

import statistics as pystats
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from noisefloor import stats
from noisefloor.comparison import comparison_parts, run_summary
from noisefloor.cost_budget import CostBudget
from noisefloor.errors import UsageError
from noisefloor.pool import against_pool
from noisefloor.records import CaseRecord, RunRecord
from noisefloor.report.model import (
    CaseReport,
    ReportSettings,
    RuleSummary,
    Runs,
    Sequential,
    SequentialSummary,
    Work,
)
from noisefloor.sequential import Design, Stop, combine, doubt_order
from noisefloor.settings import REFERENCE_CHANGE, SCREEN_SHARE, RuleSettings
from noisefloor.store import Store
from noisefloor.verdict import suite_summary

__all__ = ["Sampler", "sequential_check"]


class Sampler(Protocol):
    """What a sequential check samples through: a check's run session, or an A/B's two arms
    (whose baseline arm takes as many repeats as the candidate, interleaved)."""

    taken: int
    """Samples taken so far."""

    def cases(self) -> list[CaseRecord]:
        """The candidate's cases at the suite's repeats."""
        ...

    def missing(self, cases: list[CaseRecord]) -> int:
        """How many samples `take(cases)` would take."""
        ...

    def take(self, cases: list[CaseRecord]) -> object:
        """Take the missing samples of the candidate's `cases`."""
        ...

    def record(self, cases: list[CaseRecord]) -> RunRecord:
        """The candidate's run record of `cases`, not saved."""
        ...

    def finish(self, cases: list[CaseRecord]) -> RunRecord:
        """Save the candidate's run record of `cases` (and what else the sampler keeps)."""
        ...


def sequential_check(
    store: Store,
    sampler: Sampler,
    settings: RuleSettings,
    pool_of: Callable[[], RunRecord],
    design: Design,
    *,
    allow_target_change: bool = False,
    cost: CostBudget | None = None,
) -> tuple[dict[str, Any], RunRecord]:
    """Sample and judge in two looks; return the report's parts and the candidate's run saved.

    `pool_of()` gives the deep baseline as it stands once the screen's samples are written (a
    check of the baseline's own version adds to it). Call it holding the suite's lock. `cost`
    (`--max-cost`) is checked where `design.max_calls` is, with the same rules.
    """
    # a screen below min_valid could judge nothing: every case would go to confirmation
    screen_cases = [
        c
        if c.repeats >= c.first_repeat + settings.min_valid
        else c.model_copy(update={"repeats": c.first_repeat + settings.min_valid})
        for c in sampler.cases()
    ]
    _check_budget(sampler, screen_cases, design)
    if cost is not None:
        cost.check_screen((c.case_id, sampler.missing([c])) for c in screen_cases)
    sampler.take(screen_cases)
    pool: RunRecord = pool_of()
    screen_run = against_pool(pool, sampler.record(screen_cases))
    screened = comparison_parts(
        store,
        pool,
        screen_run,
        design.screen(settings),
        allow_target_change=allow_target_change,
    )
    pool_dirs = {c.case_id: c.sample_dir for c in pool.cases}
    same = {c.case_id for c in screen_cases if pool_dirs.get(c.case_id) == c.sample_dir}
    stops: dict[str, Stop] = {cid: Stop.SAME for cid in same}
    fresh = _confirmations(sampler, screen_cases, screened["cases"], same, design, stops, cost)
    sampler.take(fresh)
    confirmed_ids = {c.case_id for c in fresh}
    windows = {c.case_id: c for c in fresh}
    final_cases = [windows.get(c.case_id, c) for c in screen_cases]
    if fresh:
        pool = pool_of()  # an A/B's baseline arm took repeats beside the confirmations
    run = sampler.finish(final_cases)
    confirmed: dict[str, CaseReport] = {}
    confirm_summary = None
    work = screened["work"]
    if fresh:
        sub_pool = pool.model_copy(
            update={"cases": [c for c in pool.cases if c.case_id in confirmed_ids]}
        )
        sub_run = run.model_copy(
            update={"cases": [c for c in run.cases if c.case_id in confirmed_ids]}
        )
        confirm = comparison_parts(
            store,
            sub_pool,
            sub_run,
            design.confirm(settings, screened["rule_summary"]),
            allow_target_change=True,
        )
        confirmed = {c.case_id: c for c in confirm["cases"]}
        confirm_summary = confirm["rule_summary"]
        work = Work(
            executed=dict(Counter(work.executed) + Counter(confirm["work"].executed)),
            up_to_date=dict(Counter(work.up_to_date) + Counter(confirm["work"].up_to_date)),
        )
    evidence = _evidence(pool, screen_cases, run, same)
    cases = combine(
        screened["cases"], confirmed, stops, evidence, design.max_calls, design.max_cost
    )
    shown_run = against_pool(pool, run)
    # the screen's comparison summed up this very pool, unless confirmations moved it
    shown_pool = run_summary(pool, store) if fresh else screened["runs"].baseline
    parts = {
        **screened,
        "candidate": run.run_id,
        "cases": cases,
        "work": work,
        "settings": ReportSettings.model_validate(settings.config()),
        "suite_summary": suite_summary(cases, settings),
        "runs": Runs(baseline=shown_pool, candidate=run_summary(shown_run, store, run)),
    }
    summary = _summary(
        settings,
        design,
        pool,
        cases,
        (len(fresh), sum(1 for s in stops.values() if s is Stop.BUDGET), sampler.taken),
        (screened["rule_summary"], confirm_summary),
    )
    parts["sequential"] = summary
    parts["warnings"] = [*parts["warnings"], *_shallow(summary, design)]
    return parts, run


def _check_budget(sampler: Sampler, cases: list[CaseRecord], design: Design) -> None:
    if design.max_calls is None:
        return
    need = sampler.missing(cases)
    if need > design.max_calls:
        raise UsageError(
            f"--max-calls {design.max_calls} is below the screen's {need} samples "
            f"({len(cases)} cases)",
            hint="raise --max-calls, or screen fewer repeats (the suite's `repeats`)",
        )


def _confirmations(
    sampler: Sampler,
    screen_cases: list[CaseRecord],
    screened: list[CaseReport],
    same: set[str],
    design: Design,
    stops: dict[str, Stop],
    cost: CostBudget | None = None,
) -> list[CaseRecord]:
    """The fresh repeats each case in doubt takes after its screen, most doubtful first, as
    long as the budget lasts; `stops` learns which cases took them and which the budget left."""
    by_id = {c.case_id: c for c in screen_cases}
    budget = None if design.max_calls is None else design.max_calls - sampler.taken
    out = []
    for case_id in doubt_order(screened):
        if case_id in same:
            continue
        case = by_id[case_id]
        if design.max_repeats <= case.repeats:
            stops[case_id] = Stop.CAP
            continue
        window = case.model_copy(update={"start": case.repeats, "repeats": design.max_repeats})
        need = sampler.missing([window])
        if budget is not None and need > budget:
            stops[case_id] = Stop.BUDGET
            continue
        if cost is not None and not cost.affords(case_id, need):
            stops[case_id] = Stop.BUDGET
            continue
        if budget is not None:
            budget -= need
        stops[case_id] = Stop.CAP
        out.append(window)
    return out


def _evidence(
    pool: RunRecord, screen: list[CaseRecord], run: RunRecord, same: set[str]
) -> dict[str, Sequential]:
    """Each case's repeats: a case of the baseline's own version rests on the pool alone."""
    base = {c.case_id: c.repeats - c.start for c in pool.cases}
    screens = {c.case_id: c.repeats for c in screen}
    out = {}
    for case in run.cases:
        cid = case.case_id
        depth = base.get(cid, 0)
        if cid in same:
            out[cid] = Sequential(
                baseline_repeats=depth, candidate_repeats=depth, screen=0, verdict_repeats=depth
            )
            continue
        out[cid] = Sequential(
            baseline_repeats=depth,
            candidate_repeats=case.repeats,
            screen=screens[cid],
            verdict_repeats=case.repeats - case.start,
        )
    return out


def _summary(
    settings: RuleSettings,
    design: Design,
    pool: RunRecord,
    cases: list[CaseReport],
    spent: tuple[int, int, int],
    summaries: tuple[RuleSummary | None, RuleSummary | None],
) -> SequentialSummary:
    """The design, what it spent, and what a fixed design of the same power would have: exact
    power against `REFERENCE_CHANGE` at this check's thresholds and median depths."""
    confirmed, budget_stopped, taken = spent
    screen_summary, confirm_summary = summaries
    depth = round(pystats.median(c.repeats - c.start for c in pool.cases)) if pool.cases else 0
    summary = SequentialSummary(
        screen_alpha=round(settings.alpha * SCREEN_SHARE, 12),
        confirm_alpha=round(settings.alpha * (1 - SCREEN_SHARE), 12),
        max_repeats=design.max_repeats,
        max_calls=design.max_calls,
        max_cost=float(design.max_cost) if design.max_cost is not None else None,
        baseline_repeats=depth,
        screened=len(cases),
        confirmed=confirmed,
        budget_stopped=budget_stopped,
        calls=taken,
        confirm_rule_summary=confirm_summary,
    )
    screen_t = (screen_summary.thresholds or {}).get("regress") if screen_summary else None
    screens = [c.sequential.screen for c in cases if c.sequential and c.sequential.screen]
    if screen_t is None or not screens or depth < 1:
        return summary
    screen = round(pystats.median(screens))
    confirm_t = (confirm_summary.thresholds or {}).get("regress") if confirm_summary else None
    if confirm_t is None:
        confirm_t = screen_t * (1 - SCREEN_SHARE) / SCREEN_SHARE
    p_b, p_c = REFERENCE_CHANGE
    cap = max(design.max_repeats, screen)
    power = stats.sequential_power(depth, screen, cap, p_b, p_c, screen_t, confirm_t)
    summary.reference = f"{p_b:.1f} -> {p_c:.1f}"
    summary.power = round(power, 4)
    if depth < design.baseline_repeats:
        deeper = stats.sequential_power(
            design.baseline_repeats, screen, cap, p_b, p_c, screen_t, confirm_t
        )
        summary.deeper_power = round(deeper, 4)
    # a fixed design "as strong" as a weak one says nothing: compare where the design works
    if power >= 0.5:
        fixed = stats.repeats_needed(p_b, p_c, screen_t / SCREEN_SHARE, power, n_baseline=depth)
        if fixed is not None:
            summary.fixed_repeats = fixed
            summary.fixed_calls = fixed * len(cases)
    return summary


def _shallow(summary: SequentialSummary, design: Design) -> list[str]:
    """A warning when the baseline holds fewer repeats than the design counts on."""
    if summary.deeper_power is None or summary.power is None:
        return []
    return [
        f"the baseline holds {summary.baseline_repeats} repeats per case (median): "
        f"`noisefloor baseline deepen` on the baseline's code tops it up to "
        f"{design.baseline_repeats}, and a {summary.reference} drop is then flagged in "
        f"{100 * summary.deeper_power:.0f}% of checks instead of {100 * summary.power:.0f}%"
    ]
