"""How far a case's pass rate moves between sessions of one version, learned from the sessions a
store holds and shrunk across a suite's cases, and a drop tested against that much drift.

The model (docs/drift.md): each session draws a case's rate from a beta distribution around its
mean with intra-session correlation rho, so a session's rate varies by rho * p * (1 - p) beyond
the binomial variance of its repeats. Each case's rho is estimated by the one-way ANOVA
estimator over its sessions, and shrunk towards the suite's, itself shrunk towards a prior
(`settings.DRIFT_PRIOR`), each estimate weighted by its information: the inverse of the
estimator's variance near rho = 0, m0 (m0 - 1) (S - 1) / 2 for S sessions of m0 repeats
(docs/drift.md), as a moderated variance is shrunk in empirical Bayes (Smyth 2004).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "Dispersion",
    "Spread",
    "beta_binomial_cdf",
    "dispersion",
    "drift_p",
    "learned_spread",
    "prior_weight",
]

#: A session of a case: (passes, repeats).
Session = tuple[int, int]


@dataclass(frozen=True)
class Dispersion:
    """One case's sessions, summed up for the estimate of its rho."""

    rho: float
    """The ANOVA estimate, (MSB - MSW) / (MSB + (m0 - 1) MSW), not floored: a negative one is
    as much evidence as a positive one, and a mean of them is unbiased."""
    weight: float
    """Its information, m0 (m0 - 1) (S - 1) / 2: the inverse of its variance near rho = 0."""
    sessions: int
    """Sessions with repeats."""


def dispersion(sessions: Sequence[Session]) -> Dispersion | None:
    """The spread of one case's pass rate over its sessions, or None when they tell nothing
    about it: fewer than two sessions with repeats, or every repeat alike (a rate of 0 or 1
    has no room to move in the beta model)."""
    kept = [(k, n) for k, n in sessions if n > 0]
    count = len(kept)
    total = sum(n for _, n in kept)
    if count < 2 or total <= count:
        return None
    rate = sum(k for k, _ in kept) / total
    between = sum(n * (k / n - rate) ** 2 for k, n in kept) / (count - 1)
    within = sum(k * (n - k) / n for k, n in kept) / (total - count)
    m0 = (total - sum(n * n for _, n in kept) / total) / (count - 1)
    denominator = between + (m0 - 1) * within
    if denominator <= 0 or m0 <= 1:
        return None
    weight = m0 * (m0 - 1) * (count - 1) / 2
    return Dispersion(rho=(between - within) / denominator, weight=weight, sessions=count)


def prior_weight(sessions: float, repeats: int) -> float:
    """The weight of a prior worth `sessions` sessions of `repeats` repeats beyond one."""
    return repeats * (repeats - 1) * sessions / 2


@dataclass(frozen=True)
class Spread:
    """The drift a case is allowed: its rho, and what it was learned from."""

    rho: float
    """The intra-session correlation a drop is tested against."""
    sessions: int
    """The case's own sessions that told something (0: the suite's and the prior's alone)."""
    suite_rho: float
    """The rho of the suite's other cases (and the prior), which the case's own estimate is
    shrunk towards."""
    suite_sessions: int
    """Sessions of the suite's other cases that told something."""


def learned_spread(
    cases: Mapping[str, Dispersion | None], prior: float, weight: float
) -> dict[str, Spread]:
    """Each case's rho: its own estimate shrunk towards the suite's, the suite's (over the other
    cases, so that no case counts twice) towards `prior`, each mean weighted by information
    (`weight`: the prior's and the suite's as a case's prior, `prior_weight`), floored at 0. A
    case with no sessions to learn from takes the suite's."""
    known = {cid: d for cid, d in cases.items() if d is not None}
    mass = prior * weight + sum(d.rho * d.weight for d in known.values())
    total = weight + sum(d.weight for d in known.values())
    spent = sum(d.sessions for d in known.values())
    out = {}
    for case_id in cases:
        d = known.get(case_id)
        if d is None:
            suite = mass / total
            rho = suite
        else:
            suite = (mass - d.rho * d.weight) / (total - d.weight)
            rho = (suite * weight + d.rho * d.weight) / (weight + d.weight)
        out[case_id] = Spread(
            rho=_unit(rho),
            sessions=d.sessions if d is not None else 0,
            suite_rho=_unit(suite),
            suite_sessions=spent - (d.sessions if d is not None else 0),
        )
    return out


def _unit(rho: float) -> float:
    return min(max(rho, 0.0), 1.0)


def beta_binomial_cdf(k: int, n: int, a: float, b: float) -> float:
    """P(K <= k) for K ~ BetaBinomial(n, a, b), summed exactly in log space."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    total = 0.0
    for x in range(k + 1):
        log_pmf = (
            math.lgamma(n + 1)
            - math.lgamma(x + 1)
            - math.lgamma(n - x + 1)
            + math.lgamma(x + a)
            + math.lgamma(n - x + b)
            - math.lgamma(n + a + b)
            - log_beta
        )
        total += math.exp(log_pmf)
    return min(total, 1.0)


def drift_p(
    k_b: int, n_b: int, k_c: int, n_c: int, rho: float, concentration: float = 1.0
) -> float:
    """The p-value of `k_c` passes in `n_c` candidate repeats if the candidate were no worse than
    the baseline's version in the candidate's session, that session's rate having moved from
    the baseline's `k_b`/`n_b` as far as drift of `rho` moves it.

    The candidate's rate is then the baseline's (Jeffreys' estimate, its binomial variance) plus
    the candidate session's drift and less the baseline sessions' mean drift: a variance of
    p (1 - p) (1 / (n_b + 1) + rho (1 + `concentration`)), `concentration` being the sum of the
    squared shares of the baseline's repeats its sessions took (1 for one session). With that
    mean and variance as a beta distribution, the candidate's passes are beta-binomial; the
    p-value is their lower tail. At rho 0 it is the predictive check of the binomial model.
    """
    if n_c <= 0 or n_b <= 0:
        return 1.0
    mean = (k_b + 0.5) / (n_b + 1)
    size = 1 / (1 / (n_b + 1) + rho * (1 + concentration)) - 1
    return beta_binomial_cdf(k_c, n_c, mean * size, (1 - mean) * size)
