"""The HTTP kind's data: its fields of a suite's `target` (`target.http`) and the columns of the
ledger its samples fill; light to import, so that the ledger knows them without the kind.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from noisefloor.model.usage import Price
from noisefloor.targets.kinds import LedgerField, SpecFields

__all__ = ["LEDGER_FIELDS", "HttpFields", "HttpSpec"]

#: What of its envelope a sample shows in the ledger (`HttpKind.ledger_columns`).
LEDGER_FIELDS = (
    LedgerField("model", after="started_at"),
    LedgerField("served_model", after="model"),
    LedgerField("base_host", after="served_model"),
    LedgerField("harness_version", after="base_host"),
    LedgerField("finish_reason", after="latency_ms"),
    LedgerField("prompt_sha", after="finish_reason"),
    LedgerField("request_sha", after="prompt_sha"),
    LedgerField("raw_json", after="stderr_text"),
)


class HttpSpec(SpecFields):
    """An OpenAI-compatible chat-completions endpoint."""

    base_url: str
    """E.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is appended."""
    model: str
    api_key_env: str | None = None
    """Name of the environment variable holding the key; the key itself is never stored."""
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    system: str | None = None
    """A system message sent before the user message."""
    messages: list[dict[str, Any]] | None = None
    """Message template; default: one user message with `{{input}}`."""
    response_format: dict[str, Any] | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds one attempt may take, from connecting to the last byte of the answer."""
    max_response_bytes: int = Field(default=10_000_000, gt=0)
    """Bytes of an answer read at most; a longer one is an infrastructure error, never held."""
    extra_body: dict[str, Any] = {}
    """Further request fields, sent as they are."""
    max_retries: int = Field(default=5, ge=0)
    """Retries of one call on infrastructure errors (connection, timeout, 408/409/429/5xx)."""
    retry_budget: int | None = Field(default=None, ge=0)
    """Retries allowed across the whole run (default: as many as there are calls)."""
    accept_finish: list[str] = Field(default=["stop"], min_length=1)
    """Finish reasons that pass the answer on to the scorers (e.g. add `tool_calls` for an agent);
    any other is a failed repeat `finish:<reason>`. A null or absent one is always accepted."""
    price: Price | None = None
    """What the endpoint charges per million tokens: reports then give the cost of the calls
    they made, and `check --max-cost` is a budget. Not part of the target's version."""


class HttpFields(SpecFields):
    """A suite's `target` field of an endpoint."""

    http: HttpSpec | None = None
    """An OpenAI-compatible chat-completions endpoint instead of a command."""
