"""A sequential check: look at every case against the deep baseline at growing candidate repeats,
stop each as soon as a look decides it or leaves no worsening plausible, within the per-case cap
and the check's budget, and report what it spent and what a fixed design would have.
"""

from __future__ import annotations

import statistics as pystats
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from noisefloor import stats
from noisefloor.comparison import comparison_parts, run_summary
from noisefloor.errors import UsageError
from noisefloor.pool import against_pool
from noisefloor.records import CaseRecord, RunRecord
from noisefloor.report.model import (
    CaseReport,
    LookSummary,
    ReportSettings,
    RuleSummary,
    Runs,
    Sequential,
    SequentialSummary,
    Work,
)
from noisefloor.sequential import Design, Stop, doubt_order, doubt_p, settle, step
from noisefloor.settings import REFERENCE_CHANGE, RuleSettings
from noisefloor.store import Store
from noisefloor.verdict import suite_summary

__all__ = ["Budget", "Sampler", "sequential_check"]


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


class Budget:
    """What a check may still spend: the one place that decides whether a look's samples fit.

    Samples already on disk cost nothing, so a rerun's budget goes to what it has not taken.
    """

    def __init__(self, max_calls: int | None) -> None:
        self.max_calls = max_calls

    def require(self, sampler: Sampler, cases: list[CaseRecord]) -> None:
        """Refuse, before any call, a budget below the first look."""
        if self.max_calls is None:
            return
        need = sampler.missing(cases)
        if need > self.max_calls:
            raise UsageError(
                f"--max-calls {self.max_calls} is below the first look's {need} samples "
                f"({len(cases)} cases)",
                hint="raise --max-calls, or look first at fewer repeats (the suite's `repeats`)",
            )

    def fitting(self, sampler: Sampler, wanted: list[CaseRecord]) -> list[CaseRecord]:
        """The cases of `wanted` (most doubtful first) whose next look fits in what is left,
        served in order; the others wait for a larger budget."""
        if self.max_calls is None:
            return wanted
        left = self.max_calls - sampler.taken
        out = []
        for case in wanted:
            need = sampler.missing([case])
            if need <= left:
                left -= need
                out.append(case)
        return out

    def advice(self) -> str:
        return (
            f"--max-calls {self.max_calls} ran out before its next look: rerun with a larger "
            "budget (samples taken are kept)"
        )


def _first_looks(sampler: Sampler, settings: RuleSettings) -> list[CaseRecord]:
    # a first look below min_valid could judge nothing
    return [
        c
        if c.repeats >= c.first_repeat + settings.min_valid
        else c.model_copy(update={"repeats": c.first_repeat + settings.min_valid})
        for c in sampler.cases()
    ]


