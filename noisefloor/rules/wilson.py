"""Rule `wilson`: the decision table of the quarantine-lane design, exactly.

A triage rule, not a significance test: flaky cases go to quarantine and never block.
"""

from __future__ import annotations

from noisefloor import stats
from noisefloor.model.records import CaseBand, ScorerBand
from noisefloor.model.report import (
    CaseReport,
    ComparedCase,
    ComparedScorer,
    Evidence,
    RuleSummary,
    Side,
)
from noisefloor.model.verdict import (
    Verdict,
    case_frame,
    scorer_pairs,
    side,
    title_of,
    unjudged,
    worst,
)
from noisefloor.settings import RuleName, RuleSettings

__all__ = ["WilsonRule", "decide_scorer"]


def _counts(band: ScorerBand) -> tuple[int, int, int]:
    """(passes, valid, invalid): a target error is a fail (the model failed); infrastructure
    and scorer errors are invalid (the harness or the network failed)."""
    return band.k, band.n, band.infra_errors + band.scorer_errors


def decide_scorer(
    base: ScorerBand, cand: ScorerBand, min_valid: int, min_effect: float
) -> tuple[Verdict, str]:
    """The decision table, first match wins."""
    kb, nb, ib = _counts(base)
    kc, nc, ic = _counts(cand)
    if nb < min_valid or nc < min_valid:
        return Verdict.INCONCLUSIVE, f"too_few_valid ({nb} and {nc} valid; {min_valid} needed)"
    if ib or ic:
        return (
            Verdict.INVALID,
            f"infra_or_grader_error ({ib} in the baseline, {ic} in the candidate)",
        )
    if 0 < kb < nb or 0 < kc < nc:
        return Verdict.QUARANTINE, "repeats_disagree"
    rb, rc = kb / nb, kc / nc
    _, hi_c = stats.wilson(kc, nc)
    lo_b, _ = stats.wilson(kb, nb)
    delta = rc - rb
    if rc + min_effect <= rb + stats.TOL and hi_c < lo_b:
        return Verdict.REGRESSED, f"regression: delta={delta:+.2f}"
    return Verdict.UNCHANGED, f"ok: delta={delta:+.2f}"


class WilsonRule:
    """Per case, per scorer, the table of the quarantine-lane design; no correction across cases."""

    name = RuleName.WILSON

    def compare(
        self, case_id: str, base: CaseBand | None, cand: CaseBand | None, settings: RuleSettings
    ) -> ComparedCase:
        """Judge one case: the worst of its scorers' decisions."""
        # The design's table judges a crash as a fail, so one broken side reads as the table
        # says; no valid result on either side takes the shared frame, which names the outcomes.
        frame = None
        if base is None or cand is None or base.answered == cand.answered == 0:
            frame = case_frame(base, cand)
        scorers: list[ComparedScorer] = []
        for key, b, c in scorer_pairs(base, cand):
            min_effect = settings.scorer(key).min_effect
            if frame is not None or b is None or c is None:
                verdict, reason = Verdict.UNMEASURED, unjudged(frame)
            else:
                verdict, reason = decide_scorer(b, c, settings.min_valid, min_effect)
            entry_b, entry_c = Side.model_validate(side(b)), Side.model_validate(side(c))
            if b is not None and c is not None:
                entry_b.wilson = list(stats.wilson(b.k, b.n))
                entry_c.wilson = list(stats.wilson(c.k, c.n))
            scorers.append(
                ComparedScorer(
                    key=key,
                    verdict=verdict,
                    reason=reason,
                    baseline=entry_b,
                    candidate=entry_c,
                    evidence=Evidence(min_effect=min_effect),
                    title=title_of(b, c),
                )
            )
        if frame is None:
            verdict = worst([s.verdict for s in scorers if s.verdict is not None])
            # every scorer that decided the case, not the first alone
            named = [f"{s.key}: {s.reason}" for s in scorers if s.verdict is verdict]
            frame = {"verdict": verdict, "reason": "; ".join(named)}
        return ComparedCase(case_id=case_id, scorers=scorers, **frame)

    def decide(
        self, cases: list[ComparedCase], settings: RuleSettings
    ) -> tuple[list[CaseReport], RuleSummary]:
        """Nothing to correct across cases."""
        return [c.decided() for c in cases], RuleSummary(
            procedure="quarantine-lane table: Wilson 95% intervals must not overlap",
            min_valid=settings.min_valid,
        )
