"""Progress of sampling: plain periodic lines with the figures when stderr is not a terminal,
quiet for runs that take a second, and a line even while no call returns."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

from noisefloor.report.progress import Progress


def _sample(outcome: str = "ok", attempts: int = 1) -> SimpleNamespace:
    return SimpleNamespace(outcome=SimpleNamespace(value=outcome), attempts=attempts)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_at_each_tenth_carry_the_figures() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(live=False, stream=out, clock=clock, interval=3600)
    progress.start(20)
    progress.begin()  # a call that does not return
    for i in range(19):
        progress.begin()
        clock.now += 0.5
        progress.advance(None, _sample("error:exit" if i == 1 else "ok", 3 if i == 0 else 1))
    progress.stop()
    lines = out.getvalue().splitlines()
    # a tenth is 2 samples, 1 s apart: each gets its line, and the end one with the totals
    assert len(lines) == 10
    assert lines[1] == (
        "sampling: 4/20 (20%), 1 in flight, 2 retries, 1 errors, 0:02 elapsed, ~0:08 left"
    )
    assert (
        lines[-1]
        == "sampling: 19/20 (95%), 1 in flight, 2 retries, 1 errors, 0:09 elapsed, ~0:01 left"
    )


def test_a_run_of_a_second_prints_nothing() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(live=False, stream=out, clock=clock, interval=3600)
    progress.start(10)
    for _ in range(10):
        clock.now += 0.05
        progress.begin()
        progress.advance(None, _sample())
    progress.stop()
    assert out.getvalue() == ""


def test_a_stuck_call_still_gets_a_line_every_interval() -> None:
    out = io.StringIO()
    progress = Progress(live=False, stream=out, interval=0.02)
    progress.start(5)
    progress.begin()
    time.sleep(0.15)
    progress.stop()
    lines = out.getvalue().splitlines()
    assert lines and lines[0].startswith("sampling: 0/5 (0%), 1 in flight, 0 retries, 0 errors")


def test_nothing_to_sample_shows_nothing() -> None:
    out = io.StringIO()
    for live in (True, False):
        progress = Progress(live=live, stream=out, interval=0.01)
        progress.start(0)
        time.sleep(0.03)
        progress.stop()
    assert out.getvalue() == ""


def test_a_later_look_counts_its_own_samples_and_never_shows_the_check_done_early() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(live=False, stream=out, clock=clock, interval=3600)
    progress.start(10)  # the first look
    for _ in range(10):
        clock.now += 1
        progress.begin()
        progress.advance(None, _sample())
    progress.start(30)  # cases still in doubt take a second look
    for _ in range(3):
        clock.now += 1
        progress.begin()
        progress.advance(None, _sample())
    progress.stop()
    lines = out.getvalue().splitlines()
    assert lines[-2] == "sampling: 10/10 (100%), 0 in flight, 0 retries, 0 errors, 0:10 elapsed"
    # the second look's share, and all the check took: never 13/40 read as a total to come
    assert lines[-1] == (
        "sampling, look 2: 3/30 (10%), 13 in all, 0 in flight, 0 retries, 0 errors, "
        "0:13 elapsed, ~0:27 left"
    )
