"""The words for what a command's calls used and cost, shared by every renderer: the same
figures in the terminal, markdown, HTML and JUnit, and never a zero the endpoint did not say.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from noisefloor.model.report import Usage

__all__ = ["amount", "usage_text"]


def amount(value: float, currency: str | None = None) -> str:
    """A cost as written, without an exponent (`0.0000275`), then its currency when named."""
    # repr is the shortest text that reads back as the same float: the exact cost's digits
    text = f"{Decimal(repr(value)).normalize():f}"
    return f"{text} {currency}" if currency else text


def usage_text(usage: Usage) -> str:
    """`1200 prompt + 80 completion tokens, cost 0.00042 EUR`, and how many samples reported no
    usage; `token usage unknown` when none did."""
    if usage.prompt_tokens is None or usage.completion_tokens is None:
        return f"token usage unknown (none of the {usage.samples} samples taken reported it)"
    text = f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens"
    if usage.cost is not None:
        text += f", cost {amount(usage.cost, usage.currency)}"
    if usage.unreported:
        text += f" ({usage.unreported} of {usage.samples} samples reported no usage: not counted)"
    return text
