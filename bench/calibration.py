"""Calibration: false-alarm rate and power of every rule, through the real verdict code.

Simulates 50-case suites with a typical case mix (70% of cases always
pass, 15% pass with p ~ U[0.8, 0.99], 15% with p ~ U[0.3, 0.8]; continuous suites: 70%
deterministic cases, 30% noisy N(0, 1)), builds the bands both sides would produce, and asks each
rule's `compare` and `decide` for verdicts. Prints, per rule and N: the share of unchanged suites
that fail (exit 1 or 2), and the share of suites in which a changed case is flagged regressed.

The sequential design of `check` runs through the same code a check runs (`noisefloor.sequential`
and the rule): every case screened at 5 candidate repeats against a deep baseline, the cases in
doubt confirmed on fresh repeats up to 30; it also prints the mean candidate repeats per case on
unchanged suites, and the repeats spent on the changed case.

Usage: python bench/calibration.py [--suites 2000] [--seed 1] [--depth 30]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from noisefloor.exit_policy import exit_code_for  # noqa: E402
from noisefloor.records import CaseBand, ScorerBand  # noqa: E402
from noisefloor.report.model import CaseReport, ComparedCase, Sequential  # noqa: E402
from noisefloor.rules import get_rule  # noqa: E402
from noisefloor.sequential import Design, Stop, combine, doubt_order  # noqa: E402
from noisefloor.settings import RuleName, RuleSettings  # noqa: E402
from noisefloor.verdict import Verdict  # noqa: E402

M = 50
RULES = (RuleName.EXACT, RuleName.BAND, RuleName.WILSON)
BINARY_CHANGES = [("1.0->0.0", 1.0, 0.0), ("1.0->0.6", 1.0, 0.6), ("0.9->0.5", 0.9, 0.5)]
SHIFT_SD = 2.0


def _band(case_id: str, n: int, k: int, values: list[float] | None = None) -> CaseBand:
    scorer = ScorerBand(
        label="0:score",
        name="score",
        kind="continuous" if values is not None else "binary",
        direction="higher_is_better",
        impl_hash="sim",
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
        case_id=case_id, case_key="sim", repeats=n, outcomes={"ok": n}, errors=[], scorers=[scorer]
    )


@cache
def _binary_compare(rule: RuleName, kb: int, kc: int, n: int) -> bytes:
    """Binary cases depend only on the counts: compare once per (rule, kb, kc, n)."""
    return orjson.dumps(
        get_rule(rule)
        .compare("c", _band("c", n, kb), _band("c", n, kc), RuleSettings(rule=rule))
        .dump()
    )


def _decide(rule: RuleName, cases: list[ComparedCase]) -> tuple[bool, bool]:
    """(the suite fails, case 0 is flagged regressed)."""
    decided, _ = get_rule(rule).decide(cases, RuleSettings(rule=rule))
    counts: dict[str, int] = {}
    for case in decided:
        counts[case.verdict.value] = counts.get(case.verdict.value, 0) + 1
    failed = exit_code_for(counts, strict=False) != 0
    return failed, decided[0].verdict is Verdict.REGRESSED


def _null_rates(rng: np.random.Generator) -> np.ndarray:
    u = rng.random(M)
    return np.where(
        u < 0.70, 1.0, np.where(u < 0.85, rng.uniform(0.80, 0.99, M), rng.uniform(0.30, 0.80, M))
    )


def binary_suite(
    rule: RuleName, n: int, rng: np.random.Generator, change: tuple[float, float] | None
) -> tuple[bool, bool]:
    pb = _null_rates(rng)
    pc = pb.copy()
    if change is not None:
        pb[0], pc[0] = change
    kb, kc = rng.binomial(n, pb), rng.binomial(n, pc)
    cases = []
    for i in range(M):
        case = ComparedCase.model_validate_json(_binary_compare(rule, int(kb[i]), int(kc[i]), n))
        case.case_id = f"case-{i:02d}"
        cases.append(case)
    return _decide(rule, cases)


def continuous_suite(
    rule: RuleName, n: int, rng: np.random.Generator, shift: float | None
) -> tuple[bool, bool]:
    noisy = rng.random(M) < 0.30
    if shift is not None:
        noisy[0] = True
    b, c = rng.normal(size=(M, n)), rng.normal(size=(M, n))
    b, c = b * noisy[:, None], c * noisy[:, None]
    if shift is not None:
        c[0] -= shift
    settings = RuleSettings(rule=rule)
    cases = []
    for i in range(M):
        if noisy[i]:
            case = get_rule(rule).compare(
                "c",
                _band("c", n, n, list(map(float, b[i]))),
                _band("c", n, n, list(map(float, c[i]))),
                settings,
            )
        else:  # deterministic cases are all alike: compare one once
            case = ComparedCase.model_validate_json(_constant_compare(rule, n))
        case.case_id = f"case-{i:02d}"
        cases.append(case)
    return _decide(rule, cases)


@cache
def _constant_compare(rule: RuleName, n: int) -> bytes:
    zeros = [0.0] * n
    return orjson.dumps(
        get_rule(rule)
        .compare("c", _band("c", n, n, zeros), _band("c", n, n, zeros), RuleSettings(rule=rule))
        .dump()
    )


@cache
def _pair_compare(kb: int, nb: int, kc: int, nc: int) -> bytes:
    """A binary case of the sequential design: counts on each side, unequal repeats."""
    rule = get_rule(RuleName.EXACT)
    return orjson.dumps(rule.compare("c", _band("c", nb, kb), _band("c", nc, kc), SEQ).dump())


SEQ = RuleSettings(rule=RuleName.EXACT)
DESIGN = Design()


def _judged(cases: list[ComparedCase], settings: RuleSettings) -> list[CaseReport]:
    decided, _ = get_rule(RuleName.EXACT).decide(cases, settings)
    return decided


def _named(raw: bytes, i: int) -> ComparedCase:
    case = ComparedCase.model_validate_json(raw)
    case.case_id = f"case-{i:02d}"
    return case


def sequential_suite(
    depth: int,
    screen: int,
    cap: int,
    rng: np.random.Generator,
    draw: Callable[[int, int, int, np.random.Generator], ComparedCase],
) -> tuple[bool, bool, int, int]:
    """One suite through the sequential design: (fails, case 0 regressed, candidate repeats,
    candidate repeats of case 0). `draw(i, n_b, n_c, rng)` compares case i's fresh draws."""
    screened, summary = get_rule(RuleName.EXACT).decide(
        [draw(i, depth, screen, rng) for i in range(M)], DESIGN.screen(SEQ)
    )
    doubt = doubt_order(screened)
    confirmed = {}
    if doubt:
        fresh = [draw(int(cid[5:]), depth, cap - screen, rng) for cid in doubt]
        confirmed = {c.case_id: c for c in _judged(fresh, DESIGN.confirm(SEQ, summary))}
    stops = {cid: Stop.CAP for cid in doubt}
    evidence = {
        c.case_id: Sequential(
            baseline_repeats=depth,
            candidate_repeats=cap if c.case_id in stops else screen,
            screen=screen,
            verdict_repeats=cap - screen if c.case_id in stops else screen,
        )
        for c in screened
    }
    final = combine(screened, confirmed, stops, evidence)
    counts: dict[str, int] = {}
    for case in final:
        counts[case.verdict.value] = counts.get(case.verdict.value, 0) + 1
    zero = next(c for c in final if c.case_id == "case-00")
    assert zero.sequential is not None
    calls = sum(c.sequential.candidate_repeats for c in final if c.sequential is not None)
    return (
        exit_code_for(counts, strict=False) != 0,
        zero.verdict is Verdict.REGRESSED,
        calls,
        zero.sequential.candidate_repeats,
    )


