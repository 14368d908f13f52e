"""A case cleared by its concurrent control only on evidence, and a control taken only where drift
could explain the drop: the rule exact's own tables, judged by `rules.control` and `rules.drift`."""

from __future__ import annotations

import pytest

from noisefloor.model.report import CaseReport, Sequential
from noisefloor.model.verdict import Verdict
from noisefloor.rules import get_rule
from noisefloor.rules.control import confirmed, deciding_repeats
from noisefloor.rules.drift import drift_check, drift_words
from noisefloor.rules.sequential import Stop, settle
from noisefloor.settings import DRIFT_PRIOR, RuleName, RuleSettings
from noisefloor.stats.drift import Spread
from tests.builders import case_band, scorer_band

#: The last look of a check whose threshold there was 0.0028, as in an 8-case suite of a real
#: model's check (a look's share of alpha over Tarone's K).
LAST_LOOK = RuleSettings(rule=RuleName.EXACT, alpha=0.0028)


def _compared(base: tuple[int, int], cand: tuple[int, int], settings: RuleSettings) -> CaseReport:
    """One case's pass rate compared by rule exact, and decided as a family of one."""
    rule = get_rule(RuleName.EXACT)
    case = rule.compare("c", case_band(scorer_band(*base)), case_band(scorer_band(*cand)), settings)
    (decided,), _ = rule.decide([case], settings)
    return decided


def _screened(base: tuple[int, int], cand: tuple[int, int], stop: Stop) -> CaseReport:
    case = settle(_compared(base, cand, LAST_LOOK), stop, "raise --max-repeats to narrow it")
    return case.model_copy(
        update={
            "sequential": Sequential(
                baseline_repeats=base[1],
                candidate_repeats=cand[1],
                screen=5,
                verdict_repeats=cand[1],
                stopped=stop.value,
            )
        }
    )


def test_a_doubt_a_short_control_cannot_resolve_stays_inconclusive() -> None:
    """43/100 -> 13/60 is in doubt at the cap (a drop of 0.21, p above the look's threshold);
    6/10 beside 5/10 rules out almost nothing, and must not read `unchanged`."""
    screened = _screened((43, 100), (13, 60), Stop.CAP)
    assert screened.verdict is Verdict.INCONCLUSIVE
    against = _compared((6, 10), (5, 10), RuleSettings(rule=RuleName.EXACT, alpha=0.05 / 8))
    assert against.verdict is Verdict.UNCHANGED  # what the rule says of the pair alone
    case = confirmed(screened, against, (60, 70, 100, 110), "", 3)
    assert case.verdict is Verdict.INCONCLUSIVE
    assert case.sequential is not None and case.sequential.control is not None
    control = case.sequential.control
    assert control.verdict is Verdict.INCONCLUSIVE and control.repeats == 10
    assert "pass rate 6/10 -> 5/10: the 95% interval of change [" in control.reason
    assert "still reaches a drop of 0.2" in control.reason
    assert "repeats of each version beside the other would decide it" in control.reason
    assert "43/100 -> 13/60" in case.reason


def test_a_control_whose_interval_excludes_the_drop_clears_the_doubt() -> None:
    screened = _screened((43, 100), (13, 60), Stop.CAP)
    against = _compared((40, 80), (42, 80), RuleSettings(rule=RuleName.EXACT, alpha=0.05 / 2))
    case = confirmed(screened, against, (60, 140, 100, 180), "", 3)
    assert case.verdict is Verdict.UNCHANGED
    assert case.reason.startswith("unchanged against the baseline's own version taken beside")


def test_drift_a_short_control_suggests_is_not_called_unchanged_either() -> None:
    """A regressed case whose control shows no drop on 20 a side: drift, but not proof enough
    that no drop of 0.2 is there, so inconclusive, and its reason still names the drift."""
    screened = _screened((63, 100), (10, 40), Stop.DECIDED)
    assert screened.verdict is Verdict.REGRESSED
    against = _compared((10, 20), (10, 20), RuleSettings(rule=RuleName.EXACT, alpha=0.05 / 8))
    case = confirmed(screened, against, (40, 60, 100, 120), "", 3)
    assert case.verdict is Verdict.INCONCLUSIVE
    assert "(drift), not a regression" in case.reason
    assert "would decide it" in case.reason


@pytest.mark.parametrize(
    ("base", "cand", "needed"),
    [
        ((10, 20), (10, 20), 49),  # 1.96^2 * (0.25 + 0.25) / 0.2^2
        ((6, 10), (5, 10), 189),  # 1.96^2 * (0.24 + 0.25) / 0.1^2: room of 0.1 left
        ((8, 10), (5, 10), -1),  # a drop of 0.3 seen: no number of repeats excludes 0.2
    ],
)
def test_the_repeats_that_would_decide_a_doubt(
    base: tuple[int, int], cand: tuple[int, int], needed: int
) -> None:
    (scorer,) = _compared(base, cand, RuleSettings(rule=RuleName.EXACT)).scorers
    assert deciding_repeats(scorer) == needed


def _spread(rho: float, sessions: int = 0) -> dict[str, Spread]:
    return {"0:contains": Spread(rho, sessions, rho, sessions)}


#: The threshold the look that called these cases regressed held them to.
LOOK = RuleSettings(rule=RuleName.EXACT, alpha=0.05 / 12)


@pytest.mark.parametrize(
    ("base", "cand", "rho", "beyond"),
    [
        # an always-passing case has no room to drift: a break is beyond any allowance
        ((100, 100), (0, 5), DRIFT_PRIOR, True),
        # a mid-range drop the deep baseline calls regressed, well within the prior's drift
        ((50, 100), (0, 10), DRIFT_PRIOR, False),
        # the same drop once the store has shown the case's sessions agree: beyond it
        ((50, 100), (0, 10), 0.001, True),
        ((70, 100), (4, 20), DRIFT_PRIOR, False),
        ((70, 100), (4, 20), 0.0, True),
    ],
)
def test_a_drop_is_beyond_drift_only_where_no_allowed_drift_reaches_it(
    base: tuple[int, int], cand: tuple[int, int], rho: float, beyond: bool
) -> None:
    case = _compared(base, cand, LOOK)
    assert case.verdict is Verdict.REGRESSED
    check = drift_check(case, _spread(rho), {}, DRIFT_PRIOR)
    assert check is not None
    assert check.beyond is beyond
    assert (check.p <= check.threshold) is beyond
    assert check.threshold == case.scorers[0].evidence.threshold
    # the deep test's own p is never above the drift test's: drift only widens the doubt
    assert check.p >= (case.scorers[0].evidence.p_regress or 0) * 0.5
    words = drift_words(check)
    assert words.startswith(f"0:contains {base[0]}/{base[1]} -> {cand[0]}/{cand[1]} has p=")
    assert ("<=" in words) is beyond


def test_a_case_regressed_by_no_pass_rate_has_no_drift_test() -> None:
    """A mean that got worse, or a pass rate not regressed: nothing for the drift model to
    test, so a control decides."""
    unchanged = _compared((50, 100), (5, 10), LOOK)
    assert unchanged.verdict is not Verdict.REGRESSED
    assert drift_check(unchanged, _spread(0.0), {}, DRIFT_PRIOR) is None
    regressed = _compared((100, 100), (0, 5), LOOK)
    assert drift_check(regressed, {}, {}, DRIFT_PRIOR) is None
