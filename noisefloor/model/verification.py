"""What `store verify` found, as its operation returns it and its renderer prints it: each file
found wrong (where, its kind, what is wrong, what fixes it), and the ledger's rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Problem", "Verified"]


@dataclass
class Problem:
    """One file found wrong: where, its kind, what is wrong, and what fixes it."""

    rel: str
    kind: str
    what: str
    fix: str
    repaired: bool = False


@dataclass
class Verified:
    """What `verify_store` found: every file read, and the problems among them."""

    files: int
    problems: list[Problem]
    ledger_rebuilt: bool = False
    ledger_error: str | None = None
    """Why a repair could not rebuild the ledger (a run record it indexes is corrupt)."""

    @property
    def left(self) -> list[Problem]:
        """The problems still there (all of them, unless repaired)."""
        return [p for p in self.problems if not p.repaired]
