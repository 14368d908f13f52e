"""A check's design: a fixed number of candidate repeats or sequential looks, what the whole
check may spend, and how deep a baseline it compares against.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from noisefloor.settings import (
    BASELINE_REPEATS,
    FUTILITY,
    LOOKS,
    MAX_REPEATS,
    SPENDING_RHO,
    RuleName,
    RuleSettings,
)

__all__ = ["Design", "Fixed", "Sequential"]


@dataclass(frozen=True)
class Fixed:
    """`--repeats N`: every case takes N candidate repeats at once, judged at one look."""

    repeats: int


@dataclass(frozen=True)
class Sequential:
    """Without `--repeats`: each case looks first at its own repeats (the suite's), then at the
    design's looks and its cap, and stops once a look decides it."""


@dataclass(frozen=True)
class Design:
    """How a check samples its candidate, and how much it may take."""

    candidate: Fixed | Sequential = Sequential()
    """A fixed number of repeats per case, or sequential looks."""
    max_repeats: int = MAX_REPEATS
    """Candidate repeats per case at most: the last look."""
    max_calls: int | None = None
    """Samples the whole check may take; None: no limit."""
    max_cost: Decimal | None = None
    """What the whole check's samples may cost at the suite's price (`cost_budget`); None: no
    limit."""
    baseline_repeats: int = BASELINE_REPEATS
    """Repeats per case of the deep baseline a check compares against, at most."""
    baseline_max_age_s: float | None = None
    """Baseline samples older than this many seconds are left out; None: any age."""
    looks: tuple[int, ...] = LOOKS
    """Candidate repeats of the looks between the first (the suite's repeats) and the cap."""
    futility: tuple[float, ...] = FUTILITY
    """The futility bound after each look but the last (the last value serves later looks)."""
    rho: float = SPENDING_RHO
    """The exponent of the alpha-spending function."""

    @property
    def fixed_repeats(self) -> int | None:
        """The repeats every case takes under a fixed design; None: each case's own first."""
        return self.candidate.repeats if isinstance(self.candidate, Fixed) else None

    def applies(self, settings: RuleSettings, screens: list[int]) -> bool:
        """Whether a check samples sequentially: not under a fixed design, only under rule
        exact, and only when the cap leaves a case room for a second look."""
        return (
            isinstance(self.candidate, Sequential)
            and settings.rule is RuleName.EXACT
            and any(n < self.max_repeats for n in screens)
        )

    def schedule(self, first: int) -> list[int]:
        """The candidate repeats of every look: `first`, the design's looks past it, the cap."""
        middle = [n for n in self.looks if first < n < self.max_repeats]
        return [first, *middle, *([self.max_repeats] if self.max_repeats > first else [])]

    def look(self, settings: RuleSettings, share: float) -> RuleSettings:
        """The settings of one look: its share of alpha."""
        return replace(settings, alpha=settings.alpha * share)

    def futility_at(self, look: int, looks: int) -> float | None:
        """The futility bound after look `look` of `looks`; None after the last."""
        if look >= looks - 1:
            return None
        return self.futility[min(look, len(self.futility) - 1)]
