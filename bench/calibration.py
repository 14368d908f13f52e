"""Calibration: false-alarm rate and power of every rule, through the real verdict code.

Simulates 50-case suites with a typical case mix (70% of cases always
pass, 15% pass with p ~ U[0.8, 0.99], 15% with p ~ U[0.3, 0.8]; continuous suites: 70%
deterministic cases, 30% noisy N(0, 1)), builds the bands both sides would produce, and asks each
rule's `compare` and `decide` for verdicts. Prints, per rule and N: the share of unchanged suites
that fail (exit 1 or 2), and the share of suites in which a changed case is flagged regressed.

The sequential design of `check` runs through the functions a check runs (`noisefloor.rules.sequential`
and the rule): looks at 5, 10, 20, 40 and 60 candidate repeats against a deep baseline, alpha
spent across them, each look's correction over every case, futility stops. It runs on two
mixes, the current one and an LLM-like noisy one (15 cases at pass rate 1.0, 10 at 0.9, 10 at
0.7, 10 at 0.5, 5 at 0.2), and prints the false-alarm rates, the power per change, the mean
candidate repeats per unchanged case, the repeats spent on the changed case, and the baseline's
one-time calls; --depth, --cap and --rho compare other designs through the same code.

Usage: python bench/calibration.py [--suites 2000] [--seed 1] [--rules ...] [--depth 100 30]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from noisefloor import stats  # noqa: E402
from noisefloor.model.records import CaseBand, ScorerBand  # noqa: E402
from noisefloor.model.report import CaseReport, ComparedCase  # noqa: E402
from noisefloor.model.verdict import Verdict  # noqa: E402
from noisefloor.rules import get_rule  # noqa: E402
from noisefloor.rules.exit_policy import exit_code_for  # noqa: E402
from noisefloor.rules.sequential import Stop, settle, step  # noqa: E402
from noisefloor.settings import (  # noqa: E402
    BASELINE_REPEATS,
    MAX_REPEATS,
    REPEATS,
    SPENDING_RHO,
    RuleName,
    RuleSettings,
)
from noisefloor.settings.design import Design  # noqa: E402

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


def _named(raw: bytes, i: int) -> ComparedCase:
    case = ComparedCase.model_validate_json(raw)
    case.case_id = f"case-{i:02d}"
    return case


#: Pass rates of the LLM-like noisy mix: 15 cases at 1.0, 10 at 0.9, 10 at 0.7, 10 at 0.5, 5 at 0.2.
NOISY = np.repeat([1.0, 0.9, 0.7, 0.5, 0.2], [15, 10, 10, 10, 5])
#: The changes whose power the sequential rows print (the changed case replaces case 0).
SEQ_CHANGES = [
    ("1.0->0.6", 1.0, 0.6),
    ("0.9->0.5", 0.9, 0.5),
    ("0.7->0.4", 0.7, 0.4),
    ("0.5->0.2", 0.5, 0.2),
    ("1.0->0.0", 1.0, 0.0),
]
#: Share of noisy continuous cases per mix (the rest are deterministic).
NOISY_SHARE = {"current": 0.30, "noisy": 0.70}


@dataclass
class Outcome:
    """One simulated sequential check."""

    failed: bool
    """Exit 1 or 2 (the check fails)."""
    flagged: bool
    """Case 0 regressed."""
    calls: int
    """Candidate repeats over every case."""
    spent: int
    """Candidate repeats of case 0."""


def sequential_suite(
    design: Design, first: int, draw: Callable[[int, int], ComparedCase], family: str = "every"
) -> Outcome:
    """One suite through the sequential design's own functions: each look compares every case
    (the running ones at their new repeats, the stopped ones at the tables they stopped with),
    decides at the look's share of alpha, then `step` stops cases; `settle` ends the rest.
    `draw(i, n)` compares case i with its first n candidate repeats. `family="running"` is the
    trap the design avoids: each look's correction over the running cases only."""
    rule = get_rule(RuleName.EXACT)
    sizes = design.schedule(first)
    shares = stats.spending(sizes, design.rho)
    at = dict.fromkeys(range(M), first)
    running = set(range(M))
    final: dict[int, CaseReport] = {}
    stops: dict[int, Stop] = {}
    for j, size in enumerate(sizes):
        for i in running:
            at[i] = size
        looked = [i for i in range(M) if family == "every" or i in running]
        decided, _ = rule.decide([draw(i, at[i]) for i in looked], design.look(SEQ, shares[j]))
        futility = design.futility_at(j, len(sizes))
        for i, case in zip(looked, decided, strict=True):
            if i in running:
                final[i] = case
                stop = step(case, futility)
                if stop is not None:
                    stops[i] = stop
                    running.discard(i)
        if not running:
            break
    cases = [settle(final[i], stops[i], "raise --max-repeats") for i in range(M)]
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.verdict.value] = counts.get(case.verdict.value, 0) + 1
    return Outcome(
        failed=exit_code_for(counts, strict=False) != 0,
        flagged=cases[0].verdict is Verdict.REGRESSED,
        calls=sum(at.values()),
        spent=at[0],
    )