def sequential_check(
    store: Store,
    sampler: Sampler,
    settings: RuleSettings,
    pool_of: Callable[[], RunRecord],
    design: Design,
    *,
    allow_target_change: bool = False,
) -> tuple[dict[str, Any], RunRecord]:
    """Sample and judge look by look; return the report's parts and the candidate's run saved.

    `pool_of()` gives the deep baseline as it stands once a look's samples are written (a check
    of the baseline's own version adds to it, an A/B's baseline arm grows with the candidate).
    Call it holding the suite's lock.
    """
    windows = {c.case_id: c for c in _first_looks(sampler, settings)}
    budget = Budget(design.max_calls)
    budget.require(sampler, list(windows.values()))
    sizes = design.schedule(min(c.repeats - c.first_repeat for c in windows.values()))
    shares = stats.spending(sizes, design.rho)
    running = list(windows)
    final: dict[str, CaseReport] = {}
    stops: dict[str, Stop] = {}
    why: dict[str, str] = {}
    looked: dict[str, list[int]] = {cid: [] for cid in windows}
    looks: list[LookSummary] = []
    executed: Counter[str] = Counter()
    up_to_date: Counter[str] = Counter()
    parts: dict[str, Any] = {}
    first_summary: RuleSummary | None = None
    for j, size in enumerate(sizes):
        if j:
            wanted = [
                windows[cid].model_copy(
                    update={"repeats": max(windows[cid].repeats, windows[cid].first_repeat + size)}
                )
                for cid in doubt_order([final[cid] for cid in running])
            ]
            fits = {c.case_id: c for c in budget.fitting(sampler, wanted)}
            for cid in [cid for cid in running if cid not in fits]:
                stops[cid], why[cid] = Stop.BUDGET, budget.advice()
                running.remove(cid)
            windows.update(fits)
            if not running:
                break
        sampler.take([windows[cid] for cid in running])
        pool = pool_of()
        if j == 0:
            pool_dirs = {c.case_id: c.sample_dir for c in pool.cases}
            for cid in [cid for cid in running if pool_dirs.get(cid) == windows[cid].sample_dir]:
                stops[cid], why[cid] = Stop.SAME, "the baseline's own version and input"
                running.remove(cid)
        look_settings = design.look(settings, shares[j])
        parts = comparison_parts(
            store,
            pool,
            against_pool(pool, sampler.record(list(windows.values()))),
            look_settings,
            allow_target_change=allow_target_change,
        )
        executed.update(parts["work"].executed)
        up_to_date.update(parts["work"].up_to_date)
        summary: RuleSummary = parts["rule_summary"]
        first_summary = first_summary or summary
        futility = design.futility_at(j, len(sizes))
        looks.append(
            LookSummary(
                repeats=size,
                alpha=round(look_settings.alpha, 12),
                threshold=(summary.thresholds or {}).get("regress"),
                futility=futility,
                cases=len(running),
            )
        )
        for case in parts["cases"]:
            cid = case.case_id
            if cid not in running and cid in final:
                continue  # stopped earlier: its table counted in the family, its verdict stands
            final[cid] = case
            if cid not in running:
                continue
            looked[cid].append(windows[cid].repeats - windows[cid].first_repeat)
            stop = step(case, futility)
            if stop is not None:
                stops[cid], why[cid] = stop, _why(stop, case, size, futility)
                running.remove(cid)
        if not running:
            break
    for cid in running:  # not reached when the schedule ends: every case stops at the cap
        stops[cid] = Stop.CAP
    order = [c.case_id for c in sampler.cases()]
    run = sampler.finish([windows[cid] for cid in order])
    pool = pool_of()
    depth = _depth(pool)
    shallow = depth < design.baseline_repeats
    cases = []
    for cid in order:
        stop = stops[cid]
        advice = budget.advice() if stop is Stop.BUDGET else _cap_advice(shallow, depth, design)
        case = settle(final[cid], stop, advice)
        cases.append(
            case.model_copy(
                update={
                    "sequential": _evidence(pool, windows[cid], stop, why.get(cid, ""), looked[cid])
                }
            )
        )
    shown_run = against_pool(pool, run)
    parts = {
        **parts,
        "candidate": run.run_id,
        "cases": cases,
        "rule_summary": first_summary,
        "work": Work(executed=dict(executed), up_to_date=dict(up_to_date)),
        "settings": ReportSettings.model_validate(settings.config()),
        "suite_summary": suite_summary(cases, settings),
        "runs": Runs(
            baseline=run_summary(pool, store), candidate=run_summary(shown_run, store, run)
        ),
    }
    seq = _summary(design, depth, cases, looks, sampler.taken, first_summary, settings)
    parts["sequential"] = seq
    parts["warnings"] = [*parts["warnings"], *_shallow(seq)]
    return parts, run


def _why(stop: Stop, case: CaseReport, size: int, futility: float | None) -> str:
    if stop is Stop.CLEAR:
        return f"no worsening left plausible after {size} repeats (p={doubt_p(case):.3g} > {futility:g})"
    if stop is Stop.CAP:
        return f"the cap: {size} repeats"
    return f"decided at the look of {size} repeats"


def _cap_advice(shallow: bool, depth: int, design: Design) -> str:
    if shallow:
        return (
            f"the baseline holds {depth} repeats per case: `noisefloor baseline deepen` tops it "
            f"up to {design.baseline_repeats} and narrows the interval"
        )
    return "raise --max-repeats to narrow it"


