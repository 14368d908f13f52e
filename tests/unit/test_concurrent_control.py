"""A case the deep baseline called regressed, judged against its concurrent control: drift clears
it only when the control measured something."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from noisefloor import stats
from noisefloor.model.parts import Side
from noisefloor.model.records import CaseRecord, RunRecord, TargetRecord
from noisefloor.model.report import CaseReport, Evidence, ScorerReport, Sequential
from noisefloor.model.verdict import Verdict
from noisefloor.operations import concurrent_control
from noisefloor.operations.concurrent_control import ConcurrentControl, replayed, stepped
from noisefloor.rules.control import Windows, confirmed
from noisefloor.settings import CONTROL_LOOKS, RuleSettings
from noisefloor.settings.design import Design
from noisefloor.store.store import Store

SCREENED = CaseReport(
    case_id="c",
    verdict=Verdict.REGRESSED,
    reason="1:contains: pass rate 50/50 -> 2/5 (p=0.001 <= 0.004)",
    scorers=[],
    sequential=Sequential(
        baseline_repeats=50, candidate_repeats=5, screen=5, verdict_repeats=5, stopped="decided"
    ),
)


def _against(verdict: Verdict, control: tuple[int, int], fresh: tuple[int, int]) -> CaseReport:
    scorer = ScorerReport(
        key="1:contains",
        verdict=verdict,
        reason="",
        baseline=Side(k=control[0], n=control[1]),
        candidate=Side(k=fresh[0], n=fresh[1]),
        evidence=Evidence(p_regress=0.5),
    )
    return CaseReport(
        case_id="c", verdict=verdict, reason="no significant change", scorers=[scorer]
    )


def test_a_measured_control_no_worse_than_the_candidate_calls_it_drift() -> None:
    case = confirmed(
        SCREENED, _against(Verdict.UNCHANGED, (20, 40), (20, 40)), (5, 45, 50, 90), "", 2
    )
    assert case.verdict is Verdict.UNCHANGED
    assert "(drift), not a regression" in case.reason and "50/50 -> 2/5" in case.reason
    assert case.sequential is not None and case.sequential.control is not None
    assert (case.sequential.control.repeats, case.sequential.candidate_repeats) == (40, 45)
    assert "20/40 -> 20/40" in case.sequential.control.reason


def test_a_control_the_infrastructure_left_unscored_never_clears_a_regression() -> None:
    # every control repeat lost to the infrastructure: nothing measured on the control's side
    case = confirmed(
        SCREENED, _against(Verdict.INCONCLUSIVE, (0, 0), (20, 40)), (5, 45, 50, 90), "", 2
    )
    assert case.verdict is Verdict.REGRESSED
    assert case.sequential is not None and case.sequential.control is not None
    assert case.sequential.control.reason.startswith("no concurrent control: too few of its")


def test_a_regression_the_control_confirms_keeps_the_deep_evidence() -> None:
    case = confirmed(
        SCREENED, _against(Verdict.REGRESSED, (20, 40), (0, 40)), (5, 45, 50, 90), "", 2
    )
    assert case.verdict is Verdict.REGRESSED and case.reason == SCREENED.reason
    assert case.sequential is not None and case.sequential.control is not None
    assert case.sequential.control.verdict is Verdict.REGRESSED


def test_without_a_control_the_deep_verdict_stands_and_says_why() -> None:
    case = confirmed(SCREENED, None, None, "its input changed since the baseline", 2)
    assert case.verdict is Verdict.REGRESSED
    assert case.sequential is not None and case.sequential.control is not None
    assert case.sequential.control.reason == (
        "no concurrent control: its input changed since the baseline"
    )


def _verdict(case_id: str, verdict: Verdict, why: str = "") -> CaseReport:
    return CaseReport(case_id=case_id, verdict=verdict, reason=why, scorers=[])


def _window(size: int) -> Windows:
    """A control of `size` repeats past a 100-deep baseline, beside the candidate's r5 up."""
    return (5, 5 + size, 100, 100 + size)


def test_the_controls_looks_stop_a_confirmed_case_and_judge_it_on_with_the_rest() -> None:
    """`big` is worse than its control at the first look and stops at 20; `drifted` is not,
    and goes on to the last look; every look judges both (one family), at its share of alpha."""
    taken: list[tuple[list[str], int]] = []
    judged: list[tuple[dict[str, Windows], float]] = []

    def look(running: list[str], size: int) -> dict[str, Windows]:
        taken.append((list(running), size))
        return {cid: _window(size) for cid in running}

    def judge(windows: Mapping[str, Windows], share: float) -> dict[str, CaseReport]:
        judged.append((dict(windows), share))
        return {
            cid: _verdict(cid, Verdict.REGRESSED if cid == "big" else Verdict.UNCHANGED)
            for cid in windows
        }

    windows = stepped(["big", "drifted"], look, judge, (10, 20, 40, 80))
    assert windows == {"big": _window(10), "drifted": _window(80)}
    assert taken == [
        (["big", "drifted"], 10),
        (["drifted"], 20),
        (["drifted"], 40),
        (["drifted"], 80),
    ]
    assert [sorted(w) for w, _ in judged] == [["big", "drifted"]] * 4
    assert [w["big"] for w, _ in judged] == [_window(10)] * 4
    assert [share for _, share in judged] == pytest.approx([0.125, 0.125, 0.25, 0.5])


