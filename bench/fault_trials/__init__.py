"""Fault trials shared by `bench/faults.py` (full counts) and the test suite (CI-sized counts):
one module per kind of fault, each counting what a trial cost in one `Tally`."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Tally", "cli_run", "has_traceback"]


@dataclass
class Tally:
    """What the trials of one kind of fault cost; every count but `trials` should stay 0."""

    name: str
    trials: int = 0
    failures: int = 0
    lost: int = 0
    twice: int = 0
    tracebacks: int = 0
    torn: int = 0
    notes: list[str] = field(default_factory=list)
    #: figures a kind measures besides the counts (peak memory, times), printed under the table
    figures: dict[str, str] = field(default_factory=dict)

    def fail(self, note: str) -> None:
        """Count one failed trial and keep the first few reasons, to show where it went wrong."""
        self.failures += 1
        if len(self.notes) < 5:
            self.notes.append(note)

    @property
    def clean(self) -> bool:
        return not (self.failures or self.lost or self.twice or self.tracebacks or self.torn)

    def row(self) -> str:
        """One row of the table `bench/faults.py` prints."""
        return (
            f"| {self.name} | {self.trials} | {self.failures} | {self.lost} | {self.twice} "
            f"| {self.tracebacks} | {self.torn} |"
        )


HEADER = (
    "| fault | trials | failures | samples lost | samples taken twice | tracebacks "
    "| torn pointers |\n|---|---|---|---|---|---|---|"
)


def has_traceback(text: str) -> bool:
    """Whether a process's output holds a Python traceback (a crash, never a handled error)."""
    return "Traceback (most recent call last)" in text


def cli_run(
    *args: str | Path, root: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh process on the store `root`."""
    return subprocess.run(
        [sys.executable, "-m", "noisefloor", "--root", str(root), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
