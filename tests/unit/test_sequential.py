"""The sequential design's decisions at each look, its power against a brute-force enumeration
with scipy, and the deep baseline's pool."""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path

import orjson
import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from noisefloor.errors import UsageError
from noisefloor.model.records import CaseBand, CaseRecord, RunRecord, TargetRecord
from noisefloor.model.report import CaseReport
from noisefloor.rules import get_rule
from noisefloor.rules.sequential import Stop, doubt_order, doubt_p, settle, step
from noisefloor.settings import RuleName, RuleSettings
from noisefloor.settings.design import Design
from noisefloor.settings.resolved import parse_age
from noisefloor.stats import Looks, fisher_regress, look_outcome, newcombe, spending
from noisefloor.store.pool import against_pool, held_repeats, pooled_baseline
from noisefloor.store.store import Store
from tests.builders import case_band, scorer_band


def band(k: int, n: int, values: list[float] | None = None) -> CaseBand:
    """Case `c`'s band of one scorer: `k` passes of `n`, or these continuous values."""
    kind = "binary" if values is None else "continuous"
    return case_band(scorer_band(k, n, values=values or [], kind=kind, label="0:s"), case_key="k")


def judged(pairs: dict[str, tuple[CaseBand, CaseBand]], alpha: float = 0.05) -> list[CaseReport]:
    rule = get_rule(RuleName.EXACT)
    settings = RuleSettings(alpha=alpha)
    cases = []
    for case_id, (b, c) in pairs.items():
        case = rule.compare(case_id, b, c, settings)
        case.case_id = case_id
        cases.append(case)
    return rule.decide(cases, settings)[0]


def test_a_look_stops_what_is_decided_or_clear_and_keeps_what_is_in_doubt() -> None:
    cases = {
        "same": (band(100, 100), band(5, 5)),
        "lower": (band(100, 100), band(4, 5)),
        "higher": (band(60, 100), band(5, 5)),
        "gone": (band(100, 100), band(0, 5)),
        "few": (band(100, 100), band(2, 2)),
        "worse-mean": (band(30, 30, [1.0, 1.2, 0.8] * 10), band(5, 5, [0.9, 1.0, 0.8, 0.7, 1.0])),
        "better-mean": (band(30, 30, [1.0, 1.2, 0.8] * 10), band(5, 5, [1.1, 1.2, 1.0, 1.3, 1.2])),
    }
    reports = {c.case_id: c for c in judged(cases)}
    steps = {cid: step(case, 0.3) for cid, case in reports.items()}
    assert steps == {
        "same": Stop.CLEAR,
        "lower": None,  # 4/5 against 100/100: p = 0.048, below the futility bound
        "higher": Stop.CLEAR,
        "gone": Stop.DECIDED,
        "few": None,  # inconclusive: too few valid repeats to judge
        "worse-mean": None,
        "better-mean": Stop.CLEAR,
    }
    # a case that cannot be compared stops, and is never clear
    (nothing,) = judged({"c": (band(100, 100), band(0, 0))})
    assert nothing.verdict == "inconclusive" and step(nothing, 0.3) is Stop.UNMEASURED
    # the last look stops every case, and says which
    assert {step(case, None) for cid, case in reports.items() if cid != "gone"} == {Stop.CAP}
    # the budget serves the most doubtful first: the smallest p of a worsening
    order = doubt_order(list(reports.values()))
    assert order[0] == "gone" and order.index("lower") < order.index("same")
    assert [doubt_p(reports[cid]) for cid in order] == sorted(
        doubt_p(reports[cid]) for cid in order
    )


def test_the_first_looks_futility_bound_stops_a_slight_worsening_just_above_it() -> None:
    design = Design()
    bound = design.futility_at(0, len(design.schedule(5)))
    assert bound is not None
    # 9/10 against an all-pass baseline of n repeats: a drop of 0.1, below suspect_drop, so the
    # rule calls it unchanged and only the bound decides; its p, 10 / (n + 10), falls with n
    # (at a bound of 0.3: 23 repeats give p=0.303, 24 give p=0.294)
    above = max(n for n in range(1, 1000) if fisher_regress(n, n, 9, 10) > bound)
    just_above, just_under = (
        judged({"c": (band(n, n), band(9, 10))})[0] for n in (above, above + 1)
    )
    for report in (just_above, just_under):
        assert report.verdict == "unchanged"
        assert {s.verdict for s in report.scorers} == {"unchanged"}
    # the bound sits below an even chance: a case that looks slightly worse stops at the first
    # look once its p passes the bound, not only a case that looks no worse at all
    assert bound < doubt_p(just_above) < 0.5
    assert step(just_above, bound) is Stop.CLEAR
    assert doubt_p(just_under) <= bound
    assert step(just_under, bound) is None


