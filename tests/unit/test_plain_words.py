"""The plain words of a verdict (`report._words`) and the terminal report drawn from them: scorer
titles, what an unchanged case ruled out and what more repeats would rule out, the failing
outputs, the reading of a concurrent control, and a line fitted to the screen."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noisefloor.model.parts import Side
from noisefloor.model.records import FailingExample
from noisefloor.model.report import (
    CaseReport,
    Control,
    Evidence,
    Report,
    Runs,
    RunSummary,
    ScorerReport,
    Sequential,
    Work,
)
from noisefloor.model.verdict import Verdict, scorer_title
from noisefloor.operations.concurrent_control import confirmed
from noisefloor.report import _words
from noisefloor.report._console import Screen
from noisefloor.report.terminal import LISTED, render
from noisefloor.stats import newcombe

# -- scorer titles ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "title"),
    [
        ("json_valid", {}, "json_valid"),
        (
            "contains",
            {"needle": "Paris", "path": "answer", "case_sensitive": False},
            'contains "Paris" at answer',
        ),
        (
            "json_path_equals",
            {"path": "confidence", "value": "high"},
            'json_path_equals "high" at confidence',
        ),
        ("latency", {"max_s": 2.0}, "latency max_s=2.0"),
        ("tokens", {"count": "completion", "max": 0}, "tokens max=0"),
        (
            "json_path_number",
            {
                "path": "score",
                "aggregate": "min",
                "direction": "higher_is_better",
                "min": 0.5,
                "max": None,
            },
            "json_path_number min=0.5 at score",
        ),
        ("contains", {"needle": "x", "case_sensitive": True}, 'contains "x" case_sensitive'),
        ("must_include", {"all": ["a", "b"], "none": []}, 'must_include ["a","b"]'),
    ],
)
def test_a_scorer_reads_as_its_name_and_the_parameters_that_tell_it_apart(name, params, title):
    assert scorer_title(name, params) == title


def test_a_long_parameter_is_cut() -> None:
    assert scorer_title("contains", {"needle": "a" * 60}) == 'contains "' + "a" * 22 + "…"


# -- a report built by hand ------------------------------------------------------------------


def scorer(
    key: str,
    verdict: str,
    base: tuple[int, int],
    cand: tuple[int, int],
    interval: tuple[float, float] | None = None,
    example: FailingExample | None = None,
    suspect_drop: float = 0.2,
) -> ScorerReport:
    evidence = Evidence()
    if interval is not None:
        evidence = Evidence(newcombe=list(interval), suspect_drop=suspect_drop, p_regress=0.5)
    return ScorerReport(
        key=key,
        verdict=Verdict(verdict),
        reason="",
        baseline=Side(k=base[0], n=base[1]),
        candidate=Side(k=cand[0], n=cand[1], example=example),
        evidence=evidence,
        title=scorer_title(key.partition(":")[2], {}),
    )


def case(case_id: str, verdict: str, *scorers: ScorerReport, **extra: Any) -> CaseReport:
    return CaseReport(
        case_id=case_id,
        verdict=Verdict(verdict),
        reason="the rule's reason",
        scorers=list(scorers),
        **extra,
    )


def report(*cases: CaseReport, exit_code: int = 0, **extra: Any) -> Report:
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.verdict.value] = counts.get(c.verdict.value, 0) + 1
    run = RunSummary(
        run_id="r2", started_at="", target_key="t", epoch=0, repeats=5, calls=5, jobs=1,
        label=None, cases=len(cases), target={}, served_models={},
    )  # fmt: skip
    return Report(
        suite="s", rule="exact", baseline="r1", candidate="r2", adopted=False,
        cases=list(cases), warnings=[], counts=counts, exit_code=exit_code,
        runs=Runs(candidate=run), calls=5, work=Work(executed={}, up_to_date={}), **extra,
    )  # fmt: skip


FAIL = FailingExample(repeat=0, output='{"answer": "I don\'t know."}', detail="'Paris' not found")


# -- what was and was not ruled out ----------------------------------------------------------


def test_the_drop_an_interval_leaves_possible() -> None:
    assert (
        _words.possible_drop(scorer("0:a", "unchanged", (7, 10), (5, 10), (-0.298, 0.04))) == 0.298
    )
    assert _words.possible_drop(scorer("0:a", "unchanged", (7, 10), (9, 10), (0.01, 0.3))) == 0.0
    assert _words.possible_drop(scorer("0:a", "unchanged", (7, 10), (7, 10))) is None


def test_an_unchanged_case_says_what_it_ruled_out() -> None:
    c = case("c", "unchanged", scorer("0:a", "unchanged", (100, 100), (5, 5), (-0.434, 0.037)))
    assert _words.case_words(c).words == "no drop over 0.43 found in 5 repeats"


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(2, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.floats(0.05, 0.5),
)
def test_the_repeats_that_rule_a_drop_out_do_and_half_as_many_do_not(base, cand, drop):
    (k_b, n_b), (k_c, n_c) = base, cand
    found = _words.repeats_to_rule_out(k_b, n_b, k_c, n_c, drop)
    rate = k_c / n_c

    def rules_out(n: int) -> bool:
        return -newcombe(k_b, n_b, round(rate * n), n)[0] < drop - 1e-9

    if found is None:
        assert not rules_out(1000)
    else:
        assert rules_out(found)
        if found // 2 > n_c:
            assert not rules_out(found // 2)


def test_doubts_are_the_unchanged_cases_whose_interval_reaches_the_drop_that_matters() -> None:
    r = report(
        case("wide", "unchanged", scorer("0:a", "unchanged", (100, 100), (5, 5), (-0.434, 0.04))),
        case(
            "narrow", "unchanged", scorer("0:a", "unchanged", (100, 100), (60, 60), (-0.06, 0.04))
        ),
        case("gone", "regressed", scorer("0:a", "regressed", (100, 100), (0, 5), (-1.0, -0.5))),
    )
    (doubt,) = _words.doubts(r)
    assert (doubt.case_id, round(doubt.drop, 3), doubt.matters, doubt.repeats) == (
        "wide",
        0.434,
        0.2,
        20,
    )
    text = _words.doubt_text(r)
    assert text is not None and "wide (up to 0.43)" in text and "--repeats 20" in text
    assert _words.doubt_text(r, short=True) == (
        "1 case may hide a drop over 0.20: `--repeats 20` could rule it out"
    )


def test_the_baseline_s_own_samples_hide_no_drop() -> None:
    """A candidate of the baseline's own version and input rests on the same samples: however
    wide its interval, nothing can have dropped."""
    same = Sequential(
        baseline_repeats=5, candidate_repeats=5, screen=5, verdict_repeats=5, stopped="same"
    )
    c = case(
        "c", "unchanged", scorer("0:a", "unchanged", (5, 5), (5, 5), (-0.43, 0.43)), sequential=same
    )
    assert _words.doubts(report(c)) == []
    assert _words.case_words(c).words == "the baseline's own version: the same 5 repeats"


# -- failing outputs -------------------------------------------------------------------------


def test_one_failing_output_is_quoted_once_with_every_reason() -> None:
    other = FAIL.model_copy(update={"detail": 'found "low", expected "high"'})
    c = case(
        "c",
        "regressed",
        scorer("0:json_valid", "unchanged", (5, 5), (5, 5)),
        scorer("1:contains", "regressed", (5, 5), (0, 5), example=FAIL),
        scorer("2:json_path_equals", "regressed", (5, 5), (0, 5), example=other),
    )
    (failing,) = _words.failing_outputs(c)
    assert failing.why == '\'Paris\' not found; found "low", expected "high"'
    assert failing.gist == FAIL.output


def test_a_failed_call_reads_without_its_outcome_code() -> None:
    crashed = FailingExample(
        repeat=2, output="", stderr="boom", detail="error:exit: exited with status 1"
    )
    c = case("c", "broken", scorer("0:json_valid", "unmeasured", (5, 5), (0, 5), example=crashed))
    (failing,) = _words.failing_outputs(c)
    assert (failing.repeat, failing.why, failing.gist) == (
        2,
        "exited with status 1",
        "stderr: boom",
    )


# -- a concurrent control --------------------------------------------------------------------


def _screened(stopped: str, verdict: str) -> CaseReport:
    seq = Sequential(
        baseline_repeats=50, candidate_repeats=5, screen=5, verdict_repeats=5, stopped=stopped
    )
    return case("c", verdict, scorer("1:contains", verdict, (50, 50), (0, 5)), sequential=seq)


@pytest.mark.parametrize(
    ("stopped", "screened", "control", "against"),
    [
        ("decided", "regressed", "regressed", False),  # confirmed: the deep evidence stays
        ("decided", "regressed", "unchanged", True),  # drift: judged against the control
        ("cap", "inconclusive", "regressed", True),  # in doubt: judged against the control
        ("cap", "inconclusive", "unchanged", True),
    ],
)
def test_the_words_read_a_control_as_the_check_judged_with_it(stopped, screened, control, against):
    judged = case("c", control, scorer("1:contains", control, (10, 10), (0, 10)))
    decided = confirmed(_screened(stopped, screened), judged, (5, 15, 50, 60), "", 3)
    assert _words.against_control(decided) is against
    assert _words.candidate_split(decided) == (5, 10)
    assert "10 repeats each" in _words.control_words(decided)
    shown = _words.case_words(decided).words
    assert ("0 of 10 passed" in shown) is against and ("0 of 5 passed" in shown) is not against


def test_without_a_control_nothing_is_said_of_one() -> None:
    no_control = _screened("decided", "regressed")
    no_control.sequential.control = Control(reason="no concurrent control: a pytest target")  # type: ignore[union-attr]
    assert not _words.against_control(no_control)
    assert _words.candidate_split(no_control) is None and _words.control_words(no_control) == ""


# -- the terminal report ---------------------------------------------------------------------


def test_a_line_shortens_the_scorer_then_moves_the_numbers_under_a_long_case_id() -> None:
    s = scorer("1:contains", "regressed", (100, 100), (0, 5))
    s.title = 'contains "a long needle" at answer.text'
    wide = render(report(case("short-id", "regressed", s), exit_code=1), Screen(width=80))
    assert wide.splitlines()[1] == (
        'REGRESSED  short-id  contains "a long needle": 0 of 5 passed, was 100 of 100'
    )
    narrow = render(report(case("short-id", "regressed", s), exit_code=1), Screen(width=64))
    assert narrow.splitlines()[1] == "REGRESSED  short-id  contains: 0 of 5 passed, was 100 of 100"
    long_id = "a-case-whose-id-goes-on-and-on-and-on-and-on"
    text = render(report(case(long_id, "regressed", s), exit_code=1), Screen(width=64))
    lines = text.splitlines()
    assert all(len(line) <= 64 for line in lines), text
    assert lines[1:3] == [
        f"REGRESSED  {long_id}",
        "           contains: 0 of 5 passed, was 100 of 100",
    ]


def test_many_unchanged_cases_are_one_line_and_each_under_v() -> None:
    same = [
        case(f"c{i}", "unchanged", scorer("0:a", "unchanged", (100, 100), (20, 20), (-0.15, 0.04)))
        for i in range(LISTED + 1)
    ]
    folded = render(report(*same)).splitlines()
    assert folded[1:] == [
        f"unchanged  {LISTED + 1} cases: no drop over 0.15 found in any (-v lists each)"
    ]
    listed = render(report(*same), verbosity=1)
    assert all(f"unchanged  c{i}  " in listed for i in range(LISTED + 1))


def test_quiet_keeps_the_outcome_and_what_failed() -> None:
    r = report(
        case("gone", "regressed", scorer("1:contains", "regressed", (5, 5), (0, 5), example=FAIL)),
        case("kept", "unchanged", scorer("0:a", "unchanged", (5, 5), (5, 5), (-0.4, 0.4))),
        exit_code=1,
    )
    quiet = render(r, verbosity=-1).splitlines()
    assert quiet == [
        "1 regressed, 1 unchanged · exit 1 · 5 calls",
        "REGRESSED  gone  contains: 0 of 5 passed, was 5 of 5",
    ]


def test_colour_only_on_a_screen_that_takes_it() -> None:
    r = report(
        case("gone", "regressed", scorer("1:contains", "regressed", (5, 5), (0, 5))), exit_code=1
    )
    assert "\x1b" not in render(r, Screen(color=False))
    coloured = render(r, Screen(color=True))
    assert "\x1b[1;31mREGRESSED" in coloured
