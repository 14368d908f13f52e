"""The concurrent control: a case the deep baseline calls regressed or leaves in doubt is judged
against repeats of the baseline's own version taken beside its own, look by look, in this session.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from noisefloor import stats
from noisefloor.model.parts import Side
from noisefloor.model.records import CaseRecord, RunRecord
from noisefloor.model.report import CaseReport, Control
from noisefloor.model.verdict import Verdict
from noisefloor.operations.baseline_version import baseline_version
from noisefloor.operations.cost_budget import CostBudget
from noisefloor.operations.run import RunSession
from noisefloor.pipeline.comparison import comparison_parts
from noisefloor.rules.sequential import Stop, settle, step
from noisefloor.settings import CONTROL_LOOKS, FUTILITY, SPENDING_RHO, RuleSettings
from noisefloor.store.pool import held_repeats
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite

__all__ = [
    "ConcurrentControl",
    "Taken",
    "confirmed",
    "control_verdicts",
    "controlled",
    "replayed",
    "stepped",
    "wants_control",
]

#: A case's control windows as a run keeps them: candidate start and end, control start and end.
Windows = tuple[int, int, int, int]


@dataclass
class Taken:
    """What a control took: each controlled case's windows, the candidate's cases grown by the
    repeats taken beside the control, and, per flagged case, why no control was taken."""

    windows: dict[str, Windows] = field(default_factory=dict)
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    why_not: dict[str, str] = field(default_factory=dict)


class ConcurrentControl:
    """The repeats of the baseline's own version a check takes for the cases its deep baseline
    calls regressed or leaves in doubt, look by look (`settings.CONTROL_LOOKS`), each beside as
    many fresh ones of the candidate's, interleaved in the check's own session; the fresh ones
    are judged against the control (`stepped`)."""

    def __init__(
        self,
        store: Store,
        suite: Suite,
        base: RunRecord,
        session: RunSession,
        max_calls: int | None,
        cost: CostBudget | None = None,
    ) -> None:
        self.store, self.suite, self.base, self.session = store, suite, base, session
        self.max_calls = max_calls
        self.cost = cost
        """`--max-cost`: a control's calls are priced as the candidate's (the same endpoint)."""

    def take(
        self,
        flagged: Mapping[str, CaseRecord],
        pool: RunRecord,
        settings: RuleSettings,
        record_of: Callable[[list[CaseRecord]], RunRecord],
        doubt: Collection[str] = (),
    ) -> Taken:
        """Take the controls of the candidate's `flagged` cases (`doubt`: those of them the
        looks left inconclusive) against the deep baseline `pool`, judging them at each look
        (`record_of` gives the candidate's run as it stands); a case without one keeps its deep
        verdict and says why."""
        taken = Taken()
        held = {c.case_id: c for c in pool.cases}
        opened: dict[str, tuple[CaseRecord, CaseRecord]] = {}
        for cid, case in flagged.items():
            base_case = held.get(cid)
            if base_case is None or base_case.case_key != case.case_key:
                taken.why_not[cid] = (
                    "its input changed since the baseline: the baseline's input is not run again"
                )
                continue
            end = held_repeats(self.store, base_case)
            opened[cid] = (base_case.model_copy(update={"first_repeat": end, "start": end}), case)
        short = self._short(opened)
        if short is not None:
            taken.why_not.update((cid, short) for cid in opened)
            opened = {}
        if not opened:
            return taken
        with baseline_version(self.store, self.suite, self.base, self.session.built) as version:
            if isinstance(version, str):
                taken.why_not.update((cid, version) for cid in opened)
                return taken

            def look(running: list[str], size: int) -> dict[str, Windows]:
                grown = {cid: _grown(*opened[cid], size) for cid in running}
                self.session.take_beside(
                    [case for _, case in grown.values()],
                    version,
                    [control for control, _ in grown.values()],
                )
                taken.cases.update((cid, case) for cid, (_, case) in grown.items())
                return {cid: _windows(*grown[cid]) for cid in running}

            def judge(windows: Mapping[str, Windows], share: float) -> dict[str, CaseReport]:
                cand = record_of(list(taken.cases.values()))
                at = replace(settings, alpha=settings.alpha * share)
                return control_verdicts(self.store, pool, cand, windows, at)

            taken.windows = stepped(list(opened), look, judge, CONTROL_LOOKS, doubt)
        return taken

    def _short(self, opened: Mapping[str, tuple[CaseRecord, CaseRecord]]) -> str | None:
        """Why the budgets leave no room for every look of these controls, or None."""
        need = 2 * CONTROL_LOOKS[-1] * len(opened)
        if self.max_calls is not None and self.session.taken + need > self.max_calls:
            return f"--max-calls {self.max_calls} leaves no room for its {need} calls"
        if self.cost is not None:
            price = sum(
                (self.cost.cost_of(cid, 2 * CONTROL_LOOKS[-1]) for cid in opened), Decimal(0)
            )
            if price > self.cost.left():
                return f"--max-cost {self.cost.max_cost} leaves no room for its {need} calls"
        return None


def _grown(control: CaseRecord, case: CaseRecord, size: int) -> tuple[CaseRecord, CaseRecord]:
    """A control of `size` repeats past the baseline's held ones, and the candidate's case grown
    by as many fresh repeats past those its looks took."""
    return (
        control.model_copy(update={"repeats": control.start + size}),
        case.model_copy(update={"repeats": case.repeats + size}),
    )


def _windows(control: CaseRecord, grown: CaseRecord) -> Windows:
    """The windows a run keeps of a control and the candidate's repeats beside it: only those
    are judged against it. The repeats that made the deep baseline call the case regressed
    were picked for looking bad, and judged again they would call drift a regression too often."""
    size = control.repeats - control.start
    return (grown.repeats - size, grown.repeats, control.start, control.repeats)


def stepped(
    cases: list[str],
    look: Callable[[list[str], int], Mapping[str, Windows]],
    judge: Callable[[Mapping[str, Windows], float], Mapping[str, CaseReport]],
    sizes: Sequence[int] = CONTROL_LOOKS,
    doubt: Collection[str] = (),
) -> dict[str, Windows]:
    """The controls' looks: at each of `sizes`, `look(running, size)` takes the running cases'
    windows to that size, and `judge(windows, share)` judges every controlled case (the stopped
    ones at the windows they stopped with: one family) at the look's share of alpha; a case
    stops at the first look that calls it regressed, or at the last. A case in `doubt` (the
    looks left it inconclusive, not regressed) also stops where the check's futility bound
    would stop it: a control that shows no drop worth more repeats. Returns the windows each
    stopped with."""
    shares = stats.spending(sizes, SPENDING_RHO)
    windows: dict[str, Windows] = {}
    running = list(cases)
    for j, size in enumerate(sizes):
        windows.update(look(running, size))
        verdicts = judge(windows, shares[j])
        if j == len(sizes) - 1:
            break
        futility = FUTILITY[min(j, len(FUTILITY) - 1)]
        running = [
            cid
            for cid in running
            if verdicts[cid].verdict is not Verdict.REGRESSED
            and not (cid in doubt and step(verdicts[cid], futility) is not None)
        ]
        if not running:
            break
    return windows


def control_verdicts(
    store: Store,
    base: RunRecord,
    cand: RunRecord,
    windows: Mapping[str, Windows],
    settings: RuleSettings,
) -> dict[str, CaseReport]:
    """Each controlled case judged against its control: the candidate's repeats taken beside
    it against the baseline version's, the controlled cases one family."""
    if not windows:
        return {}

    def at(run: RunRecord, first: int) -> RunRecord:
        cases = [
            c.model_copy(
                update={
                    "start": windows[c.case_id][first],
                    "repeats": windows[c.case_id][first + 1],
                }
            )
            for c in run.cases
            if c.case_id in windows
        ]
        return run.model_copy(update={"cases": cases})

    parts = comparison_parts(store, at(base, 2), at(cand, 0), settings, allow_target_change=True)
    return {case.case_id: case for case in parts["cases"]}


def replayed(
    store: Store,
    base: RunRecord,
    cand: RunRecord,
    windows: Mapping[str, Windows],
    looks: Sequence[int],
    settings: RuleSettings,
    doubt: Collection[str] = (),
) -> dict[str, CaseReport]:
    """The controls judged again by the looks they were taken with (`looks`; none: one look
    at each control's own repeats), `doubt` the cases the looks left inconclusive: each case's
    verdict from the look it stopped at."""
    if not looks:
        return control_verdicts(store, base, cand, windows, settings)
    verdicts: dict[str, CaseReport] = {}

    def look(running: list[str], size: int) -> dict[str, Windows]:
        return {cid: _cut(windows[cid], size) for cid in running}

    def judge(at: Mapping[str, Windows], share: float) -> Mapping[str, CaseReport]:
        judged = control_verdicts(
            store, base, cand, at, replace(settings, alpha=settings.alpha * share)
        )
        verdicts.update(
            (cid, judged[cid]) for cid, w in at.items() if cid not in verdicts and w == windows[cid]
        )
        return judged

    stepped(list(windows), look, judge, looks, doubt)
    return verdicts


def _cut(windows: Windows, size: int) -> Windows:
    """A control's windows as they stood at a look of `size` repeats."""
    c_start, c_end, b_start, b_end = windows
    size = min(size, b_end - b_start)
    return (c_start, c_start + size, b_start, b_start + size)


def wants_control(stop: Stop, case: CaseReport) -> bool:
    """Whether a case the looks stopped takes a concurrent control: the deep baseline called it
    regressed, or it reached the cap in doubt (inconclusive once settled there)."""
    if stop is Stop.DECIDED:
        return case.verdict is Verdict.REGRESSED
    return stop is Stop.CAP and settle(case, stop, "").verdict is Verdict.INCONCLUSIVE


def confirmed(
    screened: CaseReport,
    against: CaseReport | None,
    windows: Windows | None,
    why_not: str,
    min_valid: int,
) -> CaseReport:
    """A case the deep baseline called regressed or left in doubt, once its control is judged.
    A regressed one stays regressed when it is worse than the control too, else takes the
    verdict against the control, the deep baseline's evidence named as drift; one in doubt
    takes the verdict against the control, with the deep baseline's evidence beside it.
    Without a control, or with one that the infrastructure left under `min_valid` scored
    repeats on either side, the deep verdict stands and says why."""
    if against is None or windows is None:
        return _with(screened, Control(reason=f"no concurrent control: {why_not}"))
    short = [
        s.key for s in against.scorers if min(_scored(s.baseline), _scored(s.candidate)) < min_valid
    ]
    if short and against.verdict is not Verdict.REGRESSED:
        # a control that measured nothing must not clear a regression
        reason = (
            f"no concurrent control: too few of its repeats were scored ({', '.join(short)}: "
            f"fewer than min_valid {min_valid} on a side), so the deep verdict stands"
        )
        return _with(screened, Control(reason=reason))
    c_start, c_end, b_start, b_end = windows
    control = Control(
        repeats=b_end - b_start,
        candidate_repeats=c_end - c_start,
        verdict=against.verdict,
        reason=_against(against),
    )
    beside = f"the baseline's own version taken beside it in this check ({control.reason})"
    regressed = against.verdict is Verdict.REGRESSED
    if screened.verdict is Verdict.REGRESSED:
        if regressed:
            return _with(screened, control)
        moved = _drift(screened, against)
        reason = (
            f"worse than the deep baseline ({screened.reason}), but not than {beside}: "
            f"{moved + '; ' if moved else ''}the baseline's session sat off the rate this one "
            "sees (drift), not a regression"
        )
    elif regressed:
        reason = f"worse than {beside}; in doubt against the deep baseline ({screened.reason})"
    elif against.verdict is Verdict.INCONCLUSIVE:
        reason = f"in doubt against {beside} too; against the deep baseline: {screened.reason}"
    else:
        moved = _drift(screened, against)
        reason = (
            f"{against.verdict.value} against {beside}, where the deep baseline left it in doubt "
            f"({screened.reason}){': ' + moved if moved else ''}"
        )
    return _with(against.model_copy(update={"reason": reason}), control, screened)


def _drift(screened: CaseReport, against: CaseReport) -> str:
    """How far each pass rate the deep baseline holds sits from the control's, in words, or ""
    when none moved by 0.05 or more."""
    held = {s.key: s.baseline for s in screened.scorers}
    moved = []
    for s in against.scorers:
        deep = held.get(s.key)
        if deep is None or deep.k is None or not deep.n or s.baseline.k is None or not s.baseline.n:
            continue
        then, now = deep.k / deep.n, s.baseline.k / s.baseline.n
        if abs(then - now) >= 0.05:
            moved.append(
                f"{s.key} {then:.2f} in the deep baseline's sessions ({deep.k}/{deep.n}), "
                f"{now:.2f} in this check's ({s.baseline.k}/{s.baseline.n})"
            )
    return f"drift: {'; '.join(moved)}" if moved else ""


def _scored(side: Side) -> int:
    """Repeats a scorer scored on one side: its pass rate's n, or its values."""
    return side.n if side.n is not None else len(side.values or [])


def _against(case: CaseReport) -> str:
    """The candidate against its control in words: the rule's reason, then the counts on both
    sides of each pass rate the reason does not give."""
    counts = []
    for s in case.scorers:
        if s.baseline.k is None or s.candidate.k is None:
            continue
        change = f"{s.baseline.k}/{s.baseline.n} -> {s.candidate.k}/{s.candidate.n}"
        if change not in case.reason:
            p = s.evidence.p_regress
            counts.append(f"{s.key}: {change}" + (f" (p={p:.3g})" if p is not None else ""))
    return "; ".join([case.reason, *counts])


def _with(case: CaseReport, control: Control, screened: CaseReport | None = None) -> CaseReport:
    """`case` with the control in its sequential evidence (the screened case's, when `case` is
    the judgement against the control): the candidate's repeats then count those taken beside
    the control too, and a verdict against the control rests on those alone."""
    sequential = (screened or case).sequential
    if sequential is None:
        return case
    update: dict[str, object] = {"control": control}
    if control.candidate_repeats:
        update["candidate_repeats"] = sequential.candidate_repeats + control.candidate_repeats
        if screened is not None:
            update["verdict_repeats"] = control.candidate_repeats
    return case.model_copy(update={"sequential": sequential.model_copy(update=update)})


def controlled(
    store: Store, base: RunRecord, run: RunRecord, cases: list[CaseReport], settings: RuleSettings
) -> list[CaseReport]:
    """The settled cases, each one the deep baseline called regressed or left in doubt judged
    against its concurrent control as well (the run's record says which were, and why the others
    were not)."""
    record = run.sequential
    assert record is not None
    flagged = record.controls.keys() | record.uncontrolled.keys()
    if not flagged:
        return cases
    doubt = {cid for cid in record.controls if record.stops.get(cid) == Stop.CAP.value}
    against = replayed(store, base, run, record.controls, record.control_looks, settings, doubt)
    return [
        confirmed(
            c,
            against.get(c.case_id),
            record.controls.get(c.case_id),
            record.uncontrolled.get(c.case_id, ""),
            settings.min_valid,
        )
        if c.case_id in flagged
        else c
        for c in cases
    ]