def test_fewer_valid_results_than_the_baseline_keep_a_case_in_doubt() -> None:
    base = band(100, 100)
    # 7 of 8 repeats gave a valid result, and all 7 pass: only the share of valid ones is worse
    cand = band(7, 7).model_copy(update={"repeats": 8, "outcomes": {"ok": 7, "exit_1": 1}})
    (report,) = judged({"c": (base, cand)})
    assert report.verdict == "unchanged" and report.valid is not None
    assert report.valid.candidate == (7, 8)
    assert doubt_p(report) == pytest.approx(_fisher_less(100, 100, 7, 8))
    assert step(report, 0.3) is None
    as_valid = report.model_copy(
        update={"valid": report.valid.model_copy(update={"candidate": (7, 7)})}
    )
    assert step(as_valid, 0.3) is Stop.CLEAR


def test_at_the_cap_unchanged_needs_an_interval_that_excludes_a_drop_that_matters() -> None:
    reports = {
        c.case_id: c
        for c in judged(
            {
                # the case seen: 1/5 -> 3/25, difference [-0.51, +0.16], printed "ok" before
                "wide": (band(1, 5), band(3, 25)),
                "narrow": (band(95, 100), band(57, 60)),
                "mean": (band(30, 30, [1.0, 1.2, 0.8] * 10), band(5, 5, [1.0, 1.1, 0.8, 0.7, 1.2])),
            }
        )
    }
    assert {c.verdict for c in reports.values()} == {"unchanged"}
    wide = settle(reports["wide"], Stop.CAP, "deepen the baseline")
    assert wide.verdict == "inconclusive"
    assert "[-0.51, +0.16] still reaches a drop of 0.2; deepen the baseline" in wide.reason
    assert wide.scorers[0].verdict == "inconclusive"
    assert settle(reports["narrow"], Stop.CAP, "x").verdict == "unchanged"
    mean = settle(reports["mean"], Stop.BUDGET, "--max-calls ran out")
    assert mean.verdict == "inconclusive" and "the mean's 95% interval" in mean.reason
    # a futility stop is the data saying so already: no interval rule there
    assert settle(reports["wide"], Stop.CLEAR, "x").verdict == "unchanged"


def test_the_schedule_and_the_spending_of_alpha() -> None:
    design = Design(max_repeats=60)
    assert design.schedule(5) == [5, 10, 20, 40, 60]
    assert design.schedule(3) == [3, 10, 20, 40, 60]
    assert design.schedule(20) == [20, 40, 60]
    assert Design(max_repeats=10).schedule(10) == [10]
    shares = spending([5, 10, 20, 40, 60], 1.0)
    assert shares == pytest.approx([5 / 60, 5 / 60, 10 / 60, 20 / 60, 20 / 60])
    assert sum(spending([3, 7, 30], 2.5)) == pytest.approx(1.0)
    assert design.look(RuleSettings(alpha=0.05), shares[0]).alpha == pytest.approx(0.05 / 12)
    assert [design.futility_at(j, 5) for j in range(5)] == [0.3, 0.2, 0.15, 0.1, None]
    assert Design(futility=(0.4,)).futility_at(3, 6) == 0.4
    for bad in ([], [5, 5], [0, 3]):
        with pytest.raises(ValueError, match="positive and increasing"):
            spending(bad, 1.0)


