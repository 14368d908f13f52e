"""The usage of the samples one command takes: a hook told of each sample as it is written,
summing per case what the endpoint said each answer took (`model.usage`), read once they are taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noisefloor.model.usage import Price, Tokens, envelope_tokens

if TYPE_CHECKING:
    from noisefloor.executors.base import Pending
    from noisefloor.model.parts import Usage
    from noisefloor.model.report import Report

__all__ = ["UsageTally"]


@dataclass
class _Sum:
    samples: int = 0
    unreported: int = 0
    tokens: Tokens = Tokens()
    dearest: Tokens | None = None
    """At least what any one answer took: the most tokens of each kind seen."""

    def add(self, tokens: Tokens | None) -> None:
        self.samples += 1
        if tokens is None:
            self.unreported += 1
            return
        self.tokens += tokens
        seen = self.dearest or Tokens()
        self.dearest = Tokens(
            max(seen.prompt, tokens.prompt), max(seen.completion, tokens.completion)
        )


class UsageTally:
    """The usage of every sample a command takes, per case, told of each sample as it is written
    (an `OnWritten`, called from the writer's thread; read once the samples are taken)."""

    def __init__(self) -> None:
        self._cases: dict[str, _Sum] = {}

    def __call__(self, item: Pending, path: Path, data: dict[str, Any]) -> None:
        envelope = data.get("envelope")
        tokens = envelope_tokens(envelope if isinstance(envelope, Mapping) else None)
        self._cases.setdefault(item.case.case_id, _Sum()).add(tokens)

    def spent(self, price: Price) -> Decimal:
        """What the samples taken so far cost, at `price` (those without usage count nothing)."""
        return sum((price.cost(s.tokens) for s in self._cases.values()), Decimal(0))

    def case_ids(self) -> list[str]:
        """The cases whose samples were taken."""
        return list(self._cases)

    def dearest(self, case_id: str) -> Tokens | None:
        """The most prompt and the most completion tokens an answer of `case_id` took so far."""
        found = self._cases.get(case_id)
        return found.dearest if found is not None else None

    def usage(self, price: Price | None, case_id: str | None = None) -> Usage:
        """The usage of one case's samples, or of all of them, as a report shows it."""
        from noisefloor.model.parts import Usage

        if case_id is not None:
            parts = [self._cases.get(case_id, _Sum())]
        else:
            parts = list(self._cases.values())
        total = _Sum(
            samples=sum(p.samples for p in parts),
            unreported=sum(p.unreported for p in parts),
            tokens=sum((p.tokens for p in parts), Tokens()),
        )
        # a count is a sum of what the endpoint said: unknown, never zero, when it said nothing
        known = total.samples == 0 or total.unreported < total.samples
        shown = Usage(
            samples=total.samples,
            unreported=total.unreported,
            prompt_tokens=total.tokens.prompt if known else None,
            completion_tokens=total.tokens.completion if known else None,
        )
        if price is not None:
            shown.cost = float(price.cost(total.tokens)) if known else None
            if price.currency is not None:
                shown.currency = price.currency
        return shown

    def attach(self, report: Report, price: Price | None) -> None:
        """Give `report` this usage, in all and per case."""
        report.usage = self.usage(price)
        for case in report.cases:
            case.usage = self.usage(price, case.case_id)
