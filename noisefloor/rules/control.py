"""A case the deep baseline called regressed or left in doubt, judged against its concurrent
control: its verdict, and the words that name the drift; pure.

A control clears a case only on evidence: the case is `unchanged` only where the 95% interval of
the change against the control excludes a drop that matters (`settle`), else `inconclusive`
with the repeats that would decide it. A control that measured too little never clears a
regression.
"""

from __future__ import annotations

import math

from noisefloor.model.parts import Side
from noisefloor.model.records import DriftCheck
from noisefloor.model.report import CaseReport, Control, ScorerReport
from noisefloor.model.verdict import Verdict
from noisefloor.rules.sequential import Stop, settle

__all__ = ["confirmed", "deciding_repeats"]

#: The normal quantile of the 95% intervals `settle` reads.
_Z95 = 1.959963984540054

#: A control's windows as a run keeps them: candidate start and end, control start and end.
Windows = tuple[int, int, int, int]


def confirmed(
    screened: CaseReport,
    against: CaseReport | None,
    windows: Windows | None,
    why_not: str,
    min_valid: int,
    drift: DriftCheck | None = None,
) -> CaseReport:
    """A case the deep baseline called regressed or left in doubt, once its control is judged.
    A regressed one stays regressed when it is worse than the control too, else takes the
    verdict against the control, the deep baseline's evidence named as drift; one in doubt
    takes the verdict against the control, with the deep baseline's evidence beside it. Either
    is `unchanged` only where the control's interval of change excludes a drop that matters.
    Without a control, or with one that the infrastructure left under `min_valid` scored
    repeats on either side, the deep verdict stands and says why. `drift`: whether drift could
    explain the drop of a case the looks left regressed."""
    kept = {"drift": drift} if drift is not None else {}
    if against is None or windows is None:
        return _with(screened, Control(reason=f"no concurrent control: {why_not}", **kept))
    short = [
        s.key for s in against.scorers if min(_scored(s.baseline), _scored(s.candidate)) < min_valid
    ]
    if short and against.verdict is not Verdict.REGRESSED:
        # a control that measured nothing must not clear a regression
        reason = (
            f"no concurrent control: too few of its repeats were scored ({', '.join(short)}: "
            f"fewer than min_valid {min_valid} on a side), so the deep verdict stands"
        )
        return _with(screened, Control(reason=reason, **kept))
    c_start, c_end, b_start, b_end = windows
    judged = _on_evidence(against)
    control = Control(
        repeats=b_end - b_start,
        candidate_repeats=c_end - c_start,
        verdict=judged.verdict,
        reason=_against(judged),
        **kept,
    )
    beside = f"the baseline's own version taken beside it in this check ({control.reason})"
    regressed = judged.verdict is Verdict.REGRESSED
    if screened.verdict is Verdict.REGRESSED:
        if regressed:
            return _with(screened, control)
        moved = _drift(screened, judged)
        reason = (
            f"worse than the deep baseline ({screened.reason}), but not than {beside}: "
            f"{moved + '; ' if moved else ''}the baseline's session sat off the rate this one "
            "sees (drift), not a regression"
        )
    elif regressed:
        reason = f"worse than {beside}; in doubt against the deep baseline ({screened.reason})"
    elif judged.verdict is Verdict.INCONCLUSIVE:
        reason = f"in doubt against {beside} too; against the deep baseline: {screened.reason}"
    else:
        moved = _drift(screened, judged)
        reason = (
            f"{judged.verdict.value} against {beside}, where the deep baseline left it in doubt "
            f"({screened.reason}){': ' + moved if moved else ''}"
        )
    return _with(judged.model_copy(update={"reason": reason}), control, screened)


def _on_evidence(against: CaseReport) -> CaseReport:
    """The verdict against the control, `unchanged` only where each pass rate's interval of
    change (and each mean's) excludes a drop that matters, else `inconclusive` with how many
    repeats a side would decide it."""
    if against.verdict is not Verdict.UNCHANGED:
        return against
    needed = [n for s in against.scorers if (n := deciding_repeats(s)) is not None]
    if needed and max(needed) < 0:
        advice = "no number of repeats a side would exclude it at the rates seen"
    elif needed:
        advice = f"about {max(needed)} repeats of each version beside the other would decide it"
    else:
        advice = "more repeats of each version beside the other would decide it"
    return settle(against, Stop.CAP, advice)


def deciding_repeats(scorer: ScorerReport) -> int | None:
    """Repeats a side at which a pass rate's 95% interval of change would exclude the drop that
    matters, were the rates seen to hold (normal approximation); -1 when the drop seen is that
    large already; None for a scorer that is not a pass rate with such a drop in reach."""
    ev, b, c = scorer.evidence, scorer.baseline, scorer.candidate
    if ev.suspect_drop is None or None in (b.k, b.n, c.k, c.n) or not b.n or not c.n:
        return None
    assert b.k is not None and b.n is not None and c.k is not None and c.n is not None
    p_b, p_c = b.k / b.n, c.k / c.n
    room = (p_c - p_b) + ev.suspect_drop
    if room <= 0:
        return -1
    # both rates pulled half a repeat from 0 and 1, as the score interval is never of zero width
    spread = sum(max(p * (1 - p), 0.25 / (n + 1)) for p, n in ((p_b, b.n), (p_c, c.n)))
    return math.ceil(_Z95**2 * spread / room**2)


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
