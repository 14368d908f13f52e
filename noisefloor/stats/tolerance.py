"""Tolerances and argument checks that every statistic of the gate shares.

Scores are equal within `TOL`; p-values meet thresholds with the relative slack `P_RTOL`.
"""

from __future__ import annotations

__all__ = ["P_RTOL", "TOL", "check_alpha", "check_counts", "check_prob", "close", "significant"]

#: Absolute and relative tolerance for "equal" scores and "zero" variances.
TOL = 1e-9
#: Relative slack when a p-value is compared with a threshold, so that attainable values such as
#: 0.05 at N=3 are not lost to rounding in alpha/K.
P_RTOL = 1e-12


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


def check_counts(k: int, n: int, name: str) -> None:
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"{name}: need 0 <= k <= n, got k={k}, n={n}")


def check_alpha(alpha: float) -> None:
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")


def check_prob(p: float, name: str) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {p}")
