"""Statistics of continuous scores: Welch's t test and the case-clustered paired interval.

scipy is imported lazily, only when a test needs a t quantile.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from noisefloor.stats.tolerance import close

__all__ = ["WelchResult", "paired_mean_ci", "welch"]


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def _var(xs: Sequence[float], mean: float) -> float:
    # Two-pass sample variance with exact summation: stable for near-constant scores.
    return math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1)


@dataclass(frozen=True, slots=True)
class WelchResult:
    """Welch's unequal-variance t comparison of candidate against baseline scores."""

    mean_b: float
    mean_c: float
    sd_b: float
    sd_c: float
    #: ``mean_c - mean_b``: negative when the candidate scores lower.
    diff: float
    #: ``diff / se``; +-inf or 0 when both arms are constant.
    t: float
    #: Welch-Satterthwaite degrees of freedom, at most Hsu's min(n) - 1 when the arms' sizes
    #: differ; nan when both arms are constant.
    df: float
    #: One-sided p-value that the candidate mean is lower.
    p_lower: float
    #: One-sided p-value that the candidate mean is higher.
    p_higher: float
    ci_low: float
    ci_high: float


def welch(b: Sequence[float], c: Sequence[float], level: float = 0.95) -> WelchResult:
    """Welch t test and interval for the mean difference candidate - baseline.

    When both sample variances are zero within `TOL` the change is deterministic: equal
    means give p = 1 both ways, otherwise p = 0
    in the direction of the change and 1 the other way, with df = nan and a point interval.

    Args:
        b: Baseline scores, at least two.
        c: Candidate scores, at least two.
        level: Two-sided confidence level of the interval.

    Returns:
        The summary statistics, t, df, both one-sided p-values and the interval for ``diff``.

    Raises:
        ValueError: If either arm has fewer than two scores or level is not in (0, 1).
    """
    n_b, n_c = len(b), len(c)
    if n_b < 2 or n_c < 2:
        raise ValueError(f"welch needs at least 2 scores per arm, got {n_b} and {n_c}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    mean_b, mean_c = _mean(b), _mean(c)
    var_b, var_c = _var(b, mean_b), _var(c, mean_c)
    sd_b, sd_c = math.sqrt(var_b), math.sqrt(var_c)
    diff = mean_c - mean_b
    if close(var_b, 0.0) and close(var_c, 0.0):
        if close(mean_b, mean_c):
            t, p_lower, p_higher = 0.0, 1.0, 1.0
        else:
            t = math.copysign(math.inf, diff)
            p_lower, p_higher = (0.0, 1.0) if diff < 0 else (1.0, 0.0)
        return WelchResult(
            mean_b, mean_c, sd_b, sd_c, diff, t, math.nan, p_lower, p_higher, diff, diff
        )

    # Imported here: scipy costs more at import than every binary statistic in this module.
    from scipy.special import stdtr, stdtrit

    q_b, q_c = var_b / n_b, var_c / n_c
    se2 = q_b + q_c
    se = math.sqrt(se2)
    df = se2 * se2 / (q_b * q_b / (n_b - 1) + q_c * q_c / (n_c - 1))
    if n_b != n_c:
        # With arms of different sizes, a small arm whose variance comes out low by chance
        # pushes Satterthwaite's df toward the large arm's just when t is inflated: the far
        # tail a corrected test reads turned liberal (5 repeats against 30: 2.7% false alarms
        # at a 0.5% level, bench/calibration.py). Hsu's df, min(n) - 1, is conservative.
        df = min(df, float(min(n_b, n_c) - 1))
    t = diff / se
    half = float(stdtrit(df, 0.5 + level / 2.0)) * se
    return WelchResult(
        mean_b,
        mean_c,
        sd_b,
        sd_c,
        diff,
        t,
        df,
        float(stdtr(df, t)),
        float(stdtr(df, -t)),
        diff - half,
        diff + half,
    )


def paired_mean_ci(
    diffs: Sequence[float], level: float = 0.95, *, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """Mean per-case difference with its case-clustered t interval.

    Each case contributes one difference, so repeats shrink only the within-case variance and
    the interval's width reflects how much cases disagree.

    With few cases the t interval can reach past what the mean can be (a pass-rate change lies
    in [-1, 1]); `bounds` intersects it with that range. The true mean always lies inside, so
    the coverage is unchanged, and so is every decision taken from a bound that stays inside.
    Intervals built to respect the bounds instead (a t interval on a logit scale, a bootstrap)
    are undefined when a case goes from always to never passing (a difference of exactly -1),
    or random and degenerate at two or three cases; and they would move the suite gate's power.

    Args:
        diffs: One candidate - baseline difference per case (or per group of related cases).
        level: Two-sided confidence level.
        bounds: The range the mean can take, e.g. ``(-1.0, 1.0)`` for pass-rate changes.

    Returns:
        ``(mean, low, high)``: ``mean +- t_{(1+level)/2, M-1} * sd / sqrt(M)``, within
        `bounds` when given; ``(mean, -inf, inf)`` (or the bounds) for a single case and
        ``(mean, mean, mean)`` when the sample variance is zero within `TOL`.

    Raises:
        ValueError: If diffs is empty or level is not in (0, 1).
    """
    m = len(diffs)
    if m == 0:
        raise ValueError("paired_mean_ci needs at least one difference")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    mean = _mean(diffs)
    low, high = bounds if bounds is not None else (-math.inf, math.inf)
    if m < 2:
        return mean, low, high
    var = _var(diffs, mean)
    if close(var, 0.0):
        return mean, mean, mean

    from scipy.special import stdtrit

    half = float(stdtrit(m - 1, 0.5 + level / 2.0)) * math.sqrt(var / m)
    return mean, max(mean - half, low), min(mean + half, high)
