"""Exact statistics of pass counts: Fisher's one-sided tests, Wilson and Newcombe intervals, and
the exact binomial test of one pass rate against a bar.

Every function takes counts: k passes of n valid repeats, baseline (_b) and candidate (_c).
"""

from __future__ import annotations

import math

from noisefloor.stats.tolerance import check_alpha, check_counts, check_prob

__all__ = [
    "binomial_below",
    "binomial_upper",
    "fisher_improve",
    "fisher_improve_min",
    "fisher_regress",
    "fisher_regress_min",
    "newcombe",
    "wilson",
]

# The two-sided 95% normal quantile, as scipy computes it for Wilson intervals.
_Z95 = 1.959963984540054


def _hypergeom_weight(big_k: int, n_b: int, n_c: int, x: int) -> int:
    """Number of ways the baseline's n_b draws hold x of the big_k passes."""
    return math.comb(big_k, x) * math.comb(n_b + n_c - big_k, n_b - x)


def _support(k_b: int, n_b: int, k_c: int, n_c: int) -> tuple[int, int, int]:
    """Passes in both arms and the range of X ~ Hypergeom(n_b + n_c, passes, n_b)."""
    big_k = k_b + k_c
    return big_k, max(0, big_k - n_c), min(n_b, big_k)


def _fisher(k_b: int, n_b: int, k_c: int, n_c: int, *, drop: bool, extreme: bool) -> float:
    """A one-sided Fisher tail, exact up to the final rounding; 1.0 when either arm is empty.

    `drop`: the tail ``X >= k_b`` (the candidate passes less often), else ``X <= k_b``.
    `extreme`: only the most extreme table of that tail (Tarone's p_min), else the whole tail.
    """
    check_counts(k_b, n_b, "baseline")
    check_counts(k_c, n_c, "candidate")
    if n_b == 0 or n_c == 0:
        return 1.0
    big_k, lo, hi = _support(k_b, n_b, k_c, n_c)
    if drop:
        tail = range(hi, hi + 1) if extreme else range(k_b, hi + 1)
    else:
        tail = range(lo, lo + 1) if extreme else range(lo, k_b + 1)
    # Integer sum, one correctly rounded division: tiny tails keep full relative precision.
    num = sum(_hypergeom_weight(big_k, n_b, n_c, x) for x in tail)
    return min(1.0, num / math.comb(n_b + n_c, n_b))


def fisher_regress(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """One-sided Fisher exact p-value that the candidate passes less often than the baseline.

    Returns ``P(X >= k_b)`` with ``X ~ Hypergeom(n_b + n_c, k_b + k_c, n_b)``.
    """
    return _fisher(k_b, n_b, k_c, n_c, drop=True, extreme=False)


def fisher_improve(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """One-sided Fisher exact p-value that the candidate passes more often than the baseline.

    Returns ``P(X <= k_b)`` with ``X ~ Hypergeom(n_b + n_c, k_b + k_c, n_b)``.
    """
    return _fisher(k_b, n_b, k_c, n_c, drop=False, extreme=False)


def fisher_regress_min(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """Smallest `fisher_regress` p-value attainable with the same margins (Tarone's p_min).

    The p-value of the table where the baseline holds as many of the passes as it can.
    """
    return _fisher(k_b, n_b, k_c, n_c, drop=True, extreme=True)


def fisher_improve_min(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """Smallest `fisher_improve` p-value attainable with the same margins (Tarone's p_min).

    The p-value of the table where the candidate holds as many of the passes as it can.
    """
    return _fisher(k_b, n_b, k_c, n_c, drop=False, extreme=True)


def wilson(k: int, n: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval for a pass rate.

    Args:
        k: Passes.
        n: Valid repeats.
        z: Normal quantile; the default gives a two-sided 95% interval.

    Returns:
        ``(low, high)`` within [0, 1]; ``(0.0, 1.0)`` when n is 0.
    """
    check_counts(k, n, "wilson")
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
    check_counts(k_b, n_b, "baseline")
    check_counts(k_c, n_c, "candidate")
    if n_b == 0 or n_c == 0:
        return -1.0, 1.0
    p_b, p_c = k_b / n_b, k_c / n_c
    lo_b, hi_b = wilson(k_b, n_b, z)
    lo_c, hi_c = wilson(k_c, n_c, z)
    diff = p_c - p_b
    low = diff - math.hypot(p_c - lo_c, hi_b - p_b)
    high = diff + math.hypot(hi_c - p_c, p_b - lo_b)
    return max(-1.0, low), min(1.0, high)


def binomial_below(k: int, n: int, rate: float) -> float:
    """One-sided exact binomial p-value that a pass rate is below `rate`: ``P(X <= k)`` with
    ``X ~ Binomial(n, rate)``; 1.0 when n is 0, or `rate` is 0.

    Summed in log space, so that thousands of repeats neither overflow nor lose the tail.
    """
    check_counts(k, n, "binomial")
    check_prob(rate, "rate")
    if n == 0 or k == n or rate <= 0.0:
        return 1.0
    if rate >= 1.0:
        return 0.0
    log_p, log_q = math.log(rate), math.log1p(-rate)
    terms = [
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * log_p
        + (n - i) * log_q
        for i in range(k + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in terms))


def binomial_upper(k: int, n: int, alpha: float) -> float:
    """The exact (Clopper-Pearson) one-sided upper confidence bound of a pass rate at level
    ``1 - alpha``: the rate at which `binomial_below` is `alpha`; 1.0 when k is n or n is 0.

    Found by bisection to 1e-9: `binomial_below` falls as the rate rises.
    """
    check_counts(k, n, "binomial")
    check_alpha(alpha)
    if n == 0 or k == n:
        return 1.0
    low, high = k / n, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        if binomial_below(k, n, mid) > alpha:
            low = mid
        else:
            high = mid
    return high
