"""The sequential design of a check: every case screened at a few repeats, only the cases in
doubt confirmed on fresh repeats; pure, it decides from the rule's case reports alone.

Why it stays valid although the repeats depend on the data: alpha is split between the two
looks (Bonferroni). The screen rejects at `SCREEN_SHARE` of alpha, corrected across every case;
the confirmation tests only repeats taken after the screen chose its cases, corrected across
those cases, at the rest of alpha. Stopping a case that looks no worse only removes chances to
reject. The baseline is reused by both looks; `bench/calibration.py` measures what that costs.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from noisefloor.report.model import CaseReport, RuleSummary, ScorerReport, Sequential
from noisefloor.settings import BASELINE_REPEATS, MAX_REPEATS, SCREEN_SHARE, RuleName, RuleSettings
from noisefloor.stats import TOL
from noisefloor.verdict import Verdict

__all__ = ["Design", "Stop", "combine", "doubt_order", "in_doubt"]


class Stop(enum.StrEnum):
    """Why a case took no more repeats."""

    #: The candidate is the baseline's own target version and input: the same samples.
    SAME = "same"
    #: The screen shows the case no worse than its baseline.
    CLEAR = "clear"
    #: A test decided it: at the screen, or on its fresh repeats.
    DECIDED = "decided"
    #: Confirmed at --max-repeats without a significant change.
    CAP = "cap"
    #: In doubt, but --max-calls or --max-cost ran out before its confirmation.
    BUDGET = "budget"
    #: No candidate repeat gave a valid result (the infrastructure failed every one): never
    #: `clear`, and the check exits 3 (`exit_policy.unmeasured_cause`).
    UNMEASURED = "unmeasured"


@dataclass(frozen=True)
class Design:
    """How many repeats a sequential check may take, per case and in all."""

    max_repeats: int = MAX_REPEATS
    """Candidate repeats per case at most: the screen's plus the confirmation's."""
    max_calls: int | None = None
    """Samples the whole check may take; None: no limit."""
    max_cost: Decimal | None = None
    """What the whole check's samples may cost at the suite's price (`cost_budget`); None: no
    limit."""
    baseline_repeats: int = BASELINE_REPEATS
    """Repeats per case of the deep baseline a check compares against, at most."""
    baseline_max_age_s: float | None = None
    """Baseline samples older than this many seconds are left out; None: any age."""

    def applies(self, repeats: int | None, settings: RuleSettings, screens: list[int]) -> bool:
        """Whether a check samples sequentially: not with a fixed `--repeats`, only under rule
        exact, and only when the cap leaves a case room for a confirmation."""
        return (
            repeats is None
            and settings.rule is RuleName.EXACT
            and any(n < self.max_repeats for n in screens)
        )

    def screen(self, settings: RuleSettings) -> RuleSettings:
        """The settings of the screen: its share of alpha."""
        return replace(settings, alpha=settings.alpha * SCREEN_SHARE)

    def confirm(self, settings: RuleSettings, screen: RuleSummary | None) -> RuleSettings:
        """The settings of the confirmation: the rest of alpha, and Holm's correction of
        continuous scores counting every test of the screen (`screen`'s summary).

        A case is confirmed because its screen looked worse than its baseline, which favours
        baselines that came out high; counting the unconfirmed tests as never rejecting keeps
        the union bound behind Holm's correction true, whatever chose the cases.
        """
        tests = (screen.continuous_tests or 0) if screen is not None else 0
        return replace(
            settings,
            alpha=settings.alpha * (1 - SCREEN_SHARE),
            family_floor={"worse": tests, "better": tests},
        )


#: Screen verdicts that end a case: a test rejected, or the case cannot be compared at all.
_FINAL = {
    Verdict.BROKEN,
    Verdict.REGRESSED,
    Verdict.IMPROVED,
    Verdict.ADDED,
    Verdict.REMOVED,
    Verdict.FIXED,
    Verdict.INVALID,
}


def _looks_worse(scorer: ScorerReport) -> bool:
    b, c = scorer.baseline, scorer.candidate
    if scorer.verdict is Verdict.INCONCLUSIVE:
        return True
    if scorer.verdict is not Verdict.UNCHANGED or b.rate is None or c.rate is None:
        return False
    if c.rate < b.rate - TOL:
        return True
    values = scorer.evidence.values
    if values is None or values.diff is None or values.deterministic:
        return False
    worse = -values.diff if values.direction != "lower_is_better" else values.diff
    return worse > TOL


def in_doubt(case: CaseReport) -> bool:
    """Whether more repeats could change a screened case's verdict: a scorer looks worse than
    its baseline (a lower pass rate or a worse mean, significant or not), fewer of its repeats
    gave a valid result, or a scorer is inconclusive."""
    if case.verdict in _FINAL:
        return False
    if case.valid is not None:
        (ok_b, n_b), (ok_c, n_c) = case.valid.baseline, case.valid.candidate
        if n_b and n_c and ok_c / n_c < ok_b / n_b - TOL:
            return True
    return any(_looks_worse(s) for s in case.scorers)


def _doubt(case: CaseReport) -> float:
    ps = [s.evidence.p_regress for s in case.scorers if s.evidence.p_regress is not None]
    worse = [
        s.evidence.values.p_worse
        for s in case.scorers
        if s.evidence.values is not None and s.evidence.values.p_worse is not None
    ]
    return min([*ps, *worse], default=1.0)


def doubt_order(cases: Sequence[CaseReport]) -> list[str]:
    """The ids of the cases in doubt, most doubtful first (smallest p of a worsening): the order
    in which a budget confirms them."""
    doubtful = [c for c in cases if in_doubt(c)]
    return [c.case_id for c in sorted(doubtful, key=lambda c: (_doubt(c), c.case_id))]


def _budget_stop(case: CaseReport, budget: str) -> CaseReport:
    """A case left in doubt by the budget: inconclusive, since more repeats could decide it."""
    first = next((s for s in case.scorers if _looks_worse(s)), None)
    what = f"{first.key}: {first.reason}" if first is not None else case.reason
    return case.model_copy(
        update={
            "verdict": Verdict.INCONCLUSIVE,
            "reason": f"in doubt after the screen ({what}); {budget} ran out "
            "before its confirmation: rerun with a larger budget (samples taken are kept)",
        }
    )


def combine(
    screened: Sequence[CaseReport],
    confirmed: Mapping[str, CaseReport],
    stops: Mapping[str, Stop],
    repeats: Mapping[str, Sequential],
    max_calls: int | None = None,
    max_cost: Decimal | None = None,
) -> list[CaseReport]:
    """Each case's final report: its confirmation's where it had one, else its screen's, with
    the sequential evidence (repeats on each side, why it stopped) attached.

    `stops` holds the cases the screen alone did not settle: `SAME`, `BUDGET`, and `CAP` for
    those confirmed (`DECIDED` where the confirmation rejected); `repeats` every case's counts.
    """
    given = [f"--max-calls {max_calls}"] if max_calls is not None else []
    given += [f"--max-cost {max_cost}"] if max_cost is not None else []
    budget = " or ".join(given)
    out = []
    for case in screened:
        final = confirmed.get(case.case_id, case)
        stop = stops.get(case.case_id)
        if stop is None and case.valid is not None and not case.valid.candidate[1]:
            stop = Stop.UNMEASURED
        elif stop is None:
            stop = Stop.DECIDED if case.verdict in _FINAL else Stop.CLEAR
        elif stop is Stop.BUDGET:
            final = _budget_stop(case, budget)
        elif stop is Stop.CAP and final.verdict in _FINAL:
            stop = Stop.DECIDED
        evidence = repeats[case.case_id].model_copy(update={"stopped": stop.value})
        out.append(final.model_copy(update={"sequential": evidence}))
    return out
