"""Token usage and its price: what an endpoint said each answer took (the OpenAI `usage` object
its envelope keeps), and the cost of a number of tokens at the suite's price.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MILLION", "Price", "Tokens", "envelope_tokens"]

#: Prices are per million tokens, as providers quote them.
MILLION = Decimal(1_000_000)

Amount = Annotated[Decimal, Field(ge=0, allow_inf_nan=False)]


class Price(BaseModel):
    """What the endpoint charges, per million tokens, in the currency you pay it in."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    input_per_million: Amount
    """Price of a million prompt (input) tokens, e.g. `0.15`; kept exact, as written."""
    output_per_million: Amount
    """Price of a million completion (output) tokens, e.g. `0.60`."""
    currency: str | None = Field(default=None, min_length=1, max_length=12)
    """A name for the currency the prices are in (e.g. `EUR`), printed after each cost; reports
    print costs without one when it is not given, never a currency of their own."""

    def cost(self, tokens: Tokens) -> Decimal:
        """The exact price of `tokens`."""
        spent = tokens.prompt * self.input_per_million + tokens.completion * self.output_per_million
        return spent / MILLION


@dataclass(frozen=True)
class Tokens:
    """Prompt and completion tokens of one answer, or a sum of them."""

    prompt: int = 0
    completion: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.prompt + other.prompt, self.completion + other.completion)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def envelope_tokens(envelope: Mapping[str, Any] | None) -> Tokens | None:
    """The tokens a sample's envelope says its answer took; None when it says nothing usable (a
    command's sample, an error, an endpoint that sends no `usage` or odd counts in it)."""
    usage = envelope.get("usage") if envelope is not None else None
    if not isinstance(usage, Mapping):
        return None
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    return Tokens(prompt, completion)