def _fisher_less(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    # P(the candidate passes this rarely or less) given the margins: scipy's one-sided test
    return float(sps.fisher_exact([[k_c, n_c - k_c], [k_b, n_b - k_b]], alternative="less").pvalue)


def _brute_force(n_b: int, looks: Looks, p_b: float, p_c: float) -> tuple[float, float]:
    """Every baseline count and every sequence of candidate passes and fails, with scipy's
    Fisher test at each look: the design's outcome without any boundary or recursion."""
    flagged = repeats = 0.0
    sizes = looks.sizes
    for k_b in range(n_b + 1):
        w_b = sps.binom.pmf(k_b, n_b, p_b)
        for path in itertools.product((0, 1), repeat=sizes[-1]):
            w = w_b * math.prod(p_c if x else 1 - p_c for x in path)
            if w == 0:
                continue
            for j, n in enumerate(sizes):
                k = sum(path[:n])
                p = _fisher_less(k_b, n_b, k, n)
                if p <= looks.thresholds[j] * (1 + 1e-12):
                    flagged += w
                    repeats += w * n
                    break
                drop = k_b / n_b - k / n
                inconclusive = (
                    drop >= looks.suspect_drop - 1e-9
                    and -newcombe(k_b, n_b, k, n)[0] >= looks.min_effect - 1e-9
                )
                if j == len(sizes) - 1 or (p > looks.futility[j] and not inconclusive):
                    repeats += w * n
                    break
    return flagged, repeats


@settings(max_examples=12, deadline=None)
@given(
    n_b=st.integers(2, 9),
    sizes=st.sampled_from([(2, 4, 7), (3, 6), (1, 3, 4, 8), (5,)]),
    p_b=st.sampled_from([1.0, 0.9, 0.6]),
    p_c=st.sampled_from([0.0, 0.4, 0.8, 1.0]),
    thresholds=st.sampled_from([(0.01, 0.02, 0.05, 0.1), (0.2, 0.1, 0.1, 0.3)]),
    futility=st.sampled_from([(0.3, 0.2, 0.15), (0.9, 0.5, 0.5)]),
)
def test_the_designs_power_and_repeats_are_the_brute_force_sums(
    n_b: int,
    sizes: tuple[int, ...],
    p_b: float,
    p_c: float,
    thresholds: tuple[float, ...],
    futility: tuple[float, ...],
) -> None:
    looks = Looks(
        sizes=sizes, thresholds=thresholds[: len(sizes)], futility=futility[: len(sizes) - 1]
    )
    flagged, repeats = look_outcome(n_b, looks, p_b, p_c)
    want_flagged, want_repeats = _brute_force(n_b, looks, p_b, p_c)
    assert flagged == pytest.approx(want_flagged, abs=1e-9)
    assert repeats == pytest.approx(want_repeats, abs=1e-9)


def _case(store: Store, case_id: str, repeats: int) -> CaseRecord:
    rel = f"samples/s/key/e0/{case_id}/ck"
    (store.root / rel).mkdir(parents=True, exist_ok=True)
    return CaseRecord(
        case_id=case_id, case_key="ck", input="i", repeats=repeats, sample_dir=rel, scorers=[]
    )


def _write(store: Store, case: CaseRecord, repeats: range, stamp: str) -> None:
    for r in repeats:
        path = store.root / case.sample_dir / f"r{r}.json"
        path.write_bytes(orjson.dumps({"started_at": stamp}))


def _run(cases: list[CaseRecord]) -> RunRecord:
    return RunRecord(
        run_id="r",
        suite="s",
        started_at="",
        finished_at="",
        harness_version="",
        target=TargetRecord(kind="command", key="key", spec={}),
        epoch=0,
        jobs=1,
        calls=0,
        cases=cases,
    )


def test_the_pool_keeps_the_newest_repeats_up_to_its_depth(tmp_path: Path) -> None:
    store = Store(tmp_path)
    deep, shallow, gap = _case(store, "deep", 5), _case(store, "shallow", 5), _case(store, "gap", 5)
    now = "2999-01-01T00:00:00.000000Z"
    _write(store, deep, range(40), now)
    _write(store, shallow, range(5), now)
    _write(store, gap, [*range(8), *range(9, 12)], now)  # r8 never written: r9.. do not count
    (store.root / gap.sample_dir / "r3.json").write_bytes(b"")  # an empty file is no sample
    assert [held_repeats(store, c) for c in (deep, shallow, gap)] == [40, 5, 3]
    pool = pooled_baseline(store, _run([deep, shallow, gap]), depth=30)
    windows = {c.case_id: (c.start, c.repeats) for c in pool.cases}
    # never fewer than the run itself took: r3 is missing, and the comparison will say so
    assert windows == {"deep": (10, 40), "shallow": (0, 5), "gap": (0, 5)}


def test_the_pool_leaves_out_samples_past_the_maximum_age(tmp_path: Path) -> None:
    store = Store(tmp_path)
    case = _case(store, "c", 5)
    _write(store, case, range(12), "2000-01-01T00:00:00.000000Z")
    _write(store, case, range(12, 20), "2999-01-01T00:00:00.000000Z")
    pool = pooled_baseline(store, _run([case]), depth=30, max_age_s=parse_age("7d"))
    assert (pool.cases[0].start, pool.cases[0].repeats) == (12, 20)
    # a stale sample between fresh ones ends the window: the pool is the newest unbroken run
    _write(store, case, [15], "2000-01-01T00:00:00.000000Z")
    pool = pooled_baseline(store, _run([case]), depth=30, max_age_s=parse_age("7d"))
    assert (pool.cases[0].start, pool.cases[0].repeats) == (16, 20)
    _write(store, case, range(12, 20), "2000-01-01T00:00:00.000000Z")
    with pytest.raises(UsageError, match=r"older than --baseline-max-age \(c\)"):
        pooled_baseline(store, _run([case]), depth=30, max_age_s=60)


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("2m", 120), ("1.5h", 5400), ("7d", 604800), ("2w", 1209600)]
)
def test_ages(text: str, seconds: float) -> None:
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "7", "d", "-1d", "7 days", "1y"])
def test_bad_ages(text: str) -> None:
    with pytest.raises(UsageError, match="is not a duration"):
        parse_age(text)


def test_a_candidate_of_the_baselines_own_version_rests_on_the_pool(tmp_path: Path) -> None:
    store = Store(tmp_path)
    pooled = _case(store, "same", 5).model_copy(update={"repeats": 30, "start": 0})
    other = _case(store, "other", 5)
    moved = other.model_copy(update={"sample_dir": "samples/s/new/e0/other/ck"})
    seen = against_pool(_run([pooled, other]), _run([_case(store, "same", 5), moved]))
    assert [(c.start, c.repeats) for c in seen.cases] == [(0, 30), (0, 5)]
    assert os.path.basename(seen.cases[1].sample_dir) == "ck"


@pytest.mark.parametrize(("value", "n"), [(3.3333333, 5), (0.1, 3), (0.30000000000000004, 7)])
def test_equal_values_have_no_spread_whatever_the_mean_rounds_to(value: float, n: int) -> None:
    from noisefloor.model.verdict import side

    shown = side(band(n, n, [value] * n).scorers[0])
    assert shown["sd"] == 0.0
    assert shown["mean"] == pytest.approx(value)