def _depth(pool: RunRecord) -> int:
    return round(pystats.median(c.repeats - c.start for c in pool.cases)) if pool.cases else 0


def _evidence(
    pool: RunRecord, window: CaseRecord, stop: Stop, why: str, looked: list[int]
) -> Sequential:
    """A case's repeats: one of the baseline's own version rests on the pool alone."""
    held = {c.case_id: c.repeats - c.start for c in pool.cases}
    depth = held.get(window.case_id, 0)
    if stop is Stop.SAME:
        return Sequential(
            baseline_repeats=depth,
            candidate_repeats=depth,
            screen=0,
            verdict_repeats=depth,
            stopped=stop.value,
            why=why,
        )
    taken = window.repeats - window.start
    return Sequential(
        baseline_repeats=depth,
        candidate_repeats=taken,
        screen=looked[0] if looked else taken,
        verdict_repeats=taken,
        looks=looked,
        stopped=stop.value,
        why=why,
    )


def _summary(
    design: Design,
    depth: int,
    cases: list[CaseReport],
    looks: list[LookSummary],
    taken: int,
    first: RuleSummary | None,
    settings: RuleSettings,
) -> SequentialSummary:
    """The design, what it spent, and what a fixed design of the same power would have: exact
    power against `REFERENCE_CHANGE` at this check's first-look K and this baseline's depth."""
    stopped = Counter(c.sequential.stopped for c in cases if c.sequential is not None)
    summary = SequentialSummary(
        looks=looks,
        max_repeats=design.max_repeats,
        max_calls=design.max_calls,
        baseline_repeats=depth,
        design_baseline_repeats=design.baseline_repeats,
        screened=len(cases),
        budget_stopped=stopped.get(Stop.BUDGET.value, 0),
        calls=taken,
        stops=dict(sorted(stopped.items())),
    )
    k = (first.K or {}).get("regress") if first is not None else None
    if k is None or depth < 1 or not looks:
        return summary
    sizes = design.schedule(looks[0].repeats)
    shares = stats.spending(sizes, design.rho)
    p_b, p_c = REFERENCE_CHANGE
    summary.reference = f"{p_b:.1f} -> {p_c:.1f}"
    power = _power(design, sizes, shares, k, depth, settings)
    summary.power = round(power, 4)
    if depth < design.baseline_repeats:
        deeper = _power(design, sizes, shares, k, design.baseline_repeats, settings)
        summary.deeper_power = round(deeper, 4)
    # a fixed design "as strong" as a weak one says nothing: compare where the design works
    if power >= 0.5:
        fixed = stats.repeats_needed(p_b, p_c, settings.alpha / k, power, n_baseline=depth)
        if fixed is not None:
            summary.fixed_repeats = fixed
            summary.fixed_calls = fixed * len(cases)
    return summary


def _power(
    design: Design,
    sizes: list[int],
    shares: list[float],
    k: int,
    depth: int,
    settings: RuleSettings,
) -> float:
    looks = stats.Looks(
        sizes=tuple(sizes),
        thresholds=tuple(settings.alpha * s / k for s in shares),
        futility=tuple(
            f for j in range(len(sizes)) if (f := design.futility_at(j, len(sizes))) is not None
        ),
        suspect_drop=settings.suspect_drop,
        min_effect=settings.scorer("").min_effect,
    )
    p_b, p_c = REFERENCE_CHANGE
    return stats.look_outcome(depth, looks, p_b, p_c)[0]


def _shallow(summary: SequentialSummary) -> list[str]:
    """A warning when the baseline holds fewer repeats than the design counts on."""
    if summary.deeper_power is None or summary.power is None:
        return []
    return [
        f"the baseline holds {summary.baseline_repeats} repeats per case (median): "
        f"`noisefloor baseline deepen` on the baseline's code tops it up to "
        f"{summary.design_baseline_repeats}, and a {summary.reference} drop is then flagged in "
        f"{100 * summary.deeper_power:.0f}% of checks instead of {100 * summary.power:.0f}%"
    ]
