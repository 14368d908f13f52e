"""`noisefloor plan`: what a suite of M cases at N repeats can detect, and the N a change needs.

Every figure is computed exactly (Fisher power, noncentral t), never read from a typed-in table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from noisefloor import stats
from noisefloor.pipeline.banding import score_case
from noisefloor.settings import (
    BASELINE_REPEATS,
    CONTROL_LOOKS,
    MAX_REPEATS,
    PLAN_CASES,
    REPEATS,
)
from noisefloor.settings.design import Design
from noisefloor.store.pool import held_repeats
from noisefloor.store.store import Store
from noisefloor.suite.load import load_suite

__all__ = [
    "CHANGES",
    "SEQUENTIAL_CHANGES",
    "Held",
    "PlanInputs",
    "drift_flagged",
    "held_rates",
    "plan_inputs",
    "plan_text",
]

#: The common changes the table covers: (label, baseline pass rate, candidate pass rate).
CHANGES = [("0.9 -> 0.7", 0.9, 0.7), ("1.0 -> 0.6", 1.0, 0.6), ("1.0 -> 0.0", 1.0, 0.0)]
#: The changes the sequential design's lines cover: the common drops of LLM suites.
SEQUENTIAL_CHANGES = [
    ("1.0 -> 0.6", 1.0, 0.6),
    ("0.9 -> 0.5", 0.9, 0.5),
    ("0.7 -> 0.4", 0.7, 0.4),
    ("0.5 -> 0.2", 0.5, 0.2),
    ("1.0 -> 0.0", 1.0, 0.0),
]
#: Continuous shifts, in baseline standard deviations.
SHIFTS = [1.0, 2.0]


@dataclass(frozen=True)
class PlanInputs:
    """N, M and the per-case threshold the plan uses, and where they came from."""

    repeats: int
    cases: int
    alpha: float
    threshold: float
    source: str
    held: list[Held] | None = None
    """The pass rates the suite's baseline holds, when the store has it."""


def plan_inputs(
    suite_path: Path | None,
    repeats: int | None,
    cases: int | None,
    alpha: float,
    store: Store,
    baseline_repeats: int | None = None,
) -> PlanInputs:
    """Take N and M from the flags, else the suite; the threshold from the suite's baseline.

    With a baseline, the threshold is Tarone's alpha/K for an unchanged rerun of its deep pool
    (the newest `baseline_repeats` of its samples, as a check compares with; cases that always
    pass cost nothing); without one, or without its samples, it is Bonferroni's alpha/M.
    """
    source = "flags"
    held: list[Held] | None = None
    if suite_path is not None:
        suite = load_suite(suite_path)
        repeats = repeats or min(c.repeats for c in suite.cases)
        cases = cases or len(suite.cases)
        source = f"suite {suite.name}"
        pointer = store.baseline(suite.name)
        if pointer is not None:
            depth = baseline_repeats or suite.defaults.baseline_repeats or BASELINE_REPEATS
            held = held_rates(store, suite.name, pointer.run_id, depth)
            source += f", baseline {pointer.run_id}"
            if held is None:
                source += " without its samples: K = M"
    repeats = repeats or REPEATS
    cases = cases or PLAN_CASES
    pmins = _pmins(held, repeats) if held else None
    threshold = stats.tarone_threshold(pmins, alpha) if pmins else alpha / cases
    return PlanInputs(repeats, cases, alpha, threshold, source, held)


@dataclass(frozen=True)
class Held:
    """A pass rate the baseline holds: (passes, repeats) of one scorer of one case, over the deep
    pool a check compares with."""

    case_id: str
    title: str
    k: int
    n: int


def held_rates(store: Store, suite: str, run_id: str, depth: int) -> list[Held] | None:
    """Every scorer's pass count of every case over the deep pool of the suite's baseline (the
    newest `depth` repeats its sample directories hold); None when its samples are missing."""
    from noisefloor.model.verdict import scorer_title
    from noisefloor.store.pool import pooled_baseline

    run = pooled_baseline(store, store.load_run(suite, run_id), depth)
    found = []
    for case in run.cases:
        paths = store.sample_paths(case)
        if case.scorers and not all(p.exists() for p in paths):
            return None
        for use in case.scorers:
            score = score_case(case.case_id, use, paths)
            n = sum(1 for r in score.repeats if r.status.value in ("pass", "fail", "target_error"))
            k = sum(1 for r in score.repeats if r.status.value == "pass")
            if n:
                found.append(Held(case.case_id, scorer_title(use.name, use.params), k, n))
    return found


