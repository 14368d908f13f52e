"""Calling a user's scorer: what it returns read as a result, one thread at a time unless it is
thread-safe, stopped at its timeout, and its failures said with the file and line they came from.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Origin",
    "DEFAULT_TIMEOUT_S",
    "ScorerTimeout",
    "failure",
    "guarded",
    "result_of",
    "shown",
]

#: Seconds a user's scorer may take on one output, unless it says otherwise (`timeout_s`).
DEFAULT_TIMEOUT_S = 5.0

#: The noisefloor package's directory: frames under it are the harness's, left out of tracebacks.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass(frozen=True)
class Origin:
    """The plugin a user's scorer was registered from."""

    plugin: str
    """As the suite names it (a file or a module), or the entry point (`name = module`)."""
    version: str | None = None
    """The version of the installed package it comes from, if any: part of its identity."""


class _Stop(BaseException):
    """Raised inside a scorer that ran past its timeout: a BaseException, so that the scorer's
    own `except Exception` does not swallow it."""


class ScorerTimeout(Exception):
    """A scorer ran past its timeout and was stopped."""


class _Watchdog:
    """One thread that stops scorer calls past their deadline by raising `_Stop` in the thread
    that runs them (CPython's `PyThreadState_SetAsyncExc`: it lands at the next bytecode, so a
    call blocked in C code stops when it returns to Python).

    Arming a call costs a clock read and two stores: the thread looks at the armed calls every
    `LOOK_S` while calls come, and waits for the next call after a quiet look. (Waking it for
    every call, through its event, cost 35 us of lock handoffs per call.)
    """

    #: Seconds between two looks while calls come: how late past its timeout a call may stop.
    LOOK_S = 0.05

    def __init__(self) -> None:
        self._armed: dict[int, tuple[int, float]] = {}  # thread -> (call, deadline)
        self._calls = itertools.count()
        self._latest = -1
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._started = False

    def arm(self, timeout_s: float) -> int:
        call = next(self._calls)
        self._armed[threading.get_ident()] = (call, time.monotonic() + timeout_s)
        self._latest = call
        if not self._wake.is_set():
            self._start()
            self._wake.set()
        return call

    def disarm(self, call: int) -> bool:
        """Whether the call was stopped; a stop not yet delivered is withdrawn."""
        ident = threading.get_ident()
        with self._lock:
            armed = self._armed.pop(ident, None)
        if armed is not None and armed[0] == call:
            return False
        _raise_in(ident, None)
        return True

    def _start(self) -> None:
        with self._lock:
            if not self._started:
                self._started = True
                threading.Thread(
                    target=self._run, name="noisefloor-scorer-watchdog", daemon=True
                ).start()

    def _run(self) -> None:
        seen = -1
        while True:
            self._wake.wait()
            with self._lock:
                now = time.monotonic()
                for ident, (_, deadline) in list(self._armed.items()):
                    if deadline <= now:
                        del self._armed[ident]
                        _raise_in(ident, _Stop)
                soonest = min((d for _, d in self._armed.values()), default=now + self.LOOK_S)
                quiet = not self._armed and self._latest == seen
                seen = self._latest
                if quiet:
                    self._wake.clear()
                    # a call armed since the look saw the event still set: look again
                    if self._armed or self._latest != seen:
                        self._wake.set()
            if not quiet:
                time.sleep(min(max(soonest - time.monotonic(), 0.001), self.LOOK_S))


def _raise_in(ident: int, exc: type[BaseException] | None) -> None:
    import ctypes  # only when a call is stopped: 1.5 ms of imports every run would pay

    target = ctypes.py_object(exc) if exc is not None else None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), target)


_WATCHDOG = _Watchdog()

_Call = Callable[[Any, Any], Any]


def guarded(fn: _Call, timeout_s: float | None, lock: threading.Lock | None) -> _Call:
    """`fn(inp, params)` stopped after `timeout_s` (None: never), holding `lock` (the scorer's
    own, shared by all its params; None: thread-safe).

    Raises (from the call):
        ScorerTimeout: the call ran past `timeout_s`.
    """
    if timeout_s is None:
        if lock is None:
            return fn

        def locked(inp: Any, params: Any) -> Any:
            with lock:
                return fn(inp, params)

        return locked

    limit = timeout_s

    def call(inp: Any, params: Any) -> Any:
        armed = _WATCHDOG.arm(limit)
        try:
            result = fn(inp, params)
        except _Stop as stop:
            _WATCHDOG.disarm(armed)
            # with the stopped call's frames: the error names the line it was stuck on
            raise ScorerTimeout(_stopped(limit)).with_traceback(stop.__traceback__) from None
        except BaseException:
            _WATCHDOG.disarm(armed)
            raise
        if _WATCHDOG.disarm(armed):
            raise ScorerTimeout(_stopped(limit))
        return result

    if lock is None:
        return call
    one_at_a_time = lock

    def serialized(inp: Any, params: Any) -> Any:
        with one_at_a_time:
            return call(inp, params)

    return serialized


def _stopped(timeout_s: float) -> str:
    return (
        f"stopped after its timeout_s={timeout_s:g}s on one output: fix the slow path, or give "
        "it more with @noisefloor.scorer(..., timeout_s=SECONDS)"
    )


def result_of(returned: object, name: str, continuous: bool) -> tuple[float | None, bool, str]:
    """A bool (binary scorers) or a finite number (continuous ones) as value, passed, detail.

    Raises:
        TypeError: anything else, saying what the scorer of that kind should return.
    """
    if isinstance(returned, bool):
        if not continuous:
            return float(returned), returned, f"returned {returned}"
    elif isinstance(returned, int | float) and continuous:
        value = float(returned)
        if math.isfinite(value):
            return value, True, f"{value:g}"
        raise TypeError(f"scorer {name!r} returned {value}: a continuous value must be finite")
    shape = "a number or a ScoreResult" if continuous else "a bool or a ScoreResult"
    hint = (
        ""
        if continuous or not isinstance(returned, int | float)
        else " (a number is for a continuous scorer: declare direction= in @noisefloor.scorer)"
    )
    raise TypeError(
        f"scorer {name!r} returned {type(returned).__name__} {returned!r:.60}, not {shape}{hint}"
    )


def failure(exc: BaseException, defined_at: str) -> tuple[str, str]:
    """Where a scorer failed and the traceback, without the harness's own frames: the detail
    names the last frame of the user's code (`file:line in function`, else `defined_at`, where
    the scorer is defined) and the exception."""
    import importlib
    import traceback  # only when a scorer failed

    machinery = os.path.dirname(os.path.abspath(importlib.__file__)) + os.sep
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<frozen ")  # the import machinery, frozen or not
        and not os.path.abspath(f.filename).startswith((_PACKAGE, machinery))
    ]
    what = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError) and exc.filename:  # the file has no frame: it never ran
        what = f"{type(exc).__name__}: {exc.msg}"
        full = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
        return f"{shown(exc.filename)}:{exc.lineno}: {what}", full
    if not frames:
        return f"{defined_at}: {what}", what
    last = frames[-1]
    where = shown(last.filename)
    lines = traceback.format_list(frames)
    full = "Traceback (most recent call last):\n" + "".join(lines) + what
    return f"{where}:{last.lineno} in {last.name}: {what}", full


def shown(filename: str) -> str:
    """A file as a person finds it: relative to the working directory when it lies under it."""
    path = os.path.abspath(filename)
    here = os.getcwd() + os.sep
    return path[len(here) :] if path.startswith(here) else path
