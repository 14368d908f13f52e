"""The sequential design's decisions, its power against scipy, and the deep baseline's pool."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import orjson
import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from noisefloor.errors import UsageError
from noisefloor.pool import against_pool, held_repeats, parse_age, pooled_baseline
from noisefloor.records import CaseBand, CaseRecord, RunRecord, ScorerBand, TargetRecord
from noisefloor.report.model import CaseReport, Sequential
from noisefloor.rules import get_rule
from noisefloor.sequential import Design, Stop, combine, doubt_order, in_doubt
from noisefloor.settings import RuleName, RuleSettings
from noisefloor.stats import holm_thresholds, sequential_power
from noisefloor.store import Store


def band(k: int, n: int, values: list[float] | None = None) -> CaseBand:
    scorer = ScorerBand(
        label="0:s",
        name="s",
        kind="continuous" if values is not None else "binary",
        direction="higher_is_better",
        impl_hash="h",
        params={},
        n=n,
        k=k,
        target_errors=0,
        infra_errors=0,
        scorer_errors=0,
        values=values or [],
        reliable=True,
        details=[],
    )
    return CaseBand(
        case_id="c", case_key="k", repeats=n, outcomes={"ok": n}, errors=[], scorers=[scorer]
    )


def judged(pairs: dict[str, tuple[CaseBand, CaseBand]], alpha: float = 0.05) -> list[CaseReport]:
    rule = get_rule(RuleName.EXACT)
    settings = RuleSettings(alpha=alpha)
    cases = []
    for case_id, (b, c) in pairs.items():
        case = rule.compare(case_id, b, c, settings)
        case.case_id = case_id
        cases.append(case)
    return rule.decide(cases, settings)[0]


def test_a_case_is_in_doubt_only_when_it_looks_worse() -> None:
    cases = {
        "same": (band(30, 30), band(5, 5)),
        "lower": (band(30, 30), band(4, 5)),
        "higher": (band(20, 30), band(5, 5)),
        "gone": (band(30, 30), band(0, 5)),
        "few": (band(30, 30), band(2, 2)),
        "worse-mean": (band(30, 30, [1.0, 1.2, 0.8] * 10), band(5, 5, [0.9, 1.0, 0.8, 0.7, 1.0])),
        "better-mean": (band(30, 30, [1.0, 1.2, 0.8] * 10), band(5, 5, [1.1, 1.2, 1.0, 1.3, 1.2])),
    }
    reports = {c.case_id: c for c in judged(cases)}
    assert reports["gone"].verdict == "regressed"  # decided at the screen: no doubt left
    doubt = {cid for cid, case in reports.items() if in_doubt(case)}
    assert doubt == {"lower", "few", "worse-mean"}
    # the most doubtful first: the smallest p of a worsening
    order = doubt_order(list(reports.values()))
    assert set(order) == doubt
    ps = [
        min(
            p
            for s in reports[cid].scorers
            for p in (
                s.evidence.p_regress,
                s.evidence.values.p_worse if s.evidence.values else None,
            )
            if p is not None
        )
        if any(s.evidence.p_regress is not None for s in reports[cid].scorers)
        else 1.0
        for cid in order
    ]
    assert ps == sorted(ps)


def _evidence(screen: int, cand: int) -> Sequential:
    return Sequential(
        baseline_repeats=30, candidate_repeats=cand, screen=screen, verdict_repeats=cand - screen
    )


def test_combine_takes_each_cases_last_look_and_says_why_it_stopped() -> None:
    screened = {
        c.case_id: c
        for c in judged(
            {
                "clear": (band(30, 30), band(5, 5)),
                "broke": (band(30, 30), band(0, 5)),
                "doubt": (band(30, 30), band(3, 5)),
                "waits": (band(30, 30), band(4, 5)),
                "same": (band(30, 30), band(30, 30)),
            }
        )
    }
    confirmed = {c.case_id: c for c in judged({"doubt": (band(30, 30), band(15, 25))}, alpha=0.045)}
    stops = {"doubt": Stop.CAP, "waits": Stop.BUDGET, "same": Stop.SAME}
    evidence = {cid: _evidence(5, 30) for cid in screened}
    final = {
        c.case_id: c
        for c in combine(list(screened.values()), confirmed, stops, evidence, max_calls=60)
    }
    assert {cid: c.sequential.stopped for cid, c in final.items() if c.sequential} == {
        "clear": "clear",
        "broke": "decided",
        "doubt": "decided",
        "waits": "budget",
        "same": "same",
    }
    assert final["doubt"].verdict == "regressed" and "15/25" in final["doubt"].reason
    assert final["waits"].verdict == "inconclusive"
    assert "--max-calls 60 ran out" in final["waits"].reason and "4/5" in final["waits"].reason
    assert final["clear"].verdict == "unchanged"


def test_the_confirmation_counts_every_continuous_test_of_the_screen() -> None:
    rule = get_rule(RuleName.EXACT)
    base = band(30, 30, [float(x % 7) for x in range(30)])
    worse = band(25, 25, [float(x % 7) - 1.5 for x in range(25)])
    case = rule.compare("c", base, worse, RuleSettings())
    alone = Design().confirm(RuleSettings(), None)
    _, summary = rule.decide([case], alone)
    padded = Design().confirm(RuleSettings(), summary.model_copy(update={"continuous_tests": 8}))
    decided, _ = rule.decide([case.model_copy(deep=True)], padded)
    threshold = decided[0].scorers[0].evidence.values.threshold  # type: ignore[union-attr]
    p = decided[0].scorers[0].evidence.values.p_worse  # type: ignore[union-attr]
    # Holm over eight tests, seven of them never rejecting: the smallest p meets alpha / 8
    assert threshold == pytest.approx(holm_thresholds([p, *[1.0] * 7], 0.045)[0], rel=1e-5)
    assert threshold == pytest.approx(0.045 / 8, rel=1e-5)


def _fisher_less(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    # P(the candidate passes this rarely or less) given the margins: scipy's one-sided test
    return float(sps.fisher_exact([[k_c, n_c - k_c], [k_b, n_b - k_b]], alternative="less").pvalue)


@settings(max_examples=25, deadline=None)
@given(
    n_b=st.integers(2, 8),
    screen=st.integers(1, 4),
    fresh=st.integers(0, 5),
    p_b=st.sampled_from([1.0, 0.9, 0.6]),
    p_c=st.sampled_from([0.0, 0.4, 0.8]),
    t1=st.sampled_from([0.01, 0.05, 0.2]),
    t2=st.sampled_from([0.02, 0.1, 0.3]),
)
def test_sequential_power_is_the_exact_sum_scipy_gives(
    n_b: int, screen: int, fresh: int, p_b: float, p_c: float, t1: float, t2: float
) -> None:
    total = 0.0
    cap = screen + fresh
    for k_b, k0 in itertools.product(range(n_b + 1), range(screen + 1)):
        w = sps.binom.pmf(k_b, n_b, p_b) * sps.binom.pmf(k0, screen, p_c)
        if _fisher_less(k_b, n_b, k0, screen) <= t1 * (1 + 1e-12):
            total += w
        elif k0 / screen < k_b / n_b and fresh:
            total += w * sum(
                sps.binom.pmf(k1, fresh, p_c)
                for k1 in range(fresh + 1)
                if _fisher_less(k_b, n_b, k1, fresh) <= t2 * (1 + 1e-12)
            )
    assert sequential_power(n_b, screen, cap, p_b, p_c, t1, t2) == pytest.approx(total, abs=1e-9)


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


@pytest.mark.parametrize(("n_b", "screen", "p"), [(30, 5, 0.9), (10, 3, 0.5), (5, 5, 1.0)])
def test_the_chance_of_doubt_is_the_exact_sum_scipy_gives(n_b: int, screen: int, p: float) -> None:
    from noisefloor.stats import doubt_chance

    expected = sum(
        sps.binom.pmf(k_b, n_b, p) * sps.binom.pmf(k, screen, p)
        for k_b in range(n_b + 1)
        for k in range(screen + 1)
        if k / screen < k_b / n_b
    )
    assert doubt_chance(n_b, screen, p) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("value", "n"), [(3.3333333, 5), (0.1, 3), (0.30000000000000004, 7)])
def test_equal_values_have_no_spread_whatever_the_mean_rounds_to(value: float, n: int) -> None:
    from noisefloor.verdict import side

    shown = side(band(n, n, [value] * n).scorers[0])
    assert shown["sd"] == 0.0
    assert shown["mean"] == pytest.approx(value)
