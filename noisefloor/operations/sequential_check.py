"""A sequential check: look at every case against the deep baseline at growing candidate repeats,
stop each as soon as a look decides it or leaves no worsening plausible, within the per-case cap
and the check's budget, and report what it spent and what a fixed design would have.
"""

from __future__ import annotations

import statistics as pystats
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from noisefloor import stats
from noisefloor.errors import UsageError
from noisefloor.model.records import CaseRecord, JudgedLook, RunRecord, SequentialRecord
from noisefloor.model.report import (
    CaseReport,
    LookSummary,
    ReportSettings,
    RuleSummary,
    Runs,
    Sequential,
    Work,
)
from noisefloor.model.summary import suite_summary
from noisefloor.operations.concurrent_control import (
    ConcurrentControl,
    Taken,
    controlled,
    wants_control,
)
from noisefloor.operations.cost_budget import CostBudget
from noisefloor.operations.run import bands_of
from noisefloor.operations.sequential_summary import shallow_warning, spent
from noisefloor.pipeline.comparison import comparison_parts, run_summary
from noisefloor.rules.sequential import Stop, doubt_order, doubt_p, settle, step
from noisefloor.settings import CONTROL_LOOKS, RuleSettings
from noisefloor.settings.design import Design
from noisefloor.store.pool import against_pool
from noisefloor.store.store import Store

__all__ = ["Budget", "Sampler", "rejudge", "sequential_check"]


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

    def __init__(self, max_calls: int | None, cost: CostBudget | None = None) -> None:
        self.max_calls = max_calls
        self.cost = cost
        """`--max-cost`: each look's samples priced before they are taken."""

    def require(self, sampler: Sampler, cases: list[CaseRecord]) -> None:
        """Refuse, before any call, a budget below the first look."""
        if self.cost is not None:
            self.cost.check_first_look((c.case_id, sampler.missing([c])) for c in cases)
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
        if self.max_calls is None and self.cost is None:
            return wanted
        left = self.max_calls - sampler.taken if self.max_calls is not None else None
        money = self.cost.left() if self.cost is not None else None
        out = []
        for case in wanted:
            need = sampler.missing([case])
            if left is not None and need > left:
                continue
            price = self.cost.cost_of(case.case_id, need) if self.cost is not None else None
            if money is not None and price is not None:
                if price > money:
                    continue
                money -= price
            if left is not None:
                left -= need
            out.append(case)
        return out

    def advice(self) -> str:
        given = [f"--max-calls {self.max_calls}"] if self.max_calls is not None else []
        if self.cost is not None:
            given.append(f"--max-cost {self.cost.max_cost}")
        return (
            f"{' or '.join(given)} ran out before its next look: rerun with a larger "
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
    cost: CostBudget | None = None,
    control: ConcurrentControl | None = None,
) -> tuple[dict[str, Any], RunRecord]:
    """Sample and judge look by look; return the report's parts and the candidate's run saved,
    which keeps the looks it was judged by (`rejudge` judges it again by them).

    `control`: after the last look, each case the deep baseline called regressed takes its
    concurrent control, and is regressed only when worse than that too (an A/B, whose baseline
    arm is sampled beside the candidate already, passes none).

    `pool_of()` gives the deep baseline as it stands once a look's samples are written (a check
    of the baseline's own version adds to it, an A/B's baseline arm grows with the candidate).
    Call it holding the suite's lock. `cost` (`--max-cost`) is spent as `design.max_calls` is.
    """
    windows = {c.case_id: c for c in _first_looks(sampler, settings)}
    budget = Budget(design.max_calls, cost)
    budget.require(sampler, list(windows.values()))
    sizes = design.schedule(min(c.repeats - c.first_repeat for c in windows.values()))
    shares = stats.spending(sizes, design.rho)
    running = list(windows)
    final: dict[str, CaseReport] = {}
    stops: dict[str, Stop] = {}
    why: dict[str, str] = {}
    last_look: dict[str, int] = {}
    judged: list[JudgedLook] = []
    looks: list[LookSummary] = []
    work: list[Work] = []
    parts: dict[str, Any] = {}
    first: RuleSummary | None = None
    pool: RunRecord | None = None
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
                last_look[cid] = 0
                running.remove(cid)
        cand = against_pool(pool, sampler.record(list(windows.values())))
        judged.append(_judged_look(shares[j], pool, cand))
        look_settings = design.look(settings, shares[j])
        parts = comparison_parts(
            store, pool, cand, look_settings, allow_target_change=allow_target_change
        )
        work.append(parts["work"])
        summary: RuleSummary = parts["rule_summary"]
        first = first or summary
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
            if cid in running or cid not in final:
                final[cid] = case
            if cid not in running:
                continue  # stopped earlier: its table counted in the family, its verdict stands
            last_look[cid] = j
            stop = step(case, futility)
            if stop is not None:
                own = windows[cid].repeats - windows[cid].first_repeat
                stops[cid], why[cid] = stop, _why(stop, case, size, own, futility)
                running.remove(cid)
        if not running:
            break
    assert pool is not None and not running, "the last look stops every case"
    order = [c.case_id for c in sampler.cases()]
    control_taken = Taken()
    if control is not None:
        flagged = {cid: final[cid] for cid in order if wants_control(stops[cid], final[cid])}
        if flagged:
            doubt = {cid for cid in flagged if stops[cid] is Stop.CAP}
            control_taken = control.take(windows, flagged, pool, settings, sampler.record, doubt)
            windows.update(control_taken.cases)
            # a case grown beside its control rests on repeats no look scored as a whole: scored
            # now, so that the ledger reads a status for each of them
            bands_of(store, pool.suite, list(control_taken.cases.values()))
    run = sampler.finish([windows[cid] for cid in order])
    pool = pool_of()
    depth = _depth(pool)
    advice = {
        cid: budget.advice() if stop is Stop.BUDGET else _cap_advice(depth, design)
        for cid, stop in stops.items()
        if stop in (Stop.CAP, Stop.BUDGET)
    }
    record = SequentialRecord(
        baseline=pool.run_id,
        looks=judged,
        last_look=last_look,
        stops={cid: stop.value for cid, stop in stops.items()},
        why=why,
        advice=advice,
        controls=control_taken.windows,
        control_looks=list(CONTROL_LOOKS) if control_taken.windows else [],
        uncontrolled=control_taken.why_not,
        drift=control_taken.drift,
    )
    run = run.model_copy(update={"sequential": record})
    store.save_run(run)
    cases = controlled(store, pool, run, _settled(record, final, order), settings)
    parts = _parts(parts, store, pool, run, cases, work, settings)
    parts["rule_summary"] = first
    seq = spent(design, depth, cases, looks, sampler.taken, first, settings)
    parts["sequential"] = seq
    parts["warnings"] = [*parts["warnings"], *shallow_warning(seq)]
    return parts, run