def binary_draws(
    change: tuple[float, float] | None, rng: np.random.Generator
) -> Callable[..., ComparedCase]:
    """Case i's baseline is drawn once per suite (the deep baseline), its candidate per look."""
    pb = _null_rates(rng)
    pc = pb.copy()
    if change is not None:
        pb[0], pc[0] = change
    baseline: dict[int, int] = {}

    def draw(i: int, nb: int, nc: int, r: np.random.Generator) -> ComparedCase:
        kb = baseline.setdefault(i, int(r.binomial(nb, pb[i])))
        return _named(_pair_compare(kb, nb, int(r.binomial(nc, pc[i])), nc), i)

    return draw


def continuous_draws(shift: float | None, rng: np.random.Generator) -> Callable[..., ComparedCase]:
    noisy = rng.random(M) < 0.30
    if shift is not None:
        noisy[0] = True
    baseline: dict[int, list[float]] = {}
    rule = get_rule(RuleName.EXACT)

    def draw(i: int, nb: int, nc: int, r: np.random.Generator) -> ComparedCase:
        if not noisy[i]:
            return _named(_constant_pair(nb, nc), i)
        b = baseline.setdefault(i, list(map(float, r.normal(size=nb))))
        c = r.normal(size=nc) - (shift if (shift is not None and i == 0) else 0.0)
        case = rule.compare(
            "c", _band("c", nb, nb, b), _band("c", nc, nc, list(map(float, c))), SEQ
        )
        case.case_id = f"case-{i:02d}"
        return case

    return draw


