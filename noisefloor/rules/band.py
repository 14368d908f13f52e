"""Rule `band`: the public noisefloor tool's min-max noise band, exactly as it publishes it.

Kept for comparison and continuity; its gate holes (all-error sides, error-rate drops) are closed.
"""

from __future__ import annotations

from typing import Any

from noisefloor.model.records import CaseBand, ScorerBand
from noisefloor.model.report import (
    CaseReport,
    ComparedCase,
    ComparedScorer,
    RuleSummary,
)
from noisefloor.model.verdict import Verdict, case_frame, scorer_pairs, unjudged, worst
from noisefloor.settings import RuleName, RuleSettings

__all__ = ["BandRule", "compare_scorer"]

#: 4/5 - 3/5 = 0.20000000000000007 while 3/5 - 2/5 = 0.19999999999999996: a drop of exactly the
#: threshold never counts, whatever N.
EPS = 1e-9


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def _display(b: ScorerBand, k: int, n: int) -> str:
    if b.kind != "continuous" or not b.values:
        return f"{k}/{n}"
    mean = sum(b.values) / len(b.values)
    return f"{_fmt(mean)} [{_fmt(min(b.values))}-{_fmt(max(b.values))}] n={len(b.values)}"


def compare_scorer(
    base: ScorerBand, cand: ScorerBand, min_rate_drop: float, min_effect: float
) -> tuple[Verdict, str]:
    """One scorer, baseline against candidate, in the public tool's order of clauses."""
    # The public rule counts only repeats that produced a valid result.
    kb, nb = base.k, base.n - base.target_errors
    kc, nc = cand.k, cand.n - cand.target_errors
    shown = f"{_display(base, kb, nb)} -> {_display(cand, kc, nc)}"
    if not (base.reliable and cand.reliable):
        return Verdict.UNMEASURED, f"{shown}: measured under concurrency; not comparable"
    if nb < 2 or nc < 2:
        return Verdict.UNMEASURED, f"{shown}: only {min(nb, nc)} scored repeat(s); noise unmeasured"
    rb, rc = kb / nb, kc / nc
    if rb == 1.0 and rc < 1.0:
        return (
            Verdict.REGRESSED,
            f"unanimous baseline {kb}/{nb} -> {kc}/{nc}; a clean baseline showed no variance, "
            "so any failure is new",
        )
    if rb - rc > min_rate_drop + EPS:
        return Verdict.REGRESSED, f"pass rate {kb}/{nb} -> {kc}/{nc} (drop > {min_rate_drop:.2f})"
    if rc - rb > min_rate_drop + EPS:
        return Verdict.IMPROVED, f"pass rate {kb}/{nb} -> {kc}/{nc} (gain > {min_rate_drop:.2f})"
    if base.kind == "continuous" and base.values and cand.values:
        mb = sum(base.values) / len(base.values)
        mc = sum(cand.values) / len(cand.values)
        lo, hi = min(base.values), max(base.values)
        if abs(mb - mc) > min_effect + EPS:
            higher_better = base.direction != "lower_is_better"
            below, above = mc < lo, mc > hi
            band = f"outside the baseline band [{_fmt(lo)}-{_fmt(hi)}]"
            moved = f"mean {_fmt(mb)} (n={len(base.values)}) -> {_fmt(mc)} (n={len(cand.values)}), {band}"
            if (below and higher_better) or (above and not higher_better):
                return Verdict.REGRESSED, moved
            if below or above:
                return Verdict.IMPROVED, moved
    return Verdict.UNCHANGED, f"{shown}, within noise"


class BandRule:
    """The min-max band: a heuristic with no stated error rate, kept exactly as published."""

    name = RuleName.BAND

    def compare(
        self, case_id: str, base: CaseBand | None, cand: CaseBand | None, settings: RuleSettings
    ) -> ComparedCase:
        """Judge one case on its own (the band rule has no correction across cases)."""
        frame = case_frame(base, cand)
        scorers = []
        for key, b, c in scorer_pairs(base, cand):
            if frame is not None or b is None or c is None:
                verdict, reason = Verdict.UNMEASURED, unjudged(frame)
            else:
                me = settings.scorer(key).value_min_effect
                verdict, reason = compare_scorer(b, c, settings.min_rate_drop, me)
            scorers.append(ComparedScorer.between(key, b, c, verdict=verdict, reason=reason))
        if frame is None:
            assert base is not None and cand is not None
            frame = _valid_rate_clause(base, cand, settings.min_rate_drop) or _from_scorers(scorers)
        return ComparedCase(case_id=case_id, scorers=scorers, **frame)

    def decide(
        self, cases: list[ComparedCase], settings: RuleSettings
    ) -> tuple[list[CaseReport], RuleSummary]:
        """Nothing to correct across cases: the band rule decides case by case."""
        return [c.decided() for c in cases], RuleSummary(
            procedure="min-max band per case, no correction across cases"
        )


def _valid_rate_clause(
    base: CaseBand, cand: CaseBand, min_rate_drop: float
) -> dict[str, Any] | None:
    """A drop in the rate of valid repeats is a verdict, not a warning (the public tool's hole)."""
    rb, rc = base.answered / base.valid, cand.answered / cand.valid
    shown = f"valid repeats {base.answered}/{base.valid} -> {cand.answered}/{cand.valid}"
    if rb == 1.0 and rc < 1.0:
        return {"verdict": Verdict.BROKEN, "reason": f"{shown}: the baseline never failed to run"}
    if rb - rc > min_rate_drop + EPS:
        return {"verdict": Verdict.BROKEN, "reason": f"{shown} (drop > {min_rate_drop:.2f})"}
    return None


def _from_scorers(scorers: list[ComparedScorer]) -> dict[str, Any]:
    judged = [s.verdict for s in scorers if s.verdict not in (None, Verdict.UNMEASURED)]
    if not judged:
        reasons = "; ".join(s.reason or "" for s in scorers[:1])
        return {"verdict": Verdict.INCONCLUSIVE, "reason": f"no scorer could be judged: {reasons}"}
    case = worst(judged)
    first = next(s for s in scorers if s.verdict is case)
    if case is Verdict.UNCHANGED:
        return {"verdict": case, "reason": "every scorer within noise"}
    return {"verdict": case, "reason": f"{first.key}: {first.reason}"}
