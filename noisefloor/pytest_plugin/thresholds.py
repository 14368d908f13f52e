"""`min_pass_rate=`: a bar a test's pass rate must not be confidently below, judged beside the
regression check by an exact binomial test at the bar's share of the session's false-alarm rate.

A bar judged on few repeats decides little: 3 passes of 5 do not put 0.6 confidently below 0.9,
and a test at 0.6 passes 5 of 5 in 8% of sessions. So the bar looks at the repeats the check
took, then, while in doubt, at `BAR_REPEATS` and at the test's cap, its share split across
those looks as a check splits alpha across its own (`stats.spending`); it is met only at
`BAR_REPEATS` or more.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from noisefloor import stats
from noisefloor.settings import SPENDING_RHO

__all__ = ["BAR_REPEATS", "Bar", "BarVerdict", "judge_bar", "looks_of"]

#: The repeats at which a bar can be met: a test at 0.6 shows 18 or more passes of 20 (at or
#: above a bar of 0.9) in 0.4% of sessions, 5 of 5 in 8%.
BAR_REPEATS = 20


class BarVerdict(enum.Enum):
    """What a bar says of a pass rate."""

    MET = "met"
    """Not confidently below the bar, and not below it as measured: the test passes."""
    BELOW = "below"
    """Confidently below: the test fails."""
    DOUBT = "doubt"
    """Not decided: before the last look, the bar looks again; at it, the rate is below the bar
    as measured, not confidently, and more repeats would decide it."""


@dataclass(frozen=True)
class Bar:
    """A bar judged on `k` passes of `n` repeats."""

    rate: float
    """The bar, `min_pass_rate=`."""
    k: int
    n: int
    alpha: float
    """The level this look was held to."""
    verdict: BarVerdict

    @property
    def upper(self) -> float:
        """The one-sided upper confidence bound of the pass rate at this look's level."""
        return stats.binomial_upper(self.k, self.n, self.alpha)

    def line(self) -> str:
        """A bar not met and its evidence, in one line: `below min_pass_rate 90%: pass rate
        60% (12/20; at most 88% at 99.84% confidence)`."""
        confidence = f"{(1 - self.alpha) * 100:.4g}%"
        evidence = (
            f"pass rate {_percent(self.k / self.n) if self.n else 'unknown'} "
            f"({self.k}/{self.n}; at most {_percent(self.upper)} at {confidence} confidence)"
        )
        below = "below" if self.verdict is BarVerdict.BELOW else "may be below"
        return f"{below} min_pass_rate {_percent(self.rate)}: {evidence}"


def looks_of(first: int, cap: int) -> list[int]:
    """The repeats a bar is judged at: what the check took, then `BAR_REPEATS` and the cap,
    those of them that are more."""
    return [first, *sorted({n for n in (BAR_REPEATS, cap) if first < n <= max(first, cap)})]


def judge_bar(rate: float, k: int, n: int, share: float, look: int, looks: list[int]) -> Bar:
    """The bar `rate` on `k` passes of `n` repeats, at look `look` of `looks`, the bar's share
    of the session's false-alarm rate spent across them."""
    alpha = share * stats.spending(looks, SPENDING_RHO)[look]
    last = look == len(looks) - 1
    if n and stats.significant(stats.binomial_below(k, n, rate), alpha):
        verdict = BarVerdict.BELOW
    elif n and k / n >= rate and (n >= BAR_REPEATS or last):
        verdict = BarVerdict.MET
    else:
        verdict = BarVerdict.DOUBT
    return Bar(rate=rate, k=k, n=n, alpha=alpha, verdict=verdict)


def _percent(rate: float) -> str:
    return f"{rate * 100:.0f}%"
