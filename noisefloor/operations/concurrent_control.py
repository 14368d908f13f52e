"""The concurrent control: a case the deep baseline calls regressed takes repeats of the baseline's
own version in the check's session, interleaved with its own, and stays regressed only when it is
worse than that control too; a baseline whose session sat off the rate is drift, not a regression.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from noisefloor.errors import NoisefloorError
from noisefloor.model.parts import Side
from noisefloor.model.records import CaseRecord, RunRecord
from noisefloor.model.report import CaseReport, Control
from noisefloor.model.verdict import Verdict
from noisefloor.operations.cost_budget import CostBudget
from noisefloor.operations.run import RunSession
from noisefloor.operations.worktree import built_at, checked_out
from noisefloor.pipeline.comparison import comparison_parts
from noisefloor.settings import CONTROL_REPEATS, RuleSettings
from noisefloor.store.fingerprint import GIT_LABEL, commit_holding
from noisefloor.store.pool import held_repeats
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import built_again
from noisefloor.targets.kinds import kind_named
from noisefloor.targets.source import BuiltTarget, TargetPlace

__all__ = ["ConcurrentControl", "Taken", "confirmed", "control_verdicts", "controlled"]

#: A case's control windows as a run keeps them: candidate start and end, control start and end.
Windows = tuple[int, int, int, int]


@dataclass
class Taken:
    """What a control took: each controlled case's windows, the candidate's cases grown by the
    repeats taken beside the control, and, per flagged case, why no control was taken."""

    windows: dict[str, Windows] = field(default_factory=dict)
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    why_not: dict[str, str] = field(default_factory=dict)


@contextlib.contextmanager
def _baseline_version(
    store: Store, suite: Suite, base: RunRecord, built: BuiltTarget
) -> Iterator[BuiltTarget | str]:
    """The baseline's own version of the suite's target, ready to call, or why there is none:
    the candidate itself when its version is the baseline's (a `--fresh` check), an endpoint
    built again from the settings the baseline's run kept, or, for a command target versioned
    by git, the commit holding the baseline's tracked files checked out in a temporary worktree
    under the store root."""
    if built.record.key == base.target.key:
        yield built
        return
    place = TargetPlace(suite.path, suite.cases_path, store.root)
    if base.target.settings is not None:
        yield _from_settings(base, place)
        return
    digest = base.target.fingerprint.get(GIT_LABEL)
    if digest is None:
        yield (
            f"the baseline's {base.target.kind} target ({base.target.key}) cannot be built "
            "again here: only a command target versioned by git, an endpoint whose settings the "
            "baseline's run kept, or the baseline's own version can be run beside the candidate"
        )
        return
    manifest = store.load_manifest(digest)
    if manifest is None:
        yield f"the store lacks the manifest of the baseline's tracked files ({digest[:12]})"
        return
    sha = commit_holding(manifest, suite.base_dir, suite.base_dir, place.not_target())
    if sha is None:
        yield (
            "no commit of the repository holds the baseline's tracked files as they were "
            "(it was taken from uncommitted changes, or from a commit no longer among the newest)"
        )
        return
    try:
        with checked_out(suite.base_dir, sha, store.root) as tree:
            control = built_at(tree, suite, store)
            if control.record.key != base.target.key:
                yield (
                    f"commit {sha[:12]} builds version {control.record.key}, not the "
                    f"baseline's {base.target.key} (the suite's target settings changed)"
                )
            else:
                yield control
    except NoisefloorError as exc:
        yield f"the baseline's commit {sha[:12]} could not be checked out: {exc.message}"


def _from_settings(base: RunRecord, place: TargetPlace) -> BuiltTarget | str:
    """The baseline's target built again from the settings its run kept, or why not."""
    assert base.target.settings is not None
    try:
        built = built_again(base.suite, kind_named(base.target.kind), base.target.settings, place)
    except NoisefloorError as exc:
        return f"the baseline's {base.target.kind} settings no longer build: {exc.message}"
    if built.record.key != base.target.key:
        return (
            f"the baseline's settings build version {built.record.key} here, not the "
            f"baseline's {base.target.key}"
        )
    return built


