"""The group-sequential design of one case, exactly: how alpha is spent across looks, and the
chance a case is flagged and the candidate repeats it takes, summed over every binomial path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from noisefloor.stats.binary import newcombe
from noisefloor.stats.power import binom_pmf, regress_boundary
from noisefloor.stats.tolerance import TOL, check_prob

__all__ = ["Looks", "look_outcome", "spending"]


def spending(sizes: Sequence[int], rho: float) -> list[float]:
    """The share of alpha each look spends: the increments of ``(n_j / n_J) ** rho``.

    Kim and DeMets' power family of spending functions, read at each look's candidate repeats
    over the last look's; the shares sum to 1, so a Bonferroni split of alpha across looks by
    these shares keeps the family-wise rate over looks at alpha whatever the looks' correlation.

    Args:
        sizes: Cumulative candidate repeats at each look, increasing.
        rho: The family's exponent: 1 spends in proportion to repeats; larger saves for later.

    Returns:
        One share per look, each positive, summing to 1.
    """
    if not sizes or any(b <= a for a, b in zip(sizes, sizes[1:], strict=False)) or sizes[0] < 1:
        raise ValueError(f"look sizes must be positive and increasing, got {list(sizes)}")
    if rho <= 0:
        raise ValueError(f"rho must be positive, got {rho}")
    spent = [(n / sizes[-1]) ** rho for n in sizes]
    return [b - a for a, b in zip([0.0, *spent[:-1]], spent, strict=True)]


@dataclass(frozen=True)
class Looks:
    """One case's looks as the design runs them."""

    sizes: tuple[int, ...]
    """Cumulative candidate repeats at each look."""
    thresholds: tuple[float, ...]
    """The per-case level a one-sided Fisher p is held to at each look (alpha's share / K)."""
    futility: tuple[float, ...]
    """A case whose p exceeds this after a look (every look but the last) stops."""
    suspect_drop: float = 0.20
    """A drop at least this large whose interval reaches `min_effect` keeps a case running."""
    min_effect: float = 0.10


def _goes_on(k_b: int, n_b: int, k_c: int, n_c: int, looks: Looks) -> bool:
    """Whether an unrejected table below the futility bound is inconclusive (rule exact):
    a drop of `suspect_drop` whose 95% interval reaches `min_effect`."""
    drop = k_b / n_b - k_c / n_c
    if drop < looks.suspect_drop - TOL:
        return False
    low, _ = newcombe(k_b, n_b, k_c, n_c)
    return -low >= looks.min_effect - TOL


def look_outcome(n_b: int, looks: Looks, p_b: float, p_c: float) -> tuple[float, float]:
    """The chance one case is flagged regressed, and its mean candidate repeats.

    Exact over the baseline's binomial count and every path of cumulative candidate counts:
    at each look a table rejects when its Fisher p reaches the look's threshold, goes on when
    its p is at most the futility bound (or the rule calls it inconclusive), and stops
    otherwise; the last look stops every case.

    Args:
        n_b: Baseline repeats.
        looks: The design's looks.
        p_b: True baseline pass rate.
        p_c: True candidate pass rate.

    Returns:
        ``(P(flagged), E[candidate repeats])``.
    """
    check_prob(p_b, "p_b")
    check_prob(p_c, "p_c")
    sizes = looks.sizes
    if n_b < 1 or not sizes:
        return 0.0, float(sizes[0] if sizes else 0)
    last = len(sizes) - 1
    rejects = [regress_boundary(n_b, n, t) for n, t in zip(sizes, looks.thresholds, strict=True)]
    futile = [regress_boundary(n_b, n, f) for n, f in zip(sizes, looks.futility, strict=False)]
    flagged, repeats = [], []
    for k_b, w_b in enumerate(binom_pmf(n_b, p_b)):
        if w_b == 0.0:
            continue
        mass = list(binom_pmf(sizes[0], p_c))
        for j, n_c in enumerate(sizes):
            carried = [0.0] * (n_c + 1)
            for k_c, m in enumerate(mass):
                if m == 0.0:
                    continue
                if k_c <= rejects[j][k_b]:
                    flagged.append(w_b * m)
                    repeats.append(w_b * m * n_c)
                elif j < last and (k_c <= futile[j][k_b] or _goes_on(k_b, n_b, k_c, n_c, looks)):
                    carried[k_c] = m
                else:
                    repeats.append(w_b * m * n_c)
            if j == last:
                break
            step = binom_pmf(sizes[j + 1] - n_c, p_c)
            mass = [0.0] * (sizes[j + 1] + 1)
            for k_c, m in enumerate(carried):
                if m:
                    for extra, w in enumerate(step):
                        mass[k_c + extra] += m * w
    return min(1.0, math.fsum(flagged)), math.fsum(repeats)