def rejudge(
    store: Store,
    base: RunRecord,
    cand: RunRecord,
    settings: RuleSettings,
    *,
    allow_target_change: bool = False,
) -> dict[str, Any]:
    """The report's parts of a run a sequential check took, judged again by its own looks: the
    same windows of both sides at each look, the same shares of alpha, each case's verdict from
    the look it stopped at. Calls no target; `settings` are the command's (the same flags give
    the check's verdicts)."""
    record = cand.sequential
    assert record is not None, "only a sequential check's run is judged again by its looks"
    final: dict[str, CaseReport] = {}
    work: list[Work] = []
    parts: dict[str, Any] = {}
    first: RuleSummary | None = None
    for j, look in enumerate(record.looks):
        pool, run = _at_look(base, look, baseline=True), _at_look(cand, look, baseline=False)
        look_settings = replace(settings, alpha=settings.alpha * look.alpha_share)
        parts = comparison_parts(
            store, pool, run, look_settings, allow_target_change=allow_target_change
        )
        work.append(parts["work"])
        first = first or parts["rule_summary"]
        for case in parts["cases"]:
            if record.last_look.get(case.case_id) == j:
                final[case.case_id] = case
    order = [c.case_id for c in cand.cases]
    pool = _at_look(base, record.looks[-1], baseline=True)
    cases = controlled(store, base, cand, _settled(record, final, order), settings)
    parts = _parts(parts, store, pool, cand, cases, work, settings)
    parts["rule_summary"] = first
    return parts


