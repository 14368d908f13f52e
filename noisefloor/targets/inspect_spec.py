"""The Inspect kind's data: its fields of a suite's `target` (`target.inspect`: a task, its
arguments and a model) and the columns of the ledger its samples fill; light to import.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from noisefloor.targets.kinds import LedgerField, SpecFields

__all__ = ["LEDGER_FIELDS", "InspectFields", "InspectSpec"]

#: What a sample shows in the ledger besides the common columns (`InspectKind.ledger_columns`).
LEDGER_FIELDS = (LedgerField("model", after="started_at"),)


class InspectSpec(SpecFields):
    """An Inspect AI task run through Inspect's own `eval()`: each case one of its samples, each
    repeat one epoch of that sample."""

    task: str = Field(min_length=1)
    """The task file, relative to the suite file, and the task's name in it: `tasks.py@name`
    (`tasks.py` alone when the file holds one task), as `inspect eval` takes it."""
    args: dict[str, Any] = {}
    """The task's arguments (`inspect eval -T`)."""
    model: str = Field(min_length=1)
    """Inspect's model string: `openai/gpt-4o-mini`, `openai-api/NAME/MODEL` for an
    OpenAI-compatible server, `mockllm/model` offline."""
    model_base_url: str | None = None
    """The model's base URL (an OpenAI-compatible server's `.../v1`)."""
    model_args: dict[str, Any] = {}
    """Arguments of the model's provider (`inspect eval -M`)."""
    generate: dict[str, Any] = {}
    """Inspect's generation settings (`GenerateConfig`: `temperature`, `max_tokens`, `seed`,
    `max_connections`, ...); part of the target's version but for the connection limits."""
    max_samples: int | None = Field(default=None, gt=0)
    """Samples Inspect runs at once (its `max_samples`; default: its own); not part of the
    version."""
    samples: list[str | int] | None = None
    """The ids of the task's samples that are the suite's cases; None: every sample."""
    fingerprint: list[str] | None = None
    """Globs (relative to the suite file) of the files that make up the task's version; default:
    the task file and the files git tracks around it. Name a dataset kept elsewhere here."""


class InspectFields(SpecFields):
    """A suite's `target` field of an Inspect AI task."""

    inspect: InspectSpec | None = None
    """An Inspect AI task and the model it runs against, instead of a command."""
