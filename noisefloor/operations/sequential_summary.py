"""What a sequential check spent, beside what a fixed design of the same power would have, and
the warning when its baseline is shallower than the design counts on.
"""

from __future__ import annotations

from collections import Counter

from noisefloor import stats
from noisefloor.model.report import CaseReport, LookSummary, RuleSummary, SequentialSummary
from noisefloor.rules.sequential import Stop
from noisefloor.settings import REFERENCE_CHANGE, RuleSettings
from noisefloor.settings.design import Design

__all__ = ["shallow_warning", "spent"]


def spent(
    design: Design,
    depth: int,
    cases: list[CaseReport],
    looks: list[LookSummary],
    taken: int,
    first: RuleSummary | None,
    settings: RuleSettings,
) -> SequentialSummary:
    """The design, what it spent, and what a fixed design of the same power would have: exact
    power against `REFERENCE_CHANGE` at this check's first-look K and this baseline's depth."""
    stopped = Counter(c.sequential.stopped for c in cases if c.sequential is not None)
    summary = SequentialSummary(
        looks=looks,
        max_repeats=design.max_repeats,
        max_calls=design.max_calls,
        max_cost=float(design.max_cost) if design.max_cost is not None else None,
        baseline_repeats=depth,
        design_baseline_repeats=design.baseline_repeats,
        screened=len(cases),
        budget_stopped=stopped.get(Stop.BUDGET.value, 0),
        calls=taken,
        stops=dict(sorted(stopped.items())),
    )
    k = (first.K or {}).get("regress") if first is not None else None
    if k is None or depth < 1 or not looks:
        return summary
    sizes = design.schedule(looks[0].repeats)
    shares = stats.spending(sizes, design.rho)
    p_b, p_c = REFERENCE_CHANGE
    summary.reference = f"{p_b:.1f} -> {p_c:.1f}"
    power = _power(design, sizes, shares, k, depth, settings)
    summary.power = round(power, 4)
    if depth < design.baseline_repeats:
        deeper = _power(design, sizes, shares, k, design.baseline_repeats, settings)
        summary.deeper_power = round(deeper, 4)
    # a fixed design "as strong" as a weak one says nothing: compare where the design works
    if power >= 0.5:
        fixed = stats.repeats_needed(p_b, p_c, settings.alpha / k, power, n_baseline=depth)
        if fixed is not None:
            summary.fixed_repeats = fixed
            summary.fixed_calls = fixed * len(cases)
    return summary


def _power(
    design: Design,
    sizes: list[int],
    shares: list[float],
    k: int,
    depth: int,
    settings: RuleSettings,
) -> float:
    looks = stats.Looks(
        sizes=tuple(sizes),
        thresholds=tuple(settings.alpha * s / k for s in shares),
        futility=tuple(
            f for j in range(len(sizes)) if (f := design.futility_at(j, len(sizes))) is not None
        ),
        suspect_drop=settings.suspect_drop,
        min_effect=settings.scorer("").min_effect,
    )
    p_b, p_c = REFERENCE_CHANGE
    return stats.look_outcome(depth, looks, p_b, p_c)[0]


def shallow_warning(summary: SequentialSummary) -> list[str]:
    """A warning when the baseline holds fewer repeats than the design counts on."""
    if summary.deeper_power is None or summary.power is None:
        return []
    return [
        f"the baseline holds {summary.baseline_repeats} repeats per case (median): "
        f"`noisefloor baseline deepen` on the baseline's code tops it up to "
        f"{summary.design_baseline_repeats}, and a {summary.reference} drop is then flagged in "
        f"{100 * summary.deeper_power:.0f}% of checks instead of {100 * summary.power:.0f}%"
    ]