def binary_draws(
    mix: str, depth: int, cap: int, change: tuple[float, float] | None, rng: np.random.Generator
) -> Callable[[int, int], ComparedCase]:
    """Case i's baseline is drawn once (the deep baseline), its candidate repeat by repeat."""
    pb = NOISY.copy() if mix == "noisy" else _null_rates(rng)
    pc = pb.copy()
    if change is not None:
        pb[0], pc[0] = change
    kb = rng.binomial(depth, pb)
    passes = np.cumsum(rng.random((M, cap)) < pc[:, None], axis=1)

    def draw(i: int, n: int) -> ComparedCase:
        return _named(_pair_compare(int(kb[i]), depth, int(passes[i, n - 1]), n), i)

    return draw


def continuous_draws(
    mix: str, depth: int, cap: int, shift: float | None, rng: np.random.Generator
) -> Callable[[int, int], ComparedCase]:
    """Noisy cases draw N(0, 1) scores (case 0 shifted down by `shift` sd); the rest are constant."""
    noisy = rng.random(M) < NOISY_SHARE[mix]
    if shift is not None:
        noisy[0] = True
    base = rng.normal(size=(M, depth))
    cand = rng.normal(size=(M, cap))
    if shift is not None:
        cand[0] -= shift
    rule = get_rule(RuleName.EXACT)

    def draw(i: int, n: int) -> ComparedCase:
        if not noisy[i]:
            return _named(_constant_pair(depth, n), i)
        b, c = list(map(float, base[i])), list(map(float, cand[i, :n]))
        case = rule.compare("c", _band("c", depth, depth, b), _band("c", n, n, c), SEQ)
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


@dataclass(frozen=True)
class Variant:
    """One sequential design the bench compares: a mix, the baseline's depth, the cap, the
    spending function's exponent, and which cases each look's correction counts."""

    mix: str
    depth: int
    cap: int
    rho: float
    family: str = "every"

    def design(self) -> Design:
        return Design(max_repeats=self.cap, baseline_repeats=self.depth, rho=self.rho)


def sequential_cell(cell: tuple[Variant, int, int, int, str]) -> list[Outcome]:
    """One cell of a sequential row: a variant, and nothing changed (binary or continuous), or
    one change; its own random stream."""
    variant, first, suites, seed, what = cell
    mix, depth, cap = variant.mix, variant.depth, variant.cap
    design = variant.design()
    rng = np.random.default_rng(seed)
    changes = {label: (p_b, p_c) for label, p_b, p_c in SEQ_CHANGES}
    draws: Callable[..., Callable[[int, int], ComparedCase]]
    change: object
    if what in ("null binary", "null continuous"):
        draws, change = (binary_draws if what == "null binary" else continuous_draws), None
    elif what in changes:
        draws, change = binary_draws, changes[what]
    else:
        draws, change = continuous_draws, SHIFT_SD
    return [
        sequential_suite(design, first, draws(mix, depth, cap, change, rng), variant.family)
        for _ in range(suites)
    ]


SEQ_CELLS = ["null binary", "null continuous", *(c[0] for c in SEQ_CHANGES), f"{SHIFT_SD:g} sd"]


