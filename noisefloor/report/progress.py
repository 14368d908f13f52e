"""A progress display for long runs, on stderr and only on a terminal (rich).

Counts samples as they land, with the outcome of the latest, so a stuck target is visible.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Progress"]


class Progress:
    """Start with the number of pending samples; advance once per sample."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None
        self._errors = 0

    def start(self, total: int) -> None:
        """Show the bar when there is anything to sample."""
        if total == 0:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("sampling"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[errors]} errors"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task("sampling", total=total, errors=0)
        self._bar.start()

    def advance(self, item: object, outcome: str) -> None:
        """One more sample landed."""
        if self._bar is None:
            return
        if outcome != "ok":
            self._errors += 1
        self._bar.update(self._task, advance=1, errors=self._errors)

    def stop(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
