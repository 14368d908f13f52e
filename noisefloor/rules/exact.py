"""Rule `exact`, the default: Fisher exact tests with Tarone's correction, Welch tests with Holm's.

The family-wise false-alarm rate of one check is `alpha`, however many cases and scorers it has.
"""

from __future__ import annotations

import math
import statistics as pystats
from dataclasses import asdict, dataclass

from noisefloor import stats
from noisefloor.model.records import CaseBand, ScorerBand
from noisefloor.model.report import (
    CaseReport,
    ComparedCase,
    ComparedScorer,
    ErrorsTest,
    Gate,
    PendingTest,
    RuleSummary,
    ScorerReport,
    ValidCounts,
    ValuesEvidence,
)
from noisefloor.model.verdict import Verdict, case_frame, scorer_pairs, unjudged, worst
from noisefloor.settings import RELATIVE_EFFECT, RuleName, RuleSettings

__all__ = ["ADD_REPEATS", "ExactRule"]

#: The advice an inconclusive verdict ends with; a sequential check at its cap replaces it with
#: what would narrow the interval there (`noisefloor.rules.sequential.settle`).
ADD_REPEATS = "add repeats"
#: Families of tests corrected together: discrete ones with Tarone, continuous ones with Holm.
DISCRETE = ("errors", "regress", "improve")
CONTINUOUS = ("worse", "better")


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def _r(x: float | None) -> float | None:
    if x is None or not math.isfinite(x):
        return x
    return _round(x)


def _binary_tests(key: str, b: ScorerBand, c: ScorerBand) -> list[PendingTest]:
    args = (b.k, b.n, c.k, c.n)
    return [
        PendingTest(
            family="regress",
            scorer=key,
            p=stats.fisher_regress(*args),
            pmin=stats.fisher_regress_min(*args),
        ),
        PendingTest(
            family="improve",
            scorer=key,
            p=stats.fisher_improve(*args),
            pmin=stats.fisher_improve_min(*args),
        ),
    ]


def _welch_tests(
    key: str, b: ScorerBand, c: ScorerBand
) -> tuple[list[PendingTest], ValuesEvidence]:
    """Welch on the values; constant-and-equal arms are not tests at all."""
    vb, vc = b.values, c.values
    const_b = all(stats.close(v, vb[0]) for v in vb)
    const_c = all(stats.close(v, vc[0]) for v in vc)
    mb, mc = pystats.fmean(vb), pystats.fmean(vc)
    higher_better = b.direction != "lower_is_better"
    evidence = ValuesEvidence(diff=_r(mc - mb), direction=b.direction)
    if const_b and const_c:
        evidence.deterministic = True
        return [], evidence
    w = stats.welch(vb, vc)
    p_worse, p_better = (w.p_lower, w.p_higher) if higher_better else (w.p_higher, w.p_lower)
    pooled = math.sqrt((w.sd_b**2 + w.sd_c**2) / 2)
    evidence.welch_ci = [_r(w.ci_low), _r(w.ci_high)]
    evidence.t = _r(w.t)
    evidence.df = _r(w.df)
    evidence.p_worse = _r(p_worse)
    evidence.pooled_sd = _r(pooled)
    evidence.diff_sd = _r((mc - mb) / pooled) if pooled > 0 else None
    tests = [
        PendingTest(family="worse", scorer=key, p=p_worse),
        PendingTest(family="better", scorer=key, p=p_better),
    ]
    return tests, evidence


#: Families whose rejections fail the check: their false alarms add up, so they share alpha.
FAILING = ("errors", "regress", "worse")


def _family_alphas(tests: list[PendingTest], alpha: float) -> dict[str, float]:
    """Alpha per family, so that the check's family-wise false-alarm rate stays `alpha`.

    The families that can fail the check (error rates, pass rates, continuous values) are each
    corrected across cases, so their false alarms add up: they split alpha evenly (Bonferroni
    over families). A family counts only if one of its tests could reach alpha at all, so a
    suite without continuous scores or target errors keeps the whole of it for pass rates.
    Improvements fail nothing and keep alpha.
    """
    live = [
        f
        for f in FAILING
        if any(
            t.family == f and (f not in DISCRETE or (t.pmin is not None and t.pmin <= alpha))
            for t in tests
        )
    ]
    share = alpha / max(1, len(live))
    return {f: (share if f in FAILING else alpha) for f in (*DISCRETE, *CONTINUOUS)}


@dataclass(frozen=True)
class _Tested:
    """A test after the correction across cases."""

    p: float
    threshold: float
    rejected: bool