def test_a_case_in_doubt_stops_where_its_control_shows_no_drop_worth_more_repeats() -> None:
    """Against its control a case is unchanged with no doubt left (no scorer, so no p of a
    worsening): in doubt after the looks, it stops at the first look as the check's futility
    bound stops a clear case; regressed after the looks, it goes on to the last, since only a
    confirmation ends it early."""

    def look(running: list[str], size: int) -> dict[str, Windows]:
        return {cid: _window(size) for cid in running}

    def judge(windows: Mapping[str, Windows], share: float) -> dict[str, CaseReport]:
        return {cid: _verdict(cid, Verdict.UNCHANGED) for cid in windows}

    windows = stepped(["doubt", "flagged"], look, judge, (10, 20, 40, 80), doubt={"doubt"})
    assert windows == {"doubt": _window(10), "flagged": _window(80)}


def test_a_stored_check_judged_again_takes_each_case_from_the_look_it_stopped_at(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The controls' looks replayed from a run's windows: the family at each look is every
    control cut to that look, and a case's verdict is the one of the look it stopped at, not of
    a later look that judged it beside the others."""
    calls: list[tuple[dict[str, Windows], float]] = []

    def fake(
        store: Any, base: Any, cand: Any, windows: Mapping[str, Windows], at: RuleSettings
    ) -> dict[str, CaseReport]:
        calls.append((dict(windows), at.alpha))
        # `big` is regressed at every look, `drifted` never; each reason names the look's alpha
        return {
            cid: _verdict(
                cid,
                Verdict.REGRESSED if cid == "big" else Verdict.UNCHANGED,
                f"alpha {at.alpha:g}",
            )
            for cid in windows
        }

    monkeypatch.setattr(concurrent_control, "control_verdicts", fake)
    stored = {"big": _window(20), "drifted": _window(80)}
    settings = RuleSettings(alpha=0.04)
    verdicts = replayed(None, None, None, stored, [20, 40, 80], settings)  # type: ignore[arg-type]
    # (the looks of a run kept when the controls looked at 20, 40 and 80)
    assert {cid: v.reason for cid, v in verdicts.items()} == {
        "big": "alpha 0.01",
        "drifted": "alpha 0.02",
    }
    assert [w for w, _ in calls] == [
        {"big": _window(20), "drifted": _window(20)},
        {"big": _window(20), "drifted": _window(40)},
        {"big": _window(20), "drifted": _window(80)},
    ]
    # a run kept before the controls took looks: one look of each control's own repeats
    calls.clear()
    replayed(None, None, None, stored, [], settings)  # type: ignore[arg-type]
    assert calls == [(stored, 0.04)]


def _record(cases: list[CaseRecord]) -> RunRecord:
    return RunRecord(
        run_id="r",
        suite="s",
        started_at="",
        finished_at="",
        harness_version="0",
        target=TargetRecord(kind="command", key="v1", spec={}),
        epoch=0,
        jobs=1,
        calls=0,
        cases=cases,
    )


def _case_record(case_id: str, repeats: int, sample_dir: str) -> CaseRecord:
    return CaseRecord(
        case_id=case_id,
        case_key="k",
        input="q",
        repeats=repeats,
        sample_dir=sample_dir,
        scorers=[],
    )


class _Session:
    """A check's session as a control takes its repeats through it: the calls it was asked
    for, and no target called."""

    def __init__(self) -> None:
        self.built = SimpleNamespace(record=SimpleNamespace(key="v1"))
        self.taken = 0
        self.asked: list[tuple[list[int], list[int]]] = []

    def take_beside(self, cases: list[CaseRecord], other: Any, others: list[CaseRecord]) -> int:
        self.asked.append(([c.repeats for c in cases], [o.repeats for o in others]))
        return 0


def test_each_look_of_a_control_is_judged_at_its_share_of_alpha(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The controls' looks of 5, 10, 20, 40 and 80 spend alpha as (n / 80): 1/16, 1/16, 1/8,
    1/4 and 1/2 of the check's, and the shares sum to all of it."""
    judged: list[tuple[dict[str, Windows], float]] = []

    def fake(
        store: Any, base: Any, cand: Any, windows: Mapping[str, Windows], at: RuleSettings
    ) -> dict[str, CaseReport]:
        judged.append((dict(windows), at.alpha))
        return {cid: _verdict(cid, Verdict.INCONCLUSIVE) for cid in windows}

    monkeypatch.setattr(concurrent_control, "control_verdicts", fake)
    session = _Session()
    control = ConcurrentControl(Store(tmp_path), None, _record([]), session, None)  # type: ignore[arg-type]
    pool = _record([_case_record("c", 100, "samples/s/base")])
    cases = {"c": _case_record("c", 60, "samples/s/cand")}
    taken = control.take(
        cases, {"c": _verdict("c", Verdict.INCONCLUSIVE)}, pool, RuleSettings(alpha=0.08), _record
    )
    assert [alpha for _, alpha in judged] == pytest.approx([0.005, 0.005, 0.01, 0.02, 0.04])
    assert sum(alpha for _, alpha in judged) == pytest.approx(0.08)
    assert [w["c"] for w, _ in judged] == [(60, 60 + m, 0, m) for m in CONTROL_LOOKS]
    # each look took both sides to its size: the candidate past its 60, the control past the
    # baseline's held repeats (none on disk here)
    assert session.asked == [([60 + m], [m]) for m in CONTROL_LOOKS]
    assert taken.windows == {"c": (60, 140, 0, 80)}


def test_the_checks_own_looks_spend_alpha_in_proportion_to_their_repeats() -> None:
    design = Design()
    sizes = design.schedule(5)
    assert sizes == [5, 10, 20, 40, 60]
    shares = stats.spending(sizes, design.rho)
    assert shares == pytest.approx([1 / 12, 1 / 12, 1 / 6, 1 / 3, 1 / 3])
    looked = [design.look(RuleSettings(alpha=0.06), share).alpha for share in shares]
    assert looked == pytest.approx([0.005, 0.005, 0.01, 0.02, 0.02])
