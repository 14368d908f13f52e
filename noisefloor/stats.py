"""Exact statistics behind the gate: Fisher, Tarone, Holm, Wilson, Newcombe, Welch and power.

Binary statistics are pure Python and exact; scipy is imported lazily, only by the continuous ones.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

__all__ = [
    "P_RTOL",
    "TOL",
    "WelchResult",
    "close",
    "fisher_improve",
    "fisher_improve_min",
    "fisher_power",
    "fisher_regress",
    "fisher_regress_min",
    "holm",
    "holm_thresholds",
    "min_detectable_drop",
    "newcombe",
    "paired_mean_ci",
    "repeats_needed",
    "significant",
    "t_power",
    "t_repeats_needed",
    "tarone",
    "tarone_threshold",
    "welch",
    "wilson",
]

#: Absolute and relative tolerance for "equal" scores and "zero" variances.
TOL = 1e-9
#: Relative slack when a p-value is compared with a threshold, so that attainable values such as
#: 0.05 at N=3 are not lost to rounding in alpha/K.
P_RTOL = 1e-12

# The two-sided 95% normal quantile, as scipy computes it for Wilson intervals.
_Z95 = 1.959963984540054


def close(a: float, b: float, atol: float = TOL, rtol: float = TOL) -> bool:
    """Whether two scores are equal within tolerance.

    Args:
        a: One value.
        b: The other value.
        atol: Absolute tolerance.
        rtol: Tolerance relative to the larger magnitude.

    Returns:
        ``|a - b| <= atol + rtol * max(|a|, |b|)``.
    """
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def significant(p: float, threshold: float) -> bool:
    """Whether a p-value reaches a threshold, with the shared relative slack `P_RTOL`.

    Args:
        p: The p-value.
        threshold: The level it is held to (e.g. alpha/K).

    Returns:
        ``p <= threshold * (1 + P_RTOL)``.
    """
    return p <= threshold * (1.0 + P_RTOL)


def _check_counts(k: int, n: int, name: str) -> None:
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"{name}: need 0 <= k <= n, got k={k}, n={n}")


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")


def _check_prob(p: float, name: str) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {p}")


# ---------------------------------------------------------------- Fisher exact (binary)


def _hypergeom_weight(big_k: int, n_b: int, n_c: int, x: int) -> int:
    """Number of ways the baseline's n_b draws hold x of the big_k passes."""
    return math.comb(big_k, x) * math.comb(n_b + n_c - big_k, n_b - x)


def _support(k_b: int, n_b: int, k_c: int, n_c: int) -> tuple[int, int, int]:
    """Passes in both arms and the range of X ~ Hypergeom(n_b + n_c, passes, n_b)."""
    big_k = k_b + k_c
    return big_k, max(0, big_k - n_c), min(n_b, big_k)


