"""The concurrent control: a case the deep baseline calls regressed or leaves in doubt is judged
against repeats of the baseline's own version taken beside its own, look by look, in this session.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

import orjson

from noisefloor import stats
from noisefloor.model.records import CaseRecord, DriftCheck, RunRecord
from noisefloor.model.report import CaseReport
from noisefloor.model.verdict import Verdict
from noisefloor.operations.baseline_version import baseline_version, probe_of, refusal
from noisefloor.operations.cost_budget import CostBudget
from noisefloor.operations.drift_spread import learned_drift
from noisefloor.operations.run import RunSession
from noisefloor.pipeline.comparison import comparison_parts
from noisefloor.rules.control import Windows, confirmed
from noisefloor.rules.drift import drift_check, drift_words
from noisefloor.rules.sequential import Stop, settle, step
from noisefloor.settings import CONTROL_LOOKS, FUTILITY, SPENDING_RHO, RuleSettings
from noisefloor.store.layout import has_sample, lost_to_infra
from noisefloor.store.pool import held_repeats
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.targets.source import BuiltTarget

__all__ = [
    "ConcurrentControl",
    "Taken",
    "control_verdicts",
    "controlled",
    "replayed",
    "stepped",
    "wants_control",
]


@dataclass
class Taken:
    """What a control took: each controlled case's windows, the candidate's cases grown by the
    repeats taken beside the control, per flagged case why no control was taken, and per case
    the looks left regressed whether drift could explain its drop."""

    windows: dict[str, Windows] = field(default_factory=dict)
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    why_not: dict[str, str] = field(default_factory=dict)
    drift: dict[str, DriftCheck] = field(default_factory=dict)


class ConcurrentControl:
    """The repeats of the baseline's own version a check takes for the cases its deep baseline
    calls regressed or leaves in doubt, look by look (`settings.CONTROL_LOOKS`), each beside as
    many fresh ones of the candidate's, interleaved in the check's own session; the fresh ones
    are judged against the control (`stepped`). A regressed case whose drop no drift the store
    has seen reaches takes none (`rules.drift`)."""

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
        cases: Mapping[str, CaseRecord],
        screened: Mapping[str, CaseReport],
        pool: RunRecord,
        settings: RuleSettings,
        record_of: Callable[[list[CaseRecord]], RunRecord],
        doubt: Collection[str] = (),
    ) -> Taken:
        """Take the controls of the cases the looks judged as `screened` (`doubt`: those of
        them the looks left inconclusive; `cases`: every case of the candidate as it stands)
        against the deep baseline `pool`, judging them at each look (`record_of` gives the
        candidate's run as it stands); a case without one keeps its deep verdict and says why."""
        taken = Taken()
        held = {c.case_id: c for c in pool.cases}
        opened: dict[str, tuple[CaseRecord, CaseRecord]] = {}
        refused = refusal(self.base, self.session.built)
        for cid in screened:
            case, base_case = cases[cid], held.get(cid)
            if base_case is None or base_case.case_key != case.case_key:
                taken.why_not[cid] = (
                    "its input changed since the baseline: the baseline's input is not run again"
                )
                continue
            if refused is not None:
                taken.why_not[cid] = refused
                continue
            end = held_repeats(self.store, base_case)
            opened[cid] = (base_case.model_copy(update={"first_repeat": end, "start": end}), case)
        self._beyond_drift(taken, opened, screened, pool, cases, doubt)
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
            silent = self._silent(version, opened)
            if silent is not None:
                taken.why_not.update((cid, silent) for cid in opened)
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

    def _beyond_drift(
        self,
        taken: Taken,
        opened: dict[str, tuple[CaseRecord, CaseRecord]],
        screened: Mapping[str, CaseReport],
        pool: RunRecord,
        cases: Mapping[str, CaseRecord],
        doubt: Collection[str],
    ) -> None:
        """Test the drop of each regressed case against the drift the store has seen of the
        baseline's version (`taken.drift`), and take out of `opened` each one that no such
        drift reaches: it needs no control."""
        regressed = [cid for cid in opened if cid not in doubt]
        if not regressed:
            return
        allowance = learned_drift(
            self.store, self.base, pool, {cid: c.scorers for cid, c in cases.items()}
        )
        for cid in regressed:
            check = drift_check(
                screened[cid],
                allowance.spreads.get(cid, {}),
                allowance.concentration.get(cid, {}),
                allowance.prior,
            )
            if check is None:
                continue
            taken.drift[cid] = check
            if check.beyond:
                taken.why_not[cid] = (
                    f"none needed: {drift_words(check)}, so no drift this store has seen of the "
                    "baseline's version reaches the drop"
                )
                del opened[cid]

    def _silent(
        self, version: BuiltTarget, opened: Mapping[str, tuple[CaseRecord, CaseRecord]]
    ) -> str | None:
        """Why the baseline's version cannot be leaned on: an endpoint rebuilt from the
        baseline's settings that does not answer its first call, made once with no retry
        (that call is the control's first repeat); None when it answers or needs no probe."""
        if version is self.session.built:
            return None
        probe = probe_of(self.suite, self.base, self.store)
        if probe is None:
            return None
        built, where = probe
        control, _ = next(iter(opened.values()))
        first = control.model_copy(update={"repeats": control.start + 1})
        self.session.take_beside([], built, [first])
        (path,) = self.store.sample_files(first)
        if has_sample(path) and not lost_to_infra(path):
            return None
        said = _error_of(path)
        return f"the baseline's endpoint {where} did not answer{': ' + said if said else ''}"

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
            record.drift.get(c.case_id),
        )
        if c.case_id in flagged
        else c
        for c in cases
    ]


def _error_of(path: str) -> str:
    """The error a sample file holds, "" when it holds none or does not read."""
    try:
        with open(path, "rb") as handle:
            error = orjson.loads(handle.read()).get("error")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return ""
    return error if isinstance(error, str) else ""
