"""How a sequential check sampled each case, what its concurrent control took, and what the
check spent: the report's parts for the looks (`noisefloor.rules.sequential`)."""

from __future__ import annotations

from noisefloor.model.parts import Part
from noisefloor.model.records import DriftCheck
from noisefloor.model.verdict import Verdict

__all__ = ["Control", "LookSummary", "Sequential", "SequentialSummary"]


class Control(Part):
    """The concurrent control of a case its deep baseline called regressed: repeats of the
    baseline's own version taken in the check's session, interleaved with the candidate's."""

    repeats: int = 0
    """Repeats of the baseline's version the control took (0: none was taken)."""
    candidate_repeats: int = 0
    """Candidate repeats of this check judged against it: every one it took."""
    verdict: Verdict | None = None
    """The candidate against the control; the case is regressed only when this is too."""
    reason: str = ""
    """The candidate against the control in words, or why no control was taken."""
    drift: DriftCheck | None = None
    """For a case the looks left regressed: whether drift could explain its drop, which decides
    whether a control is taken at all."""


class Sequential(Part):
    """How a sequential check sampled one case, and why it stopped."""

    baseline_repeats: int
    """Baseline repeats the verdict rests on (the deep baseline's)."""
    candidate_repeats: int
    """Candidate repeats taken: every look's."""
    screen: int
    """Candidate repeats of the first look."""
    verdict_repeats: int
    """Candidate repeats the verdict rests on: every one taken, r0 up to the last."""
    looks: list[int] = []
    """Candidate repeats at each look the case took part in."""
    stopped: str = ""
    """`same` (the baseline's own version), `clear`, `decided`, `cap`, `budget` or
    `unmeasured` (no candidate repeat reached the target)."""
    why: str = ""
    """Why it stopped, in words: the test that decided, or the futility bound it passed."""
    control: Control | None = None
    """For a case the deep baseline called regressed: its concurrent control."""


class LookSummary(Part):
    """One look of a sequential check."""

    repeats: int
    """Candidate repeats per case at this look (at least; a case may have started higher)."""
    alpha: float
    """The share of alpha this look spends, corrected across every case of the suite."""
    threshold: float | None = None
    """The per-case level of a pass-rate drop at this look (alpha / Tarone's K)."""
    futility: float | None = None
    """A case whose smallest p of a worsening exceeds this stops after the look."""
    cases: int
    """Cases still running at this look."""


class SequentialSummary(Part):
    """A sequential check's design and what it spent."""

    looks: list[LookSummary]
    """The looks taken, in order."""
    max_repeats: int
    max_calls: int | None
    max_cost: float | None = None
    """`--max-cost`: what the samples of the check may cost at the suite's price, at most."""
    baseline_repeats: int
    """The deep baseline's repeats per case (the median over cases)."""
    design_baseline_repeats: int
    """The depth the design counts on (--baseline-repeats)."""
    screened: int
    budget_stopped: int
    calls: int
    """Samples this check took (cached ones cost nothing)."""
    stops: dict[str, int] = {}
    """Cases per reason they stopped."""
    reference: str | None = None
    """The change the comparison with a fixed design is made for, e.g. `1.0 -> 0.6`."""
    power: float | None = None
    """This design's chance to flag `reference` in one case, at this check's thresholds."""
    deeper_power: float | None = None
    """The same at the design's baseline depth, when the baseline holds fewer repeats."""
    fixed_repeats: int | None = None
    """Repeats per case a fixed design needs for the same power."""
    fixed_calls: int | None = None
    """What that fixed design would have cost this check."""