class ConcurrentControl:
    """The repeats of the baseline's own version a check takes for the cases its deep baseline
    calls regressed: as many as the case's candidate took (at least `CONTROL_REPEATS`), with as
    many fresh ones of the candidate's, interleaved in the check's own session; the fresh ones
    are judged against the control."""

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

    def take(self, flagged: Mapping[str, CaseRecord], pool: RunRecord) -> Taken:
        """Take the controls of the candidate's `flagged` cases (each at the repeats it took)
        against the deep baseline `pool`; a case without one keeps its deep verdict and says why."""
        taken = Taken()
        held = {c.case_id: c for c in pool.cases}
        wanted: dict[str, tuple[CaseRecord, CaseRecord]] = {}
        for cid, case in flagged.items():
            base_case = held.get(cid)
            if base_case is None or base_case.case_key != case.case_key:
                taken.why_not[cid] = (
                    "its input changed since the baseline: the baseline's input is not run again"
                )
                continue
            repeats = max(CONTROL_REPEATS, case.repeats - case.start)
            end = held_repeats(self.store, base_case)
            control = base_case.model_copy(
                update={"first_repeat": end, "start": end, "repeats": end + repeats}
            )
            grown = case.model_copy(update={"repeats": case.repeats + repeats})
            wanted[cid] = (control, grown)
        if not wanted:
            return taken
        need = sum(2 * (c.repeats - c.start) for c, _ in wanted.values())
        short = None
        if self.max_calls is not None and self.session.taken + need > self.max_calls:
            short = f"--max-calls {self.max_calls} leaves no room for its {need} calls"
        elif self.cost is not None:
            price = sum(
                (
                    self.cost.cost_of(cid, 2 * (c.repeats - c.start))
                    for cid, (c, _) in wanted.items()
                ),
                Decimal(0),
            )
            if price > self.cost.left():
                short = f"--max-cost {self.cost.max_cost} leaves no room for its {need} calls"
        if short is not None:
            taken.why_not.update((cid, short) for cid in wanted)
            return taken
        with _baseline_version(self.store, self.suite, self.base, self.session.built) as version:
            if isinstance(version, str):
                taken.why_not.update((cid, version) for cid in wanted)
                return taken
            self.session.take_beside(
                [grown for _, grown in wanted.values()],
                version,
                [control for control, _ in wanted.values()],
            )
        for cid, (control, grown) in wanted.items():
            taken.cases[cid] = grown
            # only the repeats taken beside the control are judged against it: those that made
            # the deep baseline call the case regressed were picked for looking bad, and judged
            # again they would call drift a regression too often
            fresh = grown.repeats - (control.repeats - control.start)
            taken.windows[cid] = (fresh, grown.repeats, control.start, control.repeats)
        return taken


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


def confirmed(
    screened: CaseReport,
    against: CaseReport | None,
    windows: Windows | None,
    why_not: str,
    min_valid: int,
) -> CaseReport:
    """A case the deep baseline called regressed, once its control is judged: still regressed
    when it is worse than the control too, else the verdict against the control, the deep
    baseline's evidence named as drift; without a control, or with one that the infrastructure
    left under `min_valid` scored repeats on either side, the deep verdict and why."""
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
    if against.verdict is Verdict.REGRESSED:
        return _with(screened, control)
    drift = (
        f"worse than the deep baseline ({screened.reason}), but not than the baseline's own "
        f"version taken beside it in this check ({control.reason}): the baseline's session sat "
        "off the rate this one sees (drift), not a regression"
    )
    return _with(against.model_copy(update={"reason": drift}), control, screened)


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
    """The settled cases, each one the deep baseline called regressed judged against its
    concurrent control as well (the run's record says which were, and why the others were not)."""
    record = run.sequential
    assert record is not None
    flagged = record.controls.keys() | record.uncontrolled.keys()
    if not flagged:
        return cases
    against = control_verdicts(store, base, run, record.controls, settings)
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
