"""The base of the report's models, and `Side`: one scorer's numbers on one side, which a run
without comparison prints too, so that a run imports this module and not the whole report.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from noisefloor.records import FailingExample

__all__ = ["Part", "Side"]


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