def _pmin(test: PendingTest) -> float:
    assert test.pmin is not None, "a discrete test has its smallest attainable p"
    return test.pmin


def _value_verdict(
    tests: dict[str, _Tested], values: ValuesEvidence, cme: float, mean_b: float, shown: str
) -> tuple[Verdict, str]:
    """The verdict of a Welch test on varying values.

    Significant and at least `cme` (the scorer's min_effect, score units) is a regression or an
    improvement. A worsening that is not significant is inconclusive only where more repeats
    could still show one that matters: it is at least `cme` and half a pooled sd, and the worse
    end of the 95% interval reaches the relevant effect (`cme`, else `RELATIVE_EFFECT` of the
    baseline mean's magnitude); otherwise it is unchanged.
    """
    worse, better = tests["worse"], tests["better"]
    assert values.welch_ci is not None and values.diff is not None
    low, high = values.welch_ci
    assert low is not None and high is not None
    higher_better = values.direction != "lower_is_better"
    bad = -values.diff if higher_better else values.diff  # how much worse the candidate is
    worse_end = -low if higher_better else high
    relevant = cme if cme > 0 else RELATIVE_EFFECT * abs(mean_b)
    values.threshold = _r(worse.threshold)
    values.worse_end = _r(worse_end)
    values.relevant_effect = _r(relevant)
    if worse.rejected and bad >= cme:
        return Verdict.REGRESSED, f"{shown} (Welch p={worse.p:.3g} <= {worse.threshold:.3g})"
    if better.rejected and -bad >= cme:
        return Verdict.IMPROVED, f"{shown} (Welch p={better.p:.3g} <= {better.threshold:.3g})"
    suspect = bad > stats.TOL and bad >= max(cme, 0.5 * (values.pooled_sd or 0.0))
    stated = f"min_effect {cme:g}" if cme > 0 else f"{relevant:.3g} (no min_effect set)"
    if suspect and worse_end >= relevant - stats.TOL:
        return (
            Verdict.INCONCLUSIVE,
            f"{shown}: worse by {bad:.3g}, not significant at this N (p={worse.p:.3g} > "
            f"{worse.threshold:.3g}); the 95% interval reaches {stated}: {ADD_REPEATS}",
        )
    if suspect:
        return (
            Verdict.UNCHANGED,
            f"{shown}: worse by {bad:.3g}, but the 95% interval (worse by at most "
            f"{worse_end:.3g}) cannot reach {stated}",
        )
    return Verdict.UNCHANGED, f"{shown}, no significant change"


