"""A case's runs and its flakiness, from ledger rows: each run's pass rate with its Wilson interval,
and the pool of the current target version's runs, each distinct sample counted once."""

from __future__ import annotations

from typing import Any

import pytest
from scipy.stats import binomtest

from noisefloor.errors import UsageError
from noisefloor.rules.history import case_history, suite_history


def _ci(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return ci.low, ci.high


def _rows(
    run: str,
    statuses: str,
    *,
    version: str = "v1",
    case: str = "c",
    case_key: str = "k1",
    epoch: int = 0,
    first: int = 0,
    suite: str = "s",
    label: str | None = None,
) -> list[dict[str, Any]]:
    """One run's rows for one case: `statuses` as letters, p(ass) f(ail) i(nvalid), one a repeat
    from `first` on; runs of one version, input and epoch share sample files by repeat."""
    word = {"p": "pass", "f": "fail", "i": "invalid"}
    return [
        {
            "run_id": run,
            "suite": suite,
            "label": label,
            "started_at": f"2026-12-01T{run}",
            "target_key": version,
            "model": "m",
            "case_id": case,
            "case_key": case_key,
            "repeat_idx": first + i,
            "status": word[s],
            "reason": "ok" if s == "p" else "no",
            "output_text": f"out {i}",
            "sample_path": f"samples/{suite}/{version}/e{epoch}/{case}/{case_key}/r{first + i}.json",
        }
        for i, s in enumerate(statuses)
    ]


def test_each_run_has_its_pass_rate_and_wilson_interval_newest_first() -> None:
    rows = _rows("01", "pppff") + _rows("02", "ppppi", epoch=1)

    found = case_history(rows, "c", last=10)

    assert [r.run_id for r in found.runs] == ["02", "01"]
    newest, oldest = found.runs
    assert (newest.passes, newest.valid, newest.invalid) == (4, 4, 1)
    assert (oldest.passes, oldest.valid) == (3, 5)
    assert oldest.rate == pytest.approx(0.6)
    assert oldest.interval == pytest.approx(_ci(3, 5), abs=1e-12)
    assert newest.interval == pytest.approx(_ci(4, 4), abs=1e-12)


def test_flakiness_pools_only_the_current_target_versions_runs() -> None:
    rows = (
        _rows("01", "fffff", version="old")
        + _rows("02", "pfpfp", version="new")
        + _rows("03", "ppppf", version="new", epoch=1)
    )

    flakiness = case_history(rows, "c", last=10).flakiness

    assert flakiness.target_key == "new"
    assert (flakiness.runs, flakiness.passes, flakiness.valid) == (2, 7, 10)
    assert flakiness.interval == pytest.approx(_ci(7, 10), abs=1e-12)
    assert flakiness.flaky


def test_a_sample_several_runs_hold_counts_once_with_the_newest_runs_status() -> None:
    # the second run reused the first one's cached samples r0-r4 and took r5-r9 fresh; a rescore
    # then judged the first repeat again
    first = _rows("01", "fpppp")
    second = _rows("02", "ppppp") + _rows("02", "fffff", first=5)

    flakiness = case_history(first + second, "c", last=10).flakiness

    assert (flakiness.runs, flakiness.valid, flakiness.passes, flakiness.shared) == (2, 10, 5, 5)
    assert flakiness.interval == pytest.approx(_ci(5, 10), abs=1e-12)
    # a third run holding the same ten: still ten samples, five of them held by several runs
    third = _rows("03", "fpppp") + _rows("03", "fffff", first=5)
    again = case_history(first + second + third, "c", last=10).flakiness
    assert (again.runs, again.valid, again.passes, again.shared) == (3, 10, 4, 10)


def test_last_bounds_the_runs_listed_and_the_runs_pooled() -> None:
    rows = _rows("01", "fffff") + _rows("02", "ppppp", epoch=1) + _rows("03", "ppppp", epoch=2)

    found = case_history(rows, "c", last=2)

    assert [r.run_id for r in found.runs] == ["03", "02"]
    assert found.total_runs == 3
    assert (found.flakiness.runs, found.flakiness.passes, found.flakiness.valid) == (2, 10, 10)
    assert not found.flakiness.flaky


def test_a_changed_input_starts_a_new_pool_under_the_same_version() -> None:
    rows = _rows("01", "fffff", case_key="before") + _rows("02", "ppp", case_key="after")

    flakiness = case_history(rows, "c", last=10).flakiness

    assert (flakiness.runs, flakiness.passes, flakiness.valid) == (1, 3, 3)


@pytest.mark.parametrize(
    ("statuses", "flaky", "rate"),
    [("ppppp", False, 1.0), ("fffff", False, 0.0), ("pffff", True, 0.2), ("iiiii", False, None)],
)
def test_flaky_means_a_pooled_rate_strictly_between_0_and_1(
    statuses: str, flaky: bool, rate: float | None
) -> None:
    flakiness = case_history(_rows("01", statuses), "c", last=10).flakiness

    assert flakiness.flaky is flaky
    assert flakiness.rate == rate
    assert (flakiness.interval is None) is (rate is None)
    assert flakiness.invalid == statuses.count("i")


def test_a_case_in_several_suites_needs_one_named() -> None:
    rows = _rows("01", "ppp", suite="a") + _rows("02", "ppp", suite="b")

    with pytest.raises(UsageError) as raised:
        case_history(rows, "c", last=10)

    assert "'c' is in 2 suites: a, b" in raised.value.message
    assert "--suite a" in (raised.value.hint or "")


def test_a_suites_history_has_every_case_worst_first() -> None:
    rows = (
        _rows("01", "ppppp", case="steady")
        + _rows("01", "ppfff", case="wobbly")
        + _rows("01", "fffff", case="broken")
        + _rows("02", "ppppp", case="steady", epoch=1)
    )

    found = suite_history(rows, last=10)

    assert [(h.case_id, h.flakiness.passes, h.flakiness.valid) for h in found] == [
        ("broken", 0, 5),
        ("wobbly", 2, 5),
        ("steady", 10, 10),
    ]


def test_every_name_on_the_page_and_in_markdown_is_escaped() -> None:
    pytest.importorskip("matplotlib")
    from noisefloor.report.history import render
    from noisefloor.report.history_html import render as render_page

    rows = _rows("01", "pf", label="<script>alert(1)</script>")
    for row in rows:
        row["model"] = "<b>m|odel</b>"
    found = case_history(rows, "c", last=10)

    page = render_page("s", [found])
    markdown = render(found, "markdown")

    assert "<script>" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;m|odel" in page
    assert "<b>m\\|odel</b>" in markdown
