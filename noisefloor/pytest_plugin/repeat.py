"""One repeat of a collected test in this process, its function-scoped fixtures made afresh and
stopped past `timeout_s`; what pytest reported kept as the repeat's sample.

An assertion failure (or `pytest.fail`) is a failed repeat; any other exception, in any phase, a
target error; a fixture used wrongly stops the test's sampling at that repeat.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from _pytest._io import TerminalWriter
from _pytest.runner import runtestprotocol

from noisefloor.pytest_plugin.fixtures import MISUSED, REPEAT, SCORES
from noisefloor.targets.base import Outcome, RawSample, decode_stream
from noisefloor.targets.command import utc_now_iso

__all__ = ["RAISED", "RepeatMisuse", "RepeatSkipped", "RepeatTimeout", "take_repeat"]

#: What each phase of the repeat in flight raised, by phase: the makereport hook notes it.
RAISED = pytest.StashKey[dict[str, BaseException]]()


class RepeatTimeout(BaseException):
    """Raised in the test by the alarm past its `timeout_s`: a BaseException, so that the test's
    own `except Exception` does not swallow it."""


class RepeatMisuse(Exception):
    """A repeat met a fixture used wrongly (`FixtureMisuse`): the test is not sampled further,
    and the repeat is not stored."""

    def __init__(self, message: str, repeat: int) -> None:
        super().__init__(message)
        self.repeat = repeat


class RepeatSkipped(Exception):
    """A repeat skipped (`pytest.skip`, a `skipif` that holds): the test is not sampled here."""

    def __init__(self, report: pytest.TestReport) -> None:
        super().__init__(report.longreprtext)
        self.report = report


@contextlib.contextmanager
def _deadline(timeout_s: float) -> Iterator[None]:
    """An alarm raising `RepeatTimeout` in this thread after `timeout_s` (SIGALRM, as
    pytest-timeout's signal method): only the main thread receives signals, so a session run
    elsewhere (or on a platform without SIGALRM) takes its repeats without a deadline."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        # hidden from pytest's traceback: its frame argument's repr holds an address, which
        # would make every stored timeout a text of its own
        __tracebackhide__ = True
        raise RepeatTimeout(f"the repeat ran past timeout_s={timeout_s:g} and was stopped")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        # (None: a handler not set from Python, which Python cannot set back: the default)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


def _protocol(item: pytest.Item, timeout_s: float) -> list[pytest.TestReport]:
    """Setup, call and teardown of `item`, unlogged: the teardown stops at its parent, so its
    function-scoped fixtures end with the repeat and wider ones stay for the next."""
    try:
        with _deadline(timeout_s):
            # `nextitem` is only asked for the chain of nodes to keep: the parent's
            return runtestprotocol(item, log=False, nextitem=item.parent)  # type: ignore[arg-type]
    except RepeatTimeout:
        # the alarm fell between the phases pytest guards: what the test had set up goes
        item.session._setupstate.teardown_exact(item.parent)  # type: ignore[arg-type]
        raise


def _failure(report: pytest.TestReport, rootdir: str) -> str:
    """The crash line of a failed phase (`AssertionError: assert 3 == 4`, and where: relative to
    the rootdir, so that a checkout elsewhere stores the same text)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None:
        return report.longreprtext.strip().splitlines()[-1] if report.longreprtext else "failed"
    path = crash.path
    if os.path.isabs(path) and path.startswith(rootdir + os.sep):
        path = os.path.relpath(path, rootdir)
    return f"{crash.message} ({path}:{crash.lineno})"


def _printed(report: pytest.TestReport) -> str:
    """What pytest prints for a failed phase, verbatim (`longreprtext` strips the indentation
    of its first line)."""
    out = io.StringIO()
    writer = TerminalWriter(out)
    writer.hasmarkup = False
    report.toterminal(writer)
    return out.getvalue().strip("\n")


def _is_assertion(raised: BaseException | None) -> bool:
    """A failed repeat rather than an error: an assertion, or `pytest.fail`."""
    return isinstance(raised, AssertionError | pytest.fail.Exception)


def take_repeat(item: pytest.Item, case_id: str, repeat: int, timeout_s: float) -> RawSample:
    """Take repeat `repeat` of `item`, the case `case_id`.

    Returns:
        The sample: `ok` with `passed` true or false in its JSON output (an assertion failed), or
        a target error (`error:exit`: the test raised anything else, in any phase;
        `error:timeout`: it ran past `timeout_s`), its output then holding what pytest reported.

    Raises:
        RepeatSkipped: The repeat skipped.
        RepeatMisuse: The repeat used a fixture wrongly.
    """
    item.stash[REPEAT] = repeat
    scores: dict[str, float] = {}
    raised: dict[str, BaseException] = {}
    misused: list[str] = []
    item.stash[SCORES], item.stash[RAISED], item.stash[MISUSED] = scores, raised, misused
    started_at = utc_now_iso()
    started = time.perf_counter()
    try:
        reports = _protocol(item, timeout_s)
    except RepeatTimeout as exc:
        reports, raised["call"] = [], exc
    finally:
        wall_s = time.perf_counter() - started
        # pytest keeps every phase's captured output on the item: a report carries them all,
        # so each repeat starts from none (else a thousand repeats report a quadratic pile)
        item._report_sections.clear()
        del item.stash[REPEAT], item.stash[SCORES], item.stash[RAISED], item.stash[MISUSED]
    if misused:  # (noted even where the test caught the fixture's exception)
        raise RepeatMisuse(misused[0], repeat)
    skipped = next((r for r in reports if r.skipped), None)
    if skipped is not None:
        raise RepeatSkipped(skipped)
    failed = next((r for r in reports if r.failed), None)
    error: str | None = None
    outcome = Outcome.OK
    shown: dict[str, Any] = {"passed": failed is None, "scores": scores}
    if failed is not None:
        shown["failure"] = f"{failed.when}: {_failure(failed, str(item.config.rootpath))}"
        shown["report"] = _printed(failed)
        cause = raised.get(failed.when)
        if isinstance(cause, RepeatTimeout):
            outcome, error = Outcome.TIMEOUT, str(cause)
        elif failed.when != "call" or not _is_assertion(cause):
            outcome, error = Outcome.EXIT, shown["failure"]
    elif isinstance(raised.get("call"), RepeatTimeout):  # between phases: no report to read
        outcome, error = Outcome.TIMEOUT, str(raised["call"])
        shown["passed"], shown["failure"] = False, error
    for report in reports:
        for name, text in (("stdout", report.capstdout), ("stderr", report.capstderr)):
            if text:
                shown[name] = shown.get(name, "") + text
        if report.caplog:
            shown["log"] = shown.get("log", "") + report.caplog
    return RawSample(
        kind="pytest",
        case_id=case_id,
        repeat=repeat,
        outcome=outcome,
        error=error,
        output=decode_stream(orjson.dumps(shown, option=orjson.OPT_SORT_KEYS)),
        wall_s=wall_s,
        started_at=started_at,
    )
