"""The base of the report's models, `Side` (one scorer's numbers on one side) and `Usage`, which
a run without comparison prints too, so that a run imports this module and not the whole report.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from noisefloor.model.records import FailingExample

__all__ = ["Part", "Side", "Usage"]


class Part(BaseModel):
    """A piece of a report: unknown keys are an error, and unset keys stay absent when dumped.

    Each model is built on its first use: a run without comparison uses `Side` alone.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    def dump(self) -> dict[str, Any]:
        """JSON-able form, with exactly the keys that were set (absent stays absent)."""
        return self.model_dump(mode="json", exclude_unset=True)


class Side(Part):
    """One scorer's numbers on one side; empty when the scorer is not on that side."""

    k: int | None = None
    n: int | None = None
    rate: float | None = None
    """k/n; null when no repeat was scored."""
    target_errors: int | None = None
    infra_errors: int | None = None
    scorer_errors: int | None = None
    scorer_error: str | None = None
    """The first scorer error: `repeat N: file:line in function: what`."""
    reliable: bool | None = None
    """False when measured with several calls at once (timing scorers)."""
    details: list[str] | None = None
    example: FailingExample | None = None
    values: list[float] | None = None
    """Continuous scorers: every value, then their summary."""
    mean: float | None = None
    median: float | None = None
    min: float | None = None
    max: float | None = None
    sd: float | None = None
    wilson: list[float] | None = None
    """The Wilson 95% interval of the pass rate (rules exact and wilson)."""
    unmatched: str | None = None
    """Set when the scorer's path matched nothing in any output of this side (`path 'x'
    matched nothing`): it passes or fails whatever the answers."""

    @property
    def empty(self) -> bool:
        """The scorer is not on this side."""
        return not self.model_fields_set


class Usage(Part):
    """What the samples a command took used, as the endpoint reported it, and what that cost.

    Targets whose answers report no usage (a command) have none; cached samples cost nothing.
    """

    samples: int
    """Samples this command took."""
    unreported: int
    """Of them, those whose answer reported no usage (an error, an endpoint without `usage`):
    left out of the sums."""
    prompt_tokens: int | None
    """Prompt (input) tokens, summed; null when every sample taken left it unreported."""
    completion_tokens: int | None
    """Completion (output) tokens, summed; null likewise."""
    cost: float | None = None
    """Only with a price (`target.http.price`): the tokens at its price per million, computed
    exactly, in its currency; null when the tokens are."""
    currency: str | None = None
    """The price's `currency`, when it names one."""