def sequential_row(variant: Variant, first: int, results: dict[str, list[Outcome]]) -> list[str]:
    """A variant's row: FAR, power per change, repeats per unchanged case and on the changed
    one, and the baseline's one-time calls."""
    depth = variant.depth
    looks = "/".join(map(str, variant.design().schedule(first)))
    row = [variant.mix, f"{depth}", looks, f"{variant.rho:g}", variant.family]
    row.append(f"{100 * np.mean([o.failed for o in results['null binary']]):.1f}%")
    row.append(f"{100 * np.mean([o.failed for o in results['null continuous']]):.1f}%")
    spent = []
    for label, _, _ in SEQ_CHANGES:
        hits = [o.flagged for o in results[label]]
        if label == "1.0->0.0":  # it must be decided at the first look
            hits = [o.flagged and o.spent <= first for o in results[label]]
        row.append(f"{100 * np.mean(hits):.1f}%")
        spent.append(f"{np.mean([o.spent for o in results[label]]):.1f}")
    row.append(f"{100 * np.mean([o.flagged for o in results[f'{SHIFT_SD:g} sd']]):.1f}%")
    row.append(f"{np.mean([o.calls for o in results['null binary']]) / M:.2f}")
    row.append(" / ".join(spent))
    row.append(f"{depth * M}")
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
        "--rules", nargs="*", default=[r.value for r in RULES], help="rules of the fixed rows"
    )
    parser.add_argument(
        "--depth",
        type=int,
        nargs="+",
        default=[BASELINE_REPEATS],
        help=f"deep baseline repeats of the sequential rows (default {BASELINE_REPEATS})",
    )
    parser.add_argument(
        "--cap",
        type=int,
        nargs="+",
        default=[MAX_REPEATS],
        help=f"candidate repeats per case at most (default {MAX_REPEATS})",
    )
    parser.add_argument(
        "--rho",
        type=float,
        nargs="+",
        default=[SPENDING_RHO],
        help=f"exponents of the alpha-spending function (default {SPENDING_RHO:g})",
    )
    parser.add_argument(
        "--family",
        nargs="+",
        choices=["every", "running"],
        default=["every"],
        help="which cases each look's correction counts: every case of the suite (the design), "
        "or only those still running (the trap it avoids)",
    )
    parser.add_argument("--first", type=int, default=REPEATS, help="the first look's repeats")
    parser.add_argument(
        "--mixes", nargs="*", default=list(NOISY_SHARE), help="case mixes of the sequential rows"
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
    cells = [
        (rule, n, args.suites, args.seed * 1000 + i)
        for i, (rule, n) in enumerate(
            (rule, n) for rule in map(RuleName, args.rules) for n in args.repeats
        )
    ]
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        if cells:
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for row in pool.imap(row_of, cells):
                print("| " + " | ".join(row) + " |", flush=True)
        if args.mixes:
            print(
                "\n# the sequential design of `check`: looks at growing candidate repeats against "
                "a deep baseline; mixes: current (70% of cases at 1.0, 15% at U[0.8, 0.99], 15% at "
                "U[0.3, 0.8]; continuous 30% noisy) and noisy (15 cases at 1.0, 10 at 0.9, 10 at "
                "0.7, 10 at 0.5, 5 at 0.2; continuous 70% noisy); 1.0->0.0 counts only a "
                "regression at the first look; calls = mean candidate repeats per case on "
                "unchanged binary suites; spent = mean candidate repeats on the changed case; "
                "baseline = the one-time calls of the deep baseline\n"
            )
            seq_head = [
                "mix",
                "baseline",
                "looks",
                "rho",
                "family",
                "FAR binary",
                "FAR contin.",
                *(f"flag {c[0]}" for c in SEQ_CHANGES),
                f"flag {SHIFT_SD:g} sd",
                "calls/case",
                "spent " + " / ".join(c[0] for c in SEQ_CHANGES),
                "baseline calls",
            ]
            print("| " + " | ".join(seq_head) + " |")
            print("|" + "---|" * len(seq_head))
            variants = [
                Variant(mix, depth, cap, rho, family)
                for mix in args.mixes
                for depth in args.depth
                for cap in args.cap
                for rho in args.rho
                for family in args.family
            ]
            seq_cells = [
                (variant, args.first, args.suites, args.seed * 7919 + i, what)
                for i, (variant, what) in enumerate(
                    (variant, what) for variant in variants for what in SEQ_CELLS
                )
            ]
            outcomes = pool.map(sequential_cell, seq_cells, chunksize=1)
            for variant in variants:
                results = {
                    cell[4]: got
                    for cell, got in zip(seq_cells, outcomes, strict=True)
                    if cell[0] == variant
                }
                row = sequential_row(variant, args.first, results)
                print("| " + " | ".join(row) + " |", flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