@cache
def _constant_pair(nb: int, nc: int) -> bytes:
    rule = get_rule(RuleName.EXACT)
    return orjson.dumps(
        rule.compare(
            "c", _band("c", nb, nb, [0.0] * nb), _band("c", nc, nc, [0.0] * nc), SEQ
        ).dump()
    )


def sequential_row(cell: tuple[int, int, int, int, int]) -> list[str]:
    """The sequential design's row: FAR, power per change, candidate repeats per case."""
    depth, screen, cap, suites, seed = cell
    rng = np.random.default_rng(seed)

    def run(
        draws: Callable[..., Callable[..., ComparedCase]], change: object
    ) -> list[tuple[bool, bool, int, int]]:
        return [
            sequential_suite(depth, screen, cap, rng, draws(change, rng)) for _ in range(suites)
        ]

    null_b = run(binary_draws, None)
    null_c = run(continuous_draws, None)
    row = [f"exact, sequential (baseline {depth})", f"{screen}-{cap}"]
    row.append(f"{100 * np.mean([r[0] for r in null_b]):.1f}%")
    row.append(f"{100 * np.mean([r[0] for r in null_c]):.1f}%")
    spent = []
    for _, p_b, p_c in BINARY_CHANGES:
        results = run(binary_draws, (p_b, p_c))
        row.append(f"{100 * np.mean([r[1] for r in results]):.1f}%")
        spent.append(f"{np.mean([r[3] for r in results]):.1f}")
    row.append(f"{100 * np.mean([r[1] for r in run(continuous_draws, SHIFT_SD)]):.1f}%")
    row.append(f"{np.mean([r[2] for r in null_b]) / M:.2f}")
    row.append(" / ".join(spent))
    return row


def share(
    fn: Callable[[np.random.Generator], tuple[bool, bool]],
    suites: int,
    rng: np.random.Generator,
    which: int,
) -> float:
    return sum(fn(rng)[which] for _ in range(suites)) / suites


def row_of(cell: tuple[RuleName, int, int, int]) -> list[str]:
    """One table row: a rule at one N, with its own random stream."""
    rule, n, suites, seed = cell
    rng = np.random.default_rng(seed)
    row = [rule.value, str(n)]
    row.append(f"{100 * share(lambda r: binary_suite(rule, n, r, None), suites, rng, 0):.1f}%")
    row.append(f"{100 * share(lambda r: continuous_suite(rule, n, r, None), suites, rng, 0):.1f}%")
    for _, p_b, p_c in BINARY_CHANGES:
        row.append(
            f"{100 * share(lambda r, pb=p_b, pc=p_c: binary_suite(rule, n, r, (pb, pc)), suites, rng, 1):.1f}%"
        )
    row.append(
        f"{100 * share(lambda r: continuous_suite(rule, n, r, SHIFT_SD), suites, rng, 1):.1f}%"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suites", type=int, default=2000, help="simulated suites per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, nargs="+", default=[3, 5, 10])
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument(
        "--rules", nargs="+", default=[r.value for r in RULES], help="rules to simulate"
    )
    parser.add_argument(
        "--depth", type=int, default=30, help="deep baseline repeats of the sequential rows"
    )
    parser.add_argument(
        "--screens", type=int, nargs="*", default=[5], help="screen sizes of the sequential rows"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    head = (
        ["rule", "N", "FAR binary", "FAR contin."]
        + [f"flag {c[0]}" for c in BINARY_CHANGES]
        + [f"flag {SHIFT_SD:g} sd"]
    )
    print(
        f"# {args.suites} simulated {M}-case suites per cell, seed {args.seed}, alpha 0.05; "
        "FAR = share of unchanged suites that fail; flag = share of suites whose changed case is regressed\n"
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    cells = [
        (rule, n, args.suites, args.seed * 1000 + i)
        for i, (rule, n) in enumerate(
            (rule, n) for rule in map(RuleName, args.rules) for n in args.repeats
        )
    ]
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        for row in pool.imap(row_of, cells):
            print("| " + " | ".join(row) + " |", flush=True)
        if args.screens:
            print(
                "\n# the sequential design of `check`: screen, then fresh repeats up to the cap "
                "for cases in doubt; calls = mean candidate repeats per case on unchanged binary "
                "suites; spent = mean candidate repeats on the changed case, per change\n"
            )
            head = [*head, "calls/case", "spent " + " / ".join(c[0] for c in BINARY_CHANGES)]
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            seq_cells = [
                (args.depth, screen, DESIGN.max_repeats, args.suites, args.seed * 7919 + screen)
                for screen in args.screens
            ]
            for row in pool.imap(sequential_row, seq_cells):
                print("| " + " | ".join(row) + " |", flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