class ExactRule:
    """Exact per-case tests, corrected across the cases of one check."""

    name = RuleName.EXACT

    def compare(
        self, case_id: str, base: CaseBand | None, cand: CaseBand | None, settings: RuleSettings
    ) -> ComparedCase:
        """Per-case statistics; the verdicts wait for `decide`, which knows every case."""
        frame = case_frame(base, cand)
        tests: list[PendingTest] = []
        scorers = []
        if frame is None:
            assert base is not None and cand is not None
            if cand.valid - cand.answered > 0:
                args = (base.answered, base.valid, cand.answered, cand.valid)
                tests.append(
                    PendingTest(
                        family="errors",
                        scorer=None,
                        p=stats.fisher_regress(*args),
                        pmin=stats.fisher_regress_min(*args),
                    )
                )
        for key, b, c in scorer_pairs(base, cand):
            entry = ComparedScorer.between(key, b, c)
            if frame is not None or b is None or c is None:
                entry.verdict = Verdict.UNMEASURED
                entry.reason = unjudged(frame)
            elif not (b.reliable and c.reliable):
                entry.verdict = Verdict.UNMEASURED
                entry.reason = (
                    "measured with several calls at once; timing not comparable (use --jobs 1)"
                )
            elif min(b.n, c.n) < settings.min_valid:
                entry.verdict = Verdict.INCONCLUSIVE
                entry.reason = (
                    f"only {min(b.n, c.n)} valid repeat(s) on one side; {settings.min_valid} needed"
                )
            else:
                entry.pending = True
                # `decide` sees every case with the rule-wide settings: resolve this case's here
                entry.gate = Gate(**asdict(settings.scorer(key, continuous=b.kind == "continuous")))
                tests.extend(_binary_tests(key, b, c))
                if (
                    b.kind == "continuous"
                    and len(b.values) >= settings.min_valid
                    and len(c.values) >= settings.min_valid
                ):
                    welch_tests, evidence = _welch_tests(key, b, c)
                    tests.extend(welch_tests)
                    entry.evidence.values = evidence
            scorers.append(entry)
        case = ComparedCase(case_id=case_id, scorers=scorers, tests=tests, **(frame or {}))
        if base is not None and cand is not None:
            case.valid = ValidCounts(
                baseline=(base.answered, base.valid), candidate=(cand.answered, cand.valid)
            )
        return case

    def decide(
        self, cases: list[ComparedCase], settings: RuleSettings
    ) -> tuple[list[CaseReport], RuleSummary]:
        """Corrections across cases, then each scorer's and case's verdict."""
        all_tests = [t for c in cases for t in c.tests or []]
        alphas = _family_alphas(all_tests, settings.alpha)
        thresholds: dict[str, float] = {}
        for family in DISCRETE:
            pmins = [_pmin(t) for t in all_tests if t.family == family]
            a = alphas[family]
            thresholds[family] = stats.tarone_threshold(pmins, a) if pmins else a
        tested: dict[int, _Tested] = {}
        for family in CONTINUOUS:
            fam = [t for t in all_tests if t.family == family]
            ps = [t.p for t in fam]
            for t, thr, rej in zip(
                fam,
                stats.holm_thresholds(ps, alphas[family]),
                stats.holm(ps, alphas[family]),
                strict=True,
            ):
                tested[id(t)] = _Tested(t.p, thr, rej)
        for t in all_tests:
            if t.family in DISCRETE:
                thr = thresholds[t.family]
                tested[id(t)] = _Tested(t.p, thr, t.p <= thr * (1 + 1e-12))

        out = []
        for case in cases:
            by_scorer: dict[str | None, dict[str, _Tested]] = {}
            for t in case.tests or []:
                by_scorer.setdefault(t.scorer, {})[t.family] = tested[id(t)]
            scorers = [
                self._finish_scorer(entry, by_scorer.get(entry.key, {}), settings)
                for entry in case.scorers
            ]
            out.append(self._finish_case(case, scorers, by_scorer.get(None, {})))
        k_counts = {
            f: sum(
                1 for t in all_tests if t.family == f and _pmin(t) <= thresholds[f] * (1 + 1e-12)
            )
            for f in DISCRETE
        }
        alpha = settings.alpha
        suite = RuleSummary(
            procedure="one-sided Fisher exact per case with Tarone's correction; "
            "one-sided Welch with Holm's correction for continuous scores; alpha split "
            "evenly between the families that can fail the check",
            alpha=alpha,
            family_alpha={f: _r(alphas[f]) for f in (*DISCRETE, *CONTINUOUS)},
            K={f: max(1, round(alphas[f] / thresholds[f])) for f in DISCRETE},
            testable=k_counts,
            thresholds={f: _r(thresholds[f]) for f in DISCRETE},
            continuous_tests=sum(1 for t in all_tests if t.family == "worse"),
        )
        return out, suite

    @staticmethod
    def _finish_case(
        case: ComparedCase, scorers: list[ScorerReport], case_tests: dict[str, _Tested]
    ) -> CaseReport:
        decided: dict[str, object] = {}
        if case.valid is not None:
            decided["valid"] = case.valid
        flaky = {
            s.key: s.baseline.rate
            for s in scorers
            if s.baseline.rate is not None and 0 < s.baseline.rate < 1
        }
        if flaky:
            decided["flaky"] = flaky
        verdict, reason = case.verdict, case.reason
        errors = case_tests.get("errors")
        if verdict is not None and reason is not None:
            pass
        elif errors is not None and errors.rejected:
            assert case.valid is not None
            (ok_b, n_b), (ok_c, n_c) = case.valid.baseline, case.valid.candidate
            verdict = Verdict.BROKEN
            reason = (
                f"target errors rose: valid results {ok_b}/{n_b} -> {ok_c}/{n_c} "
                f"(p={errors.p:.3g} <= {errors.threshold:.3g})"
            )
            decided["errors_test"] = ErrorsTest(p=_r(errors.p), threshold=_r(errors.threshold))
        else:
            judged = [s.verdict for s in scorers if s.verdict is not Verdict.UNMEASURED]
            if not judged:
                verdict = Verdict.INCONCLUSIVE
                reason = "no scorer could be judged: " + "; ".join(s.reason for s in scorers[:1])
            else:
                verdict = worst(judged)
                if verdict is Verdict.UNCHANGED:
                    reason = "no significant change"
                else:
                    first = next(s for s in scorers if s.verdict is verdict)
                    reason = f"{first.key}: {first.reason}"
        return CaseReport.model_validate(
            {
                "case_id": case.case_id,
                "verdict": verdict,
                "reason": reason,
                "scorers": scorers,
                **decided,
            }
        )

    @staticmethod
    def _finish_scorer(
        entry: ComparedScorer, tests: dict[str, _Tested], settings: RuleSettings
    ) -> ScorerReport:
        if not entry.pending:
            assert entry.verdict is not None and entry.reason is not None
            return ScorerReport.model_validate(entry.dump())
        b, c = entry.baseline, entry.candidate
        assert entry.gate is not None
        assert b.k is not None and b.n is not None and c.k is not None and c.n is not None
        is_continuous = b.values is not None
        gate = entry.gate
        evidence = entry.evidence
        verdicts: list[tuple[Verdict, str]] = []

        # Pass rates (every scorer has one). A scorer's own min_effect is in its own units:
        # a rate for pass/fail scorers, score units for continuous ones; --min-effect is a rate.
        reg, imp = tests["regress"], tests["improve"]
        rb, rc = b.k / b.n, c.k / c.n
        drop = rb - rc
        me, suspect = gate.min_effect, gate.suspect_drop
        lo, hi = stats.newcombe(b.k, b.n, c.k, c.n)
        mde = stats.min_detectable_drop(b.k, b.n, c.n, reg.threshold)
        b.wilson = [_round(x) for x in stats.wilson(b.k, b.n)]
        c.wilson = [_round(x) for x in stats.wilson(c.k, c.n)]
        evidence.test = "fisher"
        evidence.diff = _r(rc - rb)
        evidence.newcombe = [_r(lo), _r(hi)]
        evidence.p_regress = _r(reg.p)
        evidence.p_improve = _r(imp.p)
        evidence.threshold = _r(reg.threshold)
        evidence.min_effect = me
        evidence.suspect_drop = suspect
        evidence.min_detectable_drop = _r(mde)
        rate = f"{b.k}/{b.n} -> {c.k}/{c.n}"
        if reg.rejected and drop >= me - stats.TOL:
            verdicts.append(
                (Verdict.REGRESSED, f"pass rate {rate} (p={reg.p:.3g} <= {reg.threshold:.3g})")
            )
        elif imp.rejected and -drop >= me - stats.TOL:
            verdicts.append(
                (Verdict.IMPROVED, f"pass rate {rate} (p={imp.p:.3g} <= {imp.threshold:.3g})")
            )
        elif drop >= suspect - stats.TOL and -lo >= me - stats.TOL:
            verdicts.append(
                (
                    Verdict.INCONCLUSIVE,
                    f"pass rate {rate}: a drop of {drop:.2f}, not significant at this N "
                    f"(p={reg.p:.3g} > {reg.threshold:.3g}); {ADD_REPEATS}",
                )
            )
        elif drop >= suspect - stats.TOL:
            verdicts.append(
                (
                    Verdict.UNCHANGED,
                    f"{rate}: a drop of {drop:.2f} whose 95% interval (at most {-lo:.2f}) "
                    f"cannot reach min_effect {me:g}",
                )
            )
        else:
            detect = (
                f"smallest detectable drop here {mde:.2f}"
                if mde is not None
                else "no drop detectable at this N"
            )
            verdicts.append((Verdict.UNCHANGED, f"{rate}, no significant change ({detect})"))

        # values (continuous scorers)
        values = evidence.values
        if is_continuous and values is not None:
            assert b.mean is not None and c.mean is not None and values.diff is not None
            cme = gate.value_min_effect
            higher_better = values.direction != "lower_is_better"
            diff = values.diff
            bad = -diff if higher_better else diff  # how much worse the candidate is
            shown = f"mean {b.mean} -> {c.mean}"
            if values.deterministic:
                if abs(diff) > cme + stats.TOL and not stats.close(b.mean, c.mean):
                    verdict = Verdict.REGRESSED if bad > 0 else Verdict.IMPROVED
                    verdicts.append(
                        (verdict, f"{shown}: deterministic change (both sides constant)")
                    )
                else:
                    verdicts.append((Verdict.UNCHANGED, f"{shown}: constant and equal"))
            else:
                verdicts.append(_value_verdict(tests, values, cme, b.mean, shown))
        verdict = worst([v for v, _ in verdicts])
        return ScorerReport(
            key=entry.key,
            verdict=verdict,
            reason=next(r for v, r in reversed(verdicts) if v is verdict),  # values speak first,
            baseline=b,
            candidate=c,
            evidence=evidence,
            title=entry.title,
        )
