"""Progress of a run's sampling, on stderr only: a live line (rich) on a terminal; plain periodic
lines elsewhere (CI logs). Either way: samples done of total (of the current look, once a
sequential check takes another), calls in flight, retries, errors, elapsed and remaining time.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from noisefloor.targets.base import RawSample

__all__ = ["Progress"]

#: Plain mode: a line this often (seconds), also while no call returns...
INTERVAL_S = 10.0
#: ...and at each tenth of the samples, but never more often than this (seconds), so a run
#: that takes a second prints nothing.
MIN_GAP_S = 1.0


def _clock_text(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Call `start(total)`, then `begin()` as each call starts and `advance(item, sample)` as it
    returns, then `stop()`. `live` draws a rich line (a terminal); else plain lines on `stream`."""

    def __init__(
        self,
        live: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval: float = INTERVAL_S,
    ) -> None:
        self._live = live
        self._stream = stream
        self._clock = clock
        self._interval = interval
        self._bar: Any = None
        self._task: Any = None
        self.total = self.done = self.in_flight = self.retries = self.errors = 0
        self._started = self._last_line = 0.0
        self._next_step = 1
        self._looks = 1
        """The takes so far: a sequential check's later looks each start one."""
        self._look_from = 0
        """Samples done before the current look."""
        self._look_total = 0
        self._shown: int | None = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self, total: int) -> None:
        """Show progress when there is anything to sample; a later call (a sequential check's
        next look) counts its own samples, so no look shows 100% of what the check will take."""
        if self._bar is not None or self._ticker is not None:
            self.total += total
            self._looks += 1
            self._look_from, self._look_total = self.done, total
            self._next_step = 1
            if self._bar is not None:
                self._bar.update(
                    self._task,
                    total=total,
                    completed=0,
                    description=f"sampling, look {self._looks}",
                )
            return
        self.total = self._look_total = total
        self._started = self._last_line = self._clock()
        if total == 0:
            return
        if not self._live:
            # a line every interval even when no call returns: a stuck target shows
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[in_flight]} in flight"),
            TextColumn("{task.fields[retries]} retries"),
            TextColumn("{task.fields[errors]} errors"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(file=self._out()),
            transient=True,
        )
        self._task = self._bar.add_task("sampling", total=total, **self._fields())
        self._bar.start()

    def begin(self, item: object = None) -> None:
        """A call to the target started."""
        self.in_flight += 1
        if self._bar is not None:
            self._bar.update(self._task, **self._fields())

    def advance(self, item: object, sample: RawSample) -> None:
        """A call returned: `sample` is its `RawSample` (outcome and attempts)."""
        self.done += 1
        self.in_flight = max(0, self.in_flight - 1)
        self.retries += max(0, sample.attempts - 1)
        self.errors += sample.outcome.value != "ok"
        if self._bar is not None:
            self._bar.update(self._task, advance=1, **self._fields())
        elif not self._live:
            self._maybe_line()

    def stop(self) -> None:
        """Remove the live line; in plain mode, end with the totals if a line was printed."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self._stopped.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._shown is not None and self._shown != self.done:
            self._line()

    def line(self) -> str:
        """The figures, as one plain line: of the current look, once there is more than one."""
        elapsed = self._clock() - self._started
        done, total = self.done - self._look_from, self._look_total
        pct = 100 * done / total if total else 100
        left = ""
        if 0 < done < total:
            remaining = math.ceil(elapsed / self.done * (total - done))
            left = f", ~{_clock_text(remaining)} left"
        what = f"sampling: {done}/{total} ({pct:.0f}%)"
        if self._looks > 1:
            what = f"sampling, look {self._looks}: {done}/{total} ({pct:.0f}%), {self.done} in all"
        return (
            f"{what}, {self.in_flight} in flight, {self.retries} retries, "
            f"{self.errors} errors, {_clock_text(int(elapsed))} elapsed{left}"
        )

    def _fields(self) -> dict[str, int]:
        return {"in_flight": self.in_flight, "retries": self.retries, "errors": self.errors}

    def _out(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def _tick(self) -> None:
        while not self._stopped.wait(self._interval):
            if self._clock() - self._last_line >= self._interval:
                self._line()

    def _maybe_line(self) -> None:
        if not self._look_total:
            return
        step = (self.done - self._look_from) * 10 // self._look_total
        if step >= self._next_step:
            self._next_step = step + 1
            if self._clock() - self._last_line >= MIN_GAP_S:
                self._line()

    def _line(self) -> None:
        with self._lock:
            self._last_line = self._clock()
            self._shown = self.done
            out = self._out()
            out.write(self.line() + "\n")
            out.flush()
