"""What `noisefloor show` prints of a run: each repeat's outcome, timing and streams as the target
printed them, and its scorers' errors with their tracebacks (read by `operations/show.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CaseOutputs", "RepeatOutput", "RunOutputs", "ScorerError", "StreamOutput"]


@dataclass(frozen=True)
class StreamOutput:
    """One stream of a repeat, whole, and what is true of its bytes."""

    name: str
    """The kind's name of its output (`output`, `completion`, ...), or `stderr`."""
    text: str
    not_utf8: bool
    """The bytes were not valid UTF-8; the sample file keeps them exactly."""
    truncated: bool
    size: int
    """Bytes the target produced."""


@dataclass(frozen=True)
class ScorerError:
    """A scorer that raised on a repeat: its label, the detail and the traceback it left."""

    label: str
    detail: str
    traceback: str | None


@dataclass(frozen=True)
class RepeatOutput:
    """One repeat: None in `outcome` when its sample is missing (the run stopped before it)."""

    repeat: int
    outcome: str | None
    wall_s: float = 0.0
    cpu_s: float | None = None
    exit_code: int | None = None
    error: str | None = None
    streams: tuple[StreamOutput, ...] = ()
    scorer_errors: tuple[ScorerError, ...] = ()


@dataclass(frozen=True)
class CaseOutputs:
    """One case of the run: its input and every repeat it rests on."""

    case_id: str
    input: str
    repeats: tuple[RepeatOutput, ...]


@dataclass(frozen=True)
class RunOutputs:
    """The run shown: what identifies it, and its cases (all, or the one asked for)."""

    run_id: str
    suite: str
    kind: str
    target_key: str
    epoch: int
    calls: int
    cases: tuple[CaseOutputs, ...]