def _pmins(held: list[Held], repeats: int) -> list[float]:
    """Smallest attainable p of every scorer of every case, for a candidate of `repeats` that
    passes as the baseline does: the gate's Tarone correction counts one pass-rate test per
    scorer and case, so the plan does."""
    return [stats.fisher_regress_min(h.k, h.n, round(h.k / h.n * repeats), repeats) for h in held]


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def plan_text(
    *,
    suite_path: Path | None,
    repeats: int | None,
    cases: int | None,
    alpha: float,
    power: float,
    store: Store,
    max_repeats: int | None = None,
    baseline_repeats: int | None = None,
    drift: float | None = None,
) -> str:
    """The plan as text: detectable drops at this N, power, and the N each change needs."""
    inputs = plan_inputs(suite_path, repeats, cases, alpha, store, baseline_repeats)
    n, thr = inputs.repeats, inputs.threshold
    out = [
        f"N = {n} repeats per side, M = {inputs.cases} cases, alpha = {alpha} family-wise ({inputs.source})",
        f"per-case threshold alpha/K = {thr:.3g}"
        + (
            ""
            if "baseline" in inputs.source
            else " (K = M: every case assumed able to fail; Tarone's K on a "
            "real baseline is usually smaller, see `plan SUITE`)"
        ),
        "",
    ]
    if inputs.held:
        cap = _depths(suite_path, store, max_repeats, baseline_repeats)[0]
        out += _held_lines(inputs.held, n, cap, thr)
    else:
        out.append(
            "smallest detectable drop in pass rate at this N (observed baseline rate -> "
            "one-sided Fisher):"
        )
        for k_b in sorted({n, round(0.9 * n), round(0.8 * n)}, reverse=True):
            mde = stats.min_detectable_drop(k_b, n, n, thr)
            shown = f"{mde:.2f}" if mde is not None else "none: no drop is detectable at this N"
            out.append(f"  baseline {k_b}/{n}: {shown}")
    out += ["", f"power at N = {n}, and repeats per side needed for {power:.0%} power:"]
    for label, p_b, p_c in CHANGES:
        got = stats.fisher_power(n, n, p_b, p_c, thr)
        need = stats.repeats_needed(p_b, p_c, thr, power=power)
        out.append(
            f"  pass rate {label}: power {_pct(got)}, needs N = {need if need else 'more than 400'}"
        )
    for shift in SHIFTS:
        got = stats.t_power(n, shift, thr) if n >= 2 else 0.0
        need = stats.t_repeats_needed(shift, thr, power=power)
        out.append(
            f"  mean shift of {shift:g} sd: power {_pct(got)}, needs N = {need if need else 'more than 1000'}"
        )
    out += _sequential_lines(inputs, suite_path, store, max_repeats, baseline_repeats, drift)
    out += [
        "",
        "A case reported unchanged only shows no change larger than the detectable drop above.",
    ]
    return "\n".join(out) + "\n"


def _scorers_of(held: list[Held]) -> str:
    cases = len({h.case_id for h in held})
    return f"{len(held)} scorers of {cases} case{'s' * (cases != 1)}"


def _held_lines(held: list[Held], n: int, cap: int, threshold: float) -> list[str]:
    """The smallest drop a check finds from each pass rate the baseline holds, at the first
    look's repeats and at the cap (one-sided Fisher at the per-case threshold)."""

    def drop(k: int, n_b: int, n_c: int) -> str:
        found = stats.min_detectable_drop(k, n_b, n_c, threshold)
        return f"{found:.2f}" if found is not None else "none"

    groups: dict[tuple[int, int], list[Held]] = {}
    for h in held:
        groups.setdefault((h.k, h.n), []).append(h)
    out = [
        f"smallest drop in pass rate found at {n} candidate repeats and at the cap of {cap}, from "
        "each pass rate the baseline holds (one-sided Fisher):"
    ]
    for (k, n_b), found in sorted(groups.items(), key=lambda kv: kv[0][0] / kv[0][1]):
        which = f"{found[0].case_id}: {found[0].title}" if len(found) == 1 else _scorers_of(found)
        out.append(
            f"  baseline {k} of {n_b} ({which}): {drop(k, n_b, n)} at {n}, "
            f"{drop(k, n_b, cap)} at {cap}"
        )
    return out


def _depths(
    suite_path: Path | None, store: Store, max_repeats: int | None, baseline_repeats: int | None
) -> tuple[int, int, str]:
    """The cap and the deep baseline's depth: the flags, else the suite's, else what its
    baseline holds (median over cases), else the defaults."""
    cap, depth, held = max_repeats, baseline_repeats, ""
    if suite_path is not None:
        suite = load_suite(suite_path)
        cap = cap or suite.defaults.max_repeats
        depth = depth or suite.defaults.baseline_repeats
        pointer = store.baseline(suite.name)
        if pointer is not None and depth is None:
            from statistics import median

            run = store.load_run(suite.name, pointer.run_id)
            counts = [held_repeats(store, c) for c in run.cases]
            if counts:
                depth = min(BASELINE_REPEATS, round(median(counts))) or None
                held = " (what its baseline holds: `noisefloor baseline deepen` tops it up)"
    return cap or MAX_REPEATS, depth or BASELINE_REPEATS, held


