"""The command kind's data: its fields of a suite's `target` (`target.command` and its settings)
and the column of the ledger its samples fill; light to import, as the ledger reads it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from noisefloor.targets.kinds import LedgerField, SpecFields

__all__ = ["LEDGER_FIELDS", "CommandFields"]

#: What a sample shows in the ledger besides the common columns (`CommandKind.ledger_columns`).
LEDGER_FIELDS = (LedgerField("prompt_sha", after="latency_ms"),)


class CommandFields(SpecFields):
    """A suite's `target` fields of a command."""

    command: list[str] | None = Field(default=None, min_length=1)
    """The argv, never run through a shell; `{{input}}`, `{{case_id}}` and `{{repeat}}` are
    filled in per argument."""
    cwd: str | None = None
    """Working directory, relative to the suite file (default: the suite file's directory)."""
    env: dict[str, str] = {}
    """Variables set on top of the inherited environment."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds before the whole process group is killed and the repeat counts as a timeout."""
    fingerprint: list[str] | None = None
    """Globs (relative to the suite file) of the files that make up the target's version."""
    output: Literal["text", "json"] = "text"
    """`json`: output that does not parse is a failed repeat (`error:parse`)."""
    max_output_bytes: int = Field(default=10_000_000, gt=0)
    """Bytes kept per stream; the rest is counted and dropped, and the sample flagged."""
