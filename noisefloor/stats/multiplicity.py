"""Corrections across cases: Tarone's K for discrete tests, Holm's step-down for any p-values.

Both keep the family-wise false-alarm rate of one check at alpha.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from noisefloor.stats.tolerance import P_RTOL, check_alpha, significant

__all__ = ["holm", "holm_thresholds", "tarone", "tarone_threshold"]


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
    check_alpha(alpha)
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
    check_alpha(alpha)
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
    check_alpha(alpha)
    m = len(pvalues)
    rejected = [False] * m
    for rank, i in enumerate(_ranked(pvalues)):
        if not significant(pvalues[i], alpha / (m - rank)):
            break
        rejected[i] = True
    return rejected