def fisher_regress(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """One-sided Fisher exact p-value that the candidate passes less often than the baseline.

    Args:
        k_b: Baseline passes.
        n_b: Baseline valid repeats.
        k_c: Candidate passes.
        n_c: Candidate valid repeats.

    Returns:
        ``P(X >= k_b)`` with ``X ~ Hypergeom(n_b + n_c, k_b + k_c, n_b)``, exact up to the final
        rounding; 1.0 when either arm is empty.
    """
    _check_counts(k_b, n_b, "baseline")
    _check_counts(k_c, n_c, "candidate")
    if n_b == 0 or n_c == 0:
        return 1.0
    big_k, _, hi = _support(k_b, n_b, k_c, n_c)
    # Integer sum, one correctly rounded division: tiny tails keep full relative precision.
    num = sum(_hypergeom_weight(big_k, n_b, n_c, x) for x in range(k_b, hi + 1))
    return min(1.0, num / math.comb(n_b + n_c, n_b))


def fisher_improve(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """One-sided Fisher exact p-value that the candidate passes more often than the baseline.

    Args:
        k_b: Baseline passes.
        n_b: Baseline valid repeats.
        k_c: Candidate passes.
        n_c: Candidate valid repeats.

    Returns:
        ``P(X <= k_b)`` with ``X ~ Hypergeom(n_b + n_c, k_b + k_c, n_b)``; 1.0 when either arm
        is empty.
    """
    _check_counts(k_b, n_b, "baseline")
    _check_counts(k_c, n_c, "candidate")
    if n_b == 0 or n_c == 0:
        return 1.0
    big_k, lo, _ = _support(k_b, n_b, k_c, n_c)
    num = sum(_hypergeom_weight(big_k, n_b, n_c, x) for x in range(lo, k_b + 1))
    return min(1.0, num / math.comb(n_b + n_c, n_b))


def fisher_regress_min(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """Smallest `fisher_regress` p-value attainable with the same margins (Tarone's p_min).

    Args:
        k_b: Baseline passes.
        n_b: Baseline valid repeats.
        k_c: Candidate passes.
        n_c: Candidate valid repeats.

    Returns:
        The p-value of the most extreme table (the baseline holds as many of the passes as it
        can); 1.0 when either arm is empty.
    """
    _check_counts(k_b, n_b, "baseline")
    _check_counts(k_c, n_c, "candidate")
    if n_b == 0 or n_c == 0:
        return 1.0
    big_k, _, hi = _support(k_b, n_b, k_c, n_c)
    return _hypergeom_weight(big_k, n_b, n_c, hi) / math.comb(n_b + n_c, n_b)


def fisher_improve_min(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """Smallest `fisher_improve` p-value attainable with the same margins (Tarone's p_min).

    Args:
        k_b: Baseline passes.
        n_b: Baseline valid repeats.
        k_c: Candidate passes.
        n_c: Candidate valid repeats.

    Returns:
        The p-value of the most extreme table (the candidate holds as many of the passes as it
        can); 1.0 when either arm is empty.
    """
    _check_counts(k_b, n_b, "baseline")
    _check_counts(k_c, n_c, "candidate")
    if n_b == 0 or n_c == 0:
        return 1.0
    big_k, lo, _ = _support(k_b, n_b, k_c, n_c)
    return _hypergeom_weight(big_k, n_b, n_c, lo) / math.comb(n_b + n_c, n_b)


# ---------------------------------------------------------------- multiplicity


def tarone(pmins: Sequence[float], alpha: float) -> int:
    """Tarone's K for discrete tests: the smallest K >= 1 with #{i : pmin_i <= alpha/K} <= K.

    A case whose smallest attainable p-value exceeds alpha/K can never be rejected, so it is
    left out of the count and costs no alpha: an all-pass case (pmin = 1) is free.

    Args:
        pmins: Each case's smallest attainable p-value given its margins.
        alpha: Family-wise error rate.

    Returns:
        K, between 1 and ``max(1, len(pmins))``.
    """
    _check_alpha(alpha)
    ordered = sorted(pmins)
    for k in range(1, len(ordered) + 1):
        if bisect_right(ordered, alpha / k * (1.0 + P_RTOL)) <= k:
            return k
    return 1


def tarone_threshold(pmins: Sequence[float], alpha: float) -> float:
    """The per-case level alpha/K of Tarone's procedure (see `tarone`).

    Args:
        pmins: Each case's smallest attainable p-value given its margins.
        alpha: Family-wise error rate.

    Returns:
        ``alpha / tarone(pmins, alpha)``; compare p-values to it with `significant`.
    """
    return alpha / tarone(pmins, alpha)


def _ranked(pvalues: Sequence[float]) -> list[int]:
    # Stable: tied p-values keep input order, which never changes Holm's decisions.
    return sorted(range(len(pvalues)), key=lambda i: pvalues[i])


def holm_thresholds(pvalues: Sequence[float], alpha: float) -> list[float]:
    """The level each p-value is held to by Holm's step-down procedure.

    Args:
        pvalues: One p-value per hypothesis.
        alpha: Family-wise error rate.

    Returns:
        ``alpha / (m - rank)`` for each input position, where rank is its 0-based place in the
        ascending order; reported even past the first non-rejection.
    """
    _check_alpha(alpha)
    m = len(pvalues)
    thresholds = [0.0] * m
    for rank, i in enumerate(_ranked(pvalues)):
        thresholds[i] = alpha / (m - rank)
    return thresholds


def holm(pvalues: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down rejections, controlling the family-wise error under any dependence.

    Args:
        pvalues: One p-value per hypothesis.
        alpha: Family-wise error rate.

    Returns:
        Whether each hypothesis is rejected, in input order.
    """
    _check_alpha(alpha)
    m = len(pvalues)
    rejected = [False] * m
    for rank, i in enumerate(_ranked(pvalues)):
        if not significant(pvalues[i], alpha / (m - rank)):
            break
        rejected[i] = True
    return rejected


# ---------------------------------------------------------------- intervals (binary)


def wilson(k: int, n: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval for a pass rate.

    Args:
        k: Passes.
        n: Valid repeats.
        z: Normal quantile; the default gives a two-sided 95% interval.

    Returns:
        ``(low, high)`` within [0, 1]; ``(0.0, 1.0)`` when n is 0.
    """
    _check_counts(k, n, "wilson")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denom = 2.0 * (n + z2)
    center = (2.0 * k + z2) / denom
    half = z / denom * math.sqrt(4.0 * n * p * (1.0 - p) + z2)
    # The bounds at k = 0 and k = n are exactly 0 and 1; say so rather than round to 1e-17.
    low = 0.0 if k == 0 else max(0.0, center - half)
    high = 1.0 if k == n else min(1.0, center + half)
    return low, high


def newcombe(k_b: int, n_b: int, k_c: int, n_c: int, z: float = _Z95) -> tuple[float, float]:
    """Newcombe (1998) hybrid score interval (method 10) for the difference p_c - p_b.

    Args:
        k_b: Baseline passes.
        n_b: Baseline valid repeats.
        k_c: Candidate passes.
        n_c: Candidate valid repeats.
        z: Normal quantile; the default gives a two-sided 95% interval.

    Returns:
        ``(low, high)`` within [-1, 1]; ``(-1.0, 1.0)`` when either arm is empty.
    """
    _check_counts(k_b, n_b, "baseline")
    _check_counts(k_c, n_c, "candidate")
    if n_b == 0 or n_c == 0:
        return -1.0, 1.0
    p_b, p_c = k_b / n_b, k_c / n_c
    lo_b, hi_b = wilson(k_b, n_b, z)
    lo_c, hi_c = wilson(k_c, n_c, z)
    diff = p_c - p_b
    low = diff - math.hypot(p_c - lo_c, hi_b - p_b)
    high = diff + math.hypot(hi_c - p_c, p_b - lo_b)
    return max(-1.0, low), min(1.0, high)


# ---------------------------------------------------------------- continuous


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
    #: Welch-Satterthwaite degrees of freedom; nan when both arms are constant.
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


# ---------------------------------------------------------------- detectability and power


@lru_cache(maxsize=4096)
def _regress_boundary(n_b: int, n_c: int, threshold: float) -> tuple[int, ...]:
    """For each k_b, the largest k_c whose `fisher_regress` p reaches threshold, or -1.

    The p-value rises with k_c and falls with k_b, so the rejection region is a staircase that
    one walk of n_b + n_c steps traces. Each step updates the tail's integer numerator over the
    fixed denominator C(n_b + n_c, n_b) exactly, so every p compared is the one
    `fisher_regress` returns, at O(1) big-integer operations per step (the power of a discrete
    test is not monotone in n, so it is checked exactly, for every n).
    """
    big_n = n_b + n_c
    denom = math.comb(big_n, n_b)
    # State at table (x, j) = (k_b, k_c), with r = n_b - x and s = n_c - j left over:
    #   tail = sum_{y >= x} C(K, y) C(N - K, n_b - y), K = x + j
    #   a = C(K, x), a1 = C(K, x - 1), b = C(N - K - 1, n_b - x)
    tail, a, a1 = denom, 1, 0
    b = denom * n_c // big_n
    x, j = 0, 0
    bounds: list[int] = []
    while True:
        r, s = n_b - x, n_c - j
        while significant(tail / denom, threshold):
            if s == 0:
                j = n_c + 1  # the whole column is rejected
                break
            # One more candidate pass: the draws with X = x - 1 that held the converted fail.
            tail += a1 * b
            big_k = x + j
            a = a * (big_k + 1) // (j + 1)
            a1 = a1 * (big_k + 1) // (j + 2)
            b = b * (s - 1) // (r + s - 1) if s >= 2 else 0
            j += 1
            s -= 1
        bounds.append(min(j - 1, n_c))
        if x == n_b:
            return tuple(bounds)
        if j > n_c:
            # Every later k_b is at least as extreme, so its whole column is rejected too.
            bounds.extend([n_c] * (n_b - x))
            return tuple(bounds)
        # One more baseline pass: P_{K+1}(X >= x + 1) = P_K(X >= x) - C(K, x) C(N - K - 1, n_b - x).
        tail -= a * b
        big_k = x + j
        a, a1 = a * (big_k + 1) // (x + 1), a * (big_k + 1) // (j + 1)
        b = b * r // (r + s - 1) if r + s >= 2 else 0
        x += 1


def min_detectable_drop(k_b: int, n_b: int, n_c: int, threshold: float) -> float | None:
    """Smallest observed drop in pass rate that `fisher_regress` would flag at this threshold.

    Printed next to an unchanged case so that "no significant change" is never read as proven
    equal.

    Args:
        k_b: Baseline passes.
        n_b: Baseline valid repeats.
        n_c: Candidate valid repeats.
        threshold: The per-case level (e.g. alpha/K).

    Returns:
        ``k_b/n_b - k_c/n_c`` for the largest k_c whose p-value reaches threshold (with
        `P_RTOL` slack), or None when no k_c does: no drop is detectable at this N.
    """
    _check_counts(k_b, n_b, "baseline")
    if n_c < 0:
        raise ValueError(f"candidate: need n >= 0, got {n_c}")
    if n_b == 0 or n_c == 0:
        return None
    k_c = _regress_boundary(n_b, n_c, threshold)[k_b]
    if k_c < 0:
        return None
    return k_b / n_b - k_c / n_c


@lru_cache(maxsize=4096)
def _binom_pmf(n: int, p: float) -> tuple[float, ...]:
    if p == 0.0 or p == 1.0:
        hit = 0 if p == 0.0 else n
        return tuple(1.0 if k == hit else 0.0 for k in range(n + 1))
    # Log space keeps large n finite; relative error ~1e-13, far below what power planning needs.
    log_p, log_q, log_nf = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    return tuple(
        math.exp(log_nf - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
        for k in range(n + 1)
    )


def fisher_power(n_b: int, n_c: int, p_b: float, p_c: float, alpha: float) -> float:
    """Exact power of the one-sided Fisher test for a drop, summed over binomial outcomes.

    Args:
        n_b: Baseline repeats.
        n_c: Candidate repeats.
        p_b: True baseline pass rate.
        p_c: True candidate pass rate.
        alpha: Per-case level (with `P_RTOL` slack, as the gate applies it).

    Returns:
        P(fisher_regress(k_b, n_b, k_c, n_c) <= alpha) for independent binomial k_b and k_c.
    """
    _check_alpha(alpha)
    _check_prob(p_b, "p_b")
    _check_prob(p_c, "p_c")
    if n_b < 1 or n_c < 1:
        return 0.0
    bounds = _regress_boundary(n_b, n_c, alpha)
    cdf_c = list(accumulate(_binom_pmf(n_c, p_c)))
    pmf_b = _binom_pmf(n_b, p_b)
    return min(1.0, math.fsum(w * cdf_c[k] for w, k in zip(pmf_b, bounds, strict=True) if k >= 0))


def repeats_needed(
    p_b: float,
    p_c: float,
    alpha: float,
    power: float = 0.8,
    n_max: int = 400,
    *,
    n_baseline: int | None = None,
) -> int | None:
    """Smallest repeats per arm for the one-sided Fisher test to reach the power.

    Power is not monotone in n for a discrete test, so every n from 1 up is checked exactly and
    the first that reaches the power is returned.

    Args:
        p_b: True baseline pass rate.
        p_c: True candidate pass rate.
        alpha: Per-case level (e.g. alpha/K).
        power: Target power.
        n_max: Largest n tried.
        n_baseline: A fixed number of stored baseline repeats; only the candidate's n varies.

    Returns:
        The smallest n with ``fisher_power >= power``, or None if no n up to n_max reaches it.
    """
    _check_alpha(alpha)
    _check_prob(p_b, "p_b")
    _check_prob(p_c, "p_c")
    # A level-alpha test of a drop has power <= alpha when there is no drop.
    if p_c >= p_b and power > alpha:
        return None
    for n in range(1, n_max + 1):
        if fisher_power(n if n_baseline is None else n_baseline, n, p_b, p_c, alpha) >= power:
            return n
    return None


def t_power(n: int, shift_sd: float, alpha: float) -> float:
    """Exact power of the one-sided two-sample t test (noncentral t), n per arm.

    Args:
        n: Repeats per arm, at least 2.
        shift_sd: True drop of the candidate mean, in units of the common sd.
        alpha: Per-case level.

    Returns:
        ``P(T > t_{1-alpha, 2n-2})`` with T noncentral t, df 2n - 2, noncentrality
        ``shift_sd * sqrt(n / 2)``.
    """
    _check_alpha(alpha)
    if n < 2:
        raise ValueError(f"t_power needs n >= 2, got {n}")
    # Power planning only: scipy.stats is the heaviest import in this module.
    from scipy.special import stdtrit
    from scipy.stats import nct

    df = 2 * n - 2
    # -t_alpha rather than t_{1-alpha}: exact by symmetry, and 1 - alpha would round.
    crit = -float(stdtrit(df, alpha))
    return float(nct.sf(crit, df, shift_sd * math.sqrt(n / 2.0)))


def t_repeats_needed(
    shift_sd: float, alpha: float, power: float = 0.8, n_max: int = 1000
) -> int | None:
    """Smallest repeats per arm for the one-sided two-sample t test to reach the power.

    Args:
        shift_sd: True drop of the candidate mean, in units of the common sd.
        alpha: Per-case level.
        power: Target power.
        n_max: Largest n tried.

    Returns:
        The smallest n >= 2 with ``t_power >= power``, or None if no n up to n_max reaches it.
    """
    _check_alpha(alpha)
    if shift_sd <= 0.0 and power > alpha:
        return None
    for n in range(2, n_max + 1):
        if t_power(n, shift_sd, alpha) >= power:
            return n
    return None
