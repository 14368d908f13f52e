"""The repeats behind one side of a case as the HTML report lists them: how each repeat counted,
which scorers failed it, and what the target printed (read by `noisefloor.operations.repeats`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Repeat", "Shown", "SideRepeats"]


@dataclass(frozen=True)
class Shown:
    """One stream as the page shows it: its text, cut, and what was left out or altered."""

    name: str
    text: str
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Repeat:
    """One repeat of one side: pass, fail or invalid, why, and what the target printed."""

    repeat: int
    status: str
    reason: str
    failures: tuple[tuple[str, str], ...]
    """Each scorer that did not pass this repeat, with its detail."""
    outcome: str
    streams: tuple[Shown, ...]


@dataclass(frozen=True)
class SideRepeats:
    """The repeats shown of one side of a case, failing ones first, and how many it has."""

    side: str
    """"baseline" or "candidate"."""
    run_id: str
    shown: list[Repeat]
    total: int