def _sequential_lines(
    inputs: PlanInputs,
    suite_path: Path | None,
    store: Store,
    max_repeats: int | None,
    baseline_repeats: int | None,
    drift: float | None,
) -> list[str]:
    """What the sequential design of `check` detects, and what it spends on unchanged cases:
    exact sums over every path of its looks, at this plan's K; with `drift`, what sessions that
    drift do to it."""

    n, k = inputs.repeats, inputs.alpha / inputs.threshold
    cap, depth, held = _depths(suite_path, store, max_repeats, baseline_repeats)
    if cap <= n:
        return []
    design = Design(max_repeats=cap, baseline_repeats=depth)
    sizes = design.schedule(n)
    shares = stats.spending(sizes, design.rho)
    looks = stats.Looks(
        sizes=tuple(sizes),
        thresholds=tuple(inputs.alpha * s / k for s in shares),
        futility=tuple(
            f for j in range(len(sizes)) if (f := design.futility_at(j, len(sizes))) is not None
        ),
    )
    out = [
        "",
        f"sequential check (the default): looks at {'/'.join(map(str, sizes))} candidate repeats "
        f"against {depth} baseline repeats{held}; alpha spent "
        + " / ".join(f"{s:.3g}" for s in shares)
        + " across the looks, futility bounds "
        + " / ".join(f"{f:g}" for f in looks.futility)
        + " (fixed: the repeats per case a fixed design needs for as much power):",
    ]
    for label, p_b, p_c in SEQUENTIAL_CHANGES:
        got, spent = stats.look_outcome(depth, looks, p_b, p_c)
        fixed = stats.repeats_needed(p_b, p_c, inputs.threshold, power=got, n_baseline=depth)
        same = f"; fixed: N = {fixed}" if fixed and got >= 0.5 else ""
        out.append(f"  pass rate {label}: power {_pct(got)}, {spent:.1f} repeats on it{same}")
    out.append("  candidate repeats an unchanged case takes on average:")
    for p in (1.0, 0.9, 0.7, 0.5):
        out.append(f"    pass rate {p:.1f}: {stats.look_outcome(depth, looks, p, p)[1]:.1f}")
    out.append(
        f"  the baseline's one-time cost: {depth} repeats per case, {depth * inputs.cases} calls "
        f"for {inputs.cases} cases"
    )
    if drift:
        out += _drift_lines(depth, looks, drift)
    return out


#: Gauss-Legendre nodes per session over the quantiles of two sessions' pass rates (the
#: baseline's, the check's): 8 agree with 12 within 0.001 at rho 0.05.
DRIFT_NODES = 8


def _drift_lines(depth: int, looks: stats.Looks, rho: float) -> list[str]:
    """How often the deep baseline alone calls an unchanged case regressed when sessions drift
    with intra-session correlation `rho`, and what the concurrent control that then confirms it
    costs at most."""
    out = [
        "",
        f"sessions that drift (--drift {rho:g}: each session, the baseline's and each check's, "
        "draws a case's pass rate from a beta around its mean with that intra-session "
        "correlation); an unchanged case:",
    ]
    most = 2 * CONTROL_LOOKS[-1]
    for p in (0.9, 0.7, 0.5):
        flagged = drift_flagged(depth, looks, p, rho)
        still = stats.look_outcome(depth, looks, p, p)[0]
        out.append(
            f"  pass rate {p:.1f}: the deep baseline alone calls it regressed in "
            f"{_pct(flagged).strip()} of checks ({_pct(still).strip()} without drift); its "
            f"concurrent control then costs at most {flagged * most:.1f} calls per case on "
            f"average ({most} when taken)"
        )
    out.append(
        "  the concurrent control judges the candidate against the baseline's own version in the "
        "check's own session, so a regression it confirms is not the drift; where none can be "
        "taken, the deep verdict stands and says why (docs/sequential.md)"
    )
    return out


def drift_flagged(depth: int, looks: stats.Looks, p: float, rho: float) -> float:
    """The chance the deep baseline alone calls an unchanged case at mean pass rate `p`
    regressed, its baseline's session and the check's each drawing the rate from a beta with
    intra-session correlation `rho` (Gauss-Legendre over both quantiles, each point exact over
    the looks)."""
    import numpy as np
    from scipy.stats import beta  # scipy loads only for a plan with drift in it

    total = (1 - rho) / rho
    nodes, weights = np.polynomial.legendre.leggauss(DRIFT_NODES)
    rates = beta.ppf((nodes + 1) / 2, p * total, (1 - p) * total)
    return float(
        sum(
            wb / 2 * wc / 2 * stats.look_outcome(depth, looks, float(b), float(c))[0]
            for b, wb in zip(rates, weights, strict=True)
            for c, wc in zip(rates, weights, strict=True)
        )
    )
