"""Whether drift between sessions could explain a case's drop: its pass rate's drop tested as if
the check's session sat as far off as the case's learned drift allows; pure.

A case the looks call regressed is so against the deep baseline, taken in other sessions. If the
drop stays significant at the look's own threshold when the candidate's session may sit as far
from the baseline's as the case's pass rate moves between sessions (`stats.drift`), no session
that drifts as the store has seen explains it, and a concurrent control would only confirm it.
Tested at the level the look spent, the drift test adds no false alarm beyond that look's, as
long as no session drifts more than the allowance (docs/sequential.md measures what happens
when one does).
"""

from __future__ import annotations

from collections.abc import Mapping

from noisefloor.model.records import DriftCheck
from noisefloor.model.report import CaseReport
from noisefloor.model.verdict import Verdict
from noisefloor.stats import significant
from noisefloor.stats.drift import Spread, drift_p

__all__ = ["drift_check", "drift_words"]


def drift_check(
    case: CaseReport,
    spreads: Mapping[str, Spread],
    concentration: Mapping[str, float],
    prior: float,
) -> DriftCheck | None:
    """How the drop of a case the looks called regressed stands against drift: the first of its
    regressed pass rates that no allowed drift reaches, else the first regressed pass rate; None
    when no pass rate regressed (a mean or the share of valid results: no drift model, so a
    control decides). `spreads` and `concentration` are by scorer key."""
    checks = []
    for scorer in case.scorers:
        b, c, ev = scorer.baseline, scorer.candidate, scorer.evidence
        spread = spreads.get(scorer.key)
        if (
            scorer.verdict is not Verdict.REGRESSED
            or spread is None
            or ev.threshold is None
            or None in (b.k, b.n, c.k, c.n)
        ):
            continue
        assert b.k is not None and b.n is not None and c.k is not None and c.n is not None
        p = drift_p(b.k, b.n, c.k, c.n, spread.rho, concentration.get(scorer.key, 1.0))
        checks.append(
            DriftCheck(
                scorer=scorer.key,
                baseline=(b.k, b.n),
                candidate=(c.k, c.n),
                rho=round(spread.rho, 6),
                sessions=spread.sessions,
                suite_rho=round(spread.suite_rho, 6),
                suite_sessions=spread.suite_sessions,
                prior=prior,
                p=p,
                threshold=ev.threshold,
                beyond=significant(p, ev.threshold),
            )
        )
    beyond = [check for check in checks if check.beyond]
    chosen = beyond or checks
    return chosen[0] if chosen else None


def drift_words(check: DriftCheck) -> str:
    """The drift test in words: the drop, its p under the allowed drift against the look's
    threshold, and what the allowance was learned from."""
    (k_b, n_b), (k_c, n_c) = check.baseline, check.candidate
    if check.sessions:
        learned = f"{check.sessions} sessions of this case"
    else:
        learned = "no two sessions of this case"
    if check.suite_sessions:
        learned += f", {check.suite_sessions} over the suite"
    source = f"rho {check.rho:.3g}, learned from {learned} and the prior {check.prior:g}"
    relation = "<=" if check.beyond else ">"
    return (
        f"{check.scorer} {k_b}/{n_b} -> {k_c}/{n_c} has p={check.p:.3g} {relation} "
        f"{check.threshold:.3g} with this session as far off as drift moves it ({source})"
    )
