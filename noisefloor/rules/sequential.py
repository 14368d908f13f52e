"""The group-sequential design of a check: looks at growing candidate repeats, alpha spent across
them, futility stops; pure, it decides from the rule's case reports alone.

Why it stays valid although the repeats depend on the data. Every repeat a case took counts at
every look. Alpha is split across the looks by a spending function (Bonferroni over looks, so
no assumption about their correlation), and at each look the rule's correction across cases
counts every case of the suite: the running ones at their new repeats, the stopped ones at the
tables they stopped with, which never reject again. A family counted over only the running
cases shrinks where the data looked good and inflated the false-alarm rate to 14-16% in
simulation (research/statistics.md §5). Futility stops only remove chances to reject.
`bench/calibration.py` measures the false-alarm rate through this very code.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from noisefloor import stats
from noisefloor.model.report import CaseReport, ScorerReport
from noisefloor.model.verdict import Verdict
from noisefloor.rules.exact import ADD_REPEATS
from noisefloor.stats import TOL

__all__ = ["Stop", "doubt_order", "doubt_p", "settle", "step"]


class Stop(enum.StrEnum):
    """Why a case took no more repeats."""

    #: The candidate is the baseline's own target version and input: the same samples.
    SAME = "same"
    #: Futility: after a look, no worsening is left plausible enough to pay for more repeats.
    CLEAR = "clear"
    #: A test decided it at a look (or the case cannot be compared at all).
    DECIDED = "decided"
    #: The last look, at --max-repeats, without a significant change.
    CAP = "cap"
    #: Still running when --max-calls or --max-cost ran out.
    BUDGET = "budget"
    #: No candidate repeat reached the target (the infrastructure failed every one): never
    #: `clear`, and the check exits 3 (`exit_policy.unmeasured_cause`).
    UNMEASURED = "unmeasured"


#: Verdicts that end a case: a test rejected, or the case cannot be compared at all.
_FINAL = {
    Verdict.BROKEN,
    Verdict.REGRESSED,
    Verdict.IMPROVED,
    Verdict.ADDED,
    Verdict.REMOVED,
    Verdict.FIXED,
    Verdict.INVALID,
}


def doubt_p(case: CaseReport) -> float:
    """The smallest p of a worsening the case shows: a scorer's pass rate, a continuous
    scorer's mean, or its share of valid results."""
    ps = [s.evidence.p_regress for s in case.scorers if s.evidence.p_regress is not None]
    ps += [
        s.evidence.values.p_worse
        for s in case.scorers
        if s.evidence.values is not None and s.evidence.values.p_worse is not None
    ]
    if case.valid is not None:
        (ok_b, n_b), (ok_c, n_c) = case.valid.baseline, case.valid.candidate
        if n_b and n_c:
            ps.append(stats.fisher_regress(ok_b, n_b, ok_c, n_c))
    return min(ps, default=1.0)


def step(case: CaseReport, futility: float | None) -> Stop | None:
    """What a case does after a look: stop (and why), or None to take the next look.

    A case goes on while the rule calls a scorer inconclusive or a worsening's p is at most the
    futility bound; `futility` None is the last look, which stops every case. A case that
    cannot be compared at all stops as decided (as unmeasured when none of its repeats reached
    the target), never as clear.
    """
    if case.valid is not None and not case.valid.candidate[1]:
        return Stop.UNMEASURED
    if case.verdict in _FINAL or _uncomparable(case):
        return Stop.DECIDED
    if futility is None:
        return Stop.CAP
    inconclusive = any(s.verdict is Verdict.INCONCLUSIVE for s in case.scorers)
    if inconclusive or doubt_p(case) <= futility:
        return None
    return Stop.CLEAR


def _uncomparable(case: CaseReport) -> bool:
    """An inconclusive case none of whose scorers could be judged (every repeat hit an
    infrastructure error, on either side): more repeats of it are not doubt but the same
    failure, and it is never clear."""
    return case.verdict is Verdict.INCONCLUSIVE and all(
        s.verdict is Verdict.UNMEASURED for s in case.scorers
    )


def doubt_order(cases: Sequence[CaseReport]) -> list[str]:
    """Case ids, most doubtful first (smallest p of a worsening): the order in which a budget
    serves the cases still running."""
    return [c.case_id for c in sorted(cases, key=lambda c: (doubt_p(c), c.case_id))]


def _open_interval(scorer: ScorerReport) -> str | None:
    """How an unchanged scorer's interval of change still reaches a drop that matters, or None
    when it excludes one: `suspect_drop` for a pass rate, the relevant effect for a mean."""
    if scorer.verdict is not Verdict.UNCHANGED:
        return None
    ev = scorer.evidence
    values = ev.values
    if values is not None and not values.deterministic and values.worse_end is not None:
        relevant = values.relevant_effect or 0.0
        if values.worse_end >= relevant - TOL:
            return (
                f"the mean's 95% interval still reaches a worsening of {values.worse_end:.3g} "
                f"(the effect that matters: {relevant:.3g})"
            )
    if ev.newcombe is not None and ev.suspect_drop is not None:
        low, high = ev.newcombe
        if low is not None and high is not None and -low >= ev.suspect_drop - TOL:
            b, c = scorer.baseline, scorer.candidate
            return (
                f"pass rate {b.k}/{b.n} -> {c.k}/{c.n}: the 95% interval of change "
                f"[{low:+.2f}, {high:+.2f}] still reaches a drop of {ev.suspect_drop:g}"
            )
    return None


def settle(case: CaseReport, stop: Stop, advice: str) -> CaseReport:
    """A case stopped at the cap or by the budget: `unchanged` only where every scorer's interval
    of change excludes a drop that matters, else `inconclusive`, with `advice` (what would
    narrow the interval)."""
    if stop not in (Stop.CAP, Stop.BUDGET):
        return case
    if case.verdict is Verdict.INCONCLUSIVE:
        # the rule's own advice, more repeats, is what the cap or the budget just ran out of
        reason = case.reason.removesuffix(f": {ADD_REPEATS}").removesuffix(f"; {ADD_REPEATS}")
        return case.model_copy(update={"reason": f"{reason}; {advice}"})
    if case.verdict is not Verdict.UNCHANGED:
        return case
    opened = [(s, why) for s in case.scorers if (why := _open_interval(s)) is not None]
    if not opened:
        return case
    scorers = [
        s.model_copy(update={"verdict": Verdict.INCONCLUSIVE, "reason": f"{why}; {advice}"})
        if (why := _open_interval(s)) is not None
        else s
        for s in case.scorers
    ]
    first, why = opened[0]
    return case.model_copy(
        update={
            "verdict": Verdict.INCONCLUSIVE,
            "reason": f"{first.key}: {why}; {advice}",
            "scorers": scorers,
        }
    )