def _why(stop: Stop, case: CaseReport, size: int, taken: int, futility: float | None) -> str:
    """Why a case stopped at the look of `size` repeats, having taken `taken` of its own (a case
    whose first look was its own depth takes more or fewer than the look's size)."""
    if stop is Stop.CLEAR:
        return (
            f"no worsening left plausible after {taken} repeats "
            f"(p={doubt_p(case):.3g} > {futility:g})"
        )
    if stop is Stop.CAP:
        return f"the cap: {taken} repeats"
    if stop is Stop.UNMEASURED:
        return f"no repeat of the look of {size} reached the target"
    return f"decided at the look of {size} repeats"


def _cap_advice(depth: int, design: Design) -> str:
    if depth < design.baseline_repeats:
        return (
            f"the baseline holds {depth} repeats per case: `noisefloor baseline deepen` tops it "
            f"up to {design.baseline_repeats} and narrows the interval"
        )
    return "raise --max-repeats to narrow it"


def _depth(pool: RunRecord) -> int:
    return round(pystats.median(c.repeats - c.start for c in pool.cases)) if pool.cases else 0


def _judged_look(share: float, pool: RunRecord, cand: RunRecord) -> JudgedLook:
    """A look as the run keeps it: every case's windows on both sides."""
    base = {c.case_id: (c.start, c.repeats) for c in pool.cases}
    return JudgedLook(
        alpha_share=share,
        windows={c.case_id: (c.start, c.repeats, *base.get(c.case_id, (0, 0))) for c in cand.cases},
    )


def _at_look(run: RunRecord, look: JudgedLook, *, baseline: bool) -> RunRecord:
    """One side of a kept look: its cases at the windows the look judged."""
    at = 2 if baseline else 0
    cases = []
    for case in run.cases:
        window = look.windows.get(case.case_id)
        if window is not None and (window[at], window[at + 1]) != (0, 0):
            case = case.model_copy(update={"start": window[at], "repeats": window[at + 1]})
        cases.append(case)
    return run.model_copy(update={"cases": cases})


def _settled(
    record: SequentialRecord, final: dict[str, CaseReport], order: list[str]
) -> list[CaseReport]:
    """Each case's verdict from the look it stopped at, settled at the cap or the budget, with
    what it rests on and why it stopped."""
    out = []
    for cid in order:
        stop = Stop(record.stops[cid])
        case = settle(final[cid], stop, record.advice.get(cid, ""))
        last = record.last_look[cid]
        windows = [look.windows[cid] for look in record.looks[: last + 1]]
        out.append(
            case.model_copy(
                update={"sequential": _evidence(windows, stop, record.why.get(cid, ""))}
            )
        )
    return out


def _evidence(windows: list[tuple[int, int, int, int]], stop: Stop, why: str) -> Sequential:
    """A case's repeats at each look it took part in: one of the baseline's own version rests on
    the pool alone."""
    c_start, c_end, b_start, b_end = windows[-1]
    depth = b_end - b_start
    if stop is Stop.SAME:
        return Sequential(
            baseline_repeats=depth,
            candidate_repeats=depth,
            screen=0,
            verdict_repeats=depth,
            stopped=stop.value,
            why=why,
        )
    looked = [end - start for start, end, _, _ in windows]
    return Sequential(
        baseline_repeats=depth,
        candidate_repeats=c_end - c_start,
        screen=looked[0],
        verdict_repeats=c_end - c_start,
        looks=looked,
        stopped=stop.value,
        why=why,
    )


def _parts(
    last: dict[str, Any],
    store: Store,
    pool: RunRecord,
    run: RunRecord,
    cases: list[CaseReport],
    work: list[Work],
    settings: RuleSettings,
) -> dict[str, Any]:
    """The report's parts: the last look's, with every case's settled verdict and both sides as
    the verdicts rest on them."""
    executed: Counter[str] = Counter()
    up_to_date: Counter[str] = Counter()
    for w in work:
        executed.update(w.executed)
        up_to_date.update(w.up_to_date)
    return {
        **last,
        "candidate": run.run_id,
        "cases": cases,
        "work": Work(executed=dict(executed), up_to_date=dict(up_to_date)),
        "settings": ReportSettings.model_validate(settings.config()),
        "suite_summary": suite_summary(cases, settings),
        "runs": Runs(
            baseline=run_summary(pool, store),
            candidate=run_summary(against_pool(pool, run), store, run),
        ),
    }
