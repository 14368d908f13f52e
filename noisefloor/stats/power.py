"""Detectability and power: the smallest drop a check can flag, and the repeats a drop needs.

Exact for the Fisher test (its power is not monotone in n); noncentral t for continuous scores.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import accumulate

from noisefloor.stats.tolerance import check_alpha, check_counts, check_prob, significant

__all__ = [
    "binom_pmf",
    "fisher_power",
    "min_detectable_drop",
    "regress_boundary",
    "repeats_needed",
    "t_power",
    "t_repeats_needed",
]


@lru_cache(maxsize=4096)
def regress_boundary(n_b: int, n_c: int, threshold: float) -> tuple[int, ...]:
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
    check_counts(k_b, n_b, "baseline")
    if n_c < 0:
        raise ValueError(f"candidate: need n >= 0, got {n_c}")
    if n_b == 0 or n_c == 0:
        return None
    k_c = regress_boundary(n_b, n_c, threshold)[k_b]
    if k_c < 0:
        return None
    return k_b / n_b - k_c / n_c


@lru_cache(maxsize=4096)
def binom_pmf(n: int, p: float) -> tuple[float, ...]:
    """Binomial(n, p) probabilities of 0..n passes."""
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
    check_alpha(alpha)
    check_prob(p_b, "p_b")
    check_prob(p_c, "p_c")
    if n_b < 1 or n_c < 1:
        return 0.0
    bounds = regress_boundary(n_b, n_c, alpha)
    cdf_c = list(accumulate(binom_pmf(n_c, p_c)))
    pmf_b = binom_pmf(n_b, p_b)
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
    check_alpha(alpha)
    check_prob(p_b, "p_b")
    check_prob(p_c, "p_c")
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
    check_alpha(alpha)
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
    check_alpha(alpha)
    if shift_sd <= 0.0 and power > alpha:
        return None
    for n in range(2, n_max + 1):
        if t_power(n, shift_sd, alpha) >= power:
            return n
    return None
