"""How far a case's pass rate moves between sessions, each one `(passes, repeats)`: homogeneity,
the intra-session correlation (ICC) of pass/fail outcomes and its design effect."""

from __future__ import annotations

from collections.abc import Sequence

Session = tuple[int, int]


def _nonempty(sessions: Sequence[Session]) -> list[Session]:
    """The sessions that took repeats (the others carry no information), checked."""
    kept = [(int(k), int(n)) for k, n in sessions if n > 0]
    for k, n in kept:
        if not 0 <= k <= n:
            raise ValueError(f"a session of {n} repeats cannot have {k} passes")
    if len(kept) < 2:
        raise ValueError("at least two sessions with repeats are needed")
    return kept


def pooled_rate(sessions: Sequence[Session]) -> float:
    """Passes over repeats, all sessions together."""
    kept = _nonempty(sessions)
    return sum(k for k, _ in kept) / sum(n for _, n in kept)


def homogeneity_p(sessions: Sequence[Session]) -> float:
    """Pearson's chi-square test that every session has the same pass rate (the sessions x
    pass/fail table, no continuity correction); 1.0 when every repeat passed or every one failed.
    """
    from scipy.stats import chi2  # scipy loads only where a p-value is asked for

    kept = _nonempty(sessions)
    rate = pooled_rate(kept)
    if rate in (0.0, 1.0):
        return 1.0
    statistic = sum((k - n * rate) ** 2 / (n * rate * (1 - rate)) for k, n in kept)
    return float(chi2.sf(statistic, len(kept) - 1))


def mean_session_size(sessions: Sequence[Session]) -> float:
    """The ANOVA's adjusted mean session size m0; the plain size when every session is as big."""
    kept = _nonempty(sessions)
    total = sum(n for _, n in kept)
    return (total - sum(n * n for _, n in kept) / total) / (len(kept) - 1)


def icc(sessions: Sequence[Session]) -> float:
    """The ANOVA estimator of the intra-session correlation of pass/fail outcomes,
    (MSB - MSW) / (MSB + (m0 - 1) MSW), floored at 0; 0 when no repeat differs from another.
    """
    kept = _nonempty(sessions)
    total = sum(n for _, n in kept)
    if total <= len(kept):
        raise ValueError("the sessions need more repeats than there are sessions")
    rate = pooled_rate(kept)
    between = sum(n * (k / n - rate) ** 2 for k, n in kept) / (len(kept) - 1)
    within = sum(k * (n - k) / n for k, n in kept) / (total - len(kept))
    denominator = between + (mean_session_size(kept) - 1) * within
    if denominator <= 0:
        return 0.0
    return max(0.0, (between - within) / denominator)


def design_effect(rho: float, session_size: float) -> float:
    """How many times the variance of a session's pass rate exceeds the binomial one:
    1 + (m - 1) rho for sessions of m repeats."""
    if not 0 <= rho <= 1:
        raise ValueError(f"an intra-session correlation lies in [0, 1], not {rho}")
    return 1 + (session_size - 1) * rho


def sessions_off(sessions: Sequence[Session], standard_errors: float) -> int:
    """How many sessions' rates lie more than `standard_errors` binomial standard errors (at the
    pooled rate and the session's size) from the pooled rate; about 5% of them beyond 2 when
    repeats are independent."""
    kept = _nonempty(sessions)
    rate = pooled_rate(kept)
    return sum(
        1 for k, n in kept if abs(k / n - rate) > standard_errors * (rate * (1 - rate) / n) ** 0.5
    )
