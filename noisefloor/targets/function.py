"""The function target: a plain Python function standing in for a program, in process.

An exception from the function is the program's failure (`error:exit`), not the harness's.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from noisefloor.targets.base import CaseInput, Outcome, RawSample, VersionedTarget, decode_stream
from noisefloor.targets.command import utc_now_iso
from noisefloor.targets.kinds import TargetKind

__all__ = ["KIND", "FunctionKind", "FunctionTarget", "TargetFunction"]

#: `fn(case_input, case_id, repeat) -> output text`, sync or async.
TargetFunction = Callable[[str, str, int], str | Awaitable[str]]


class FunctionTarget(VersionedTarget):
    """Calls `fn(case_input, case_id, repeat)` once per sample; its return value is the output.

    Synchronous functions run in a worker thread so that concurrent samples overlap; coroutine
    functions run on the event loop.
    """

    kind = "function"

    def __init__(
        self,
        fn: TargetFunction,
        *,
        key: str = "function",
        spec: dict[str, Any] | None = None,
    ) -> None:
        """Wrap `fn`.

        Args:
            fn: The function under test; returns the output text (str or bytes).
            key: The target's version.
            spec: The comparable spec; defaults to the function's qualified name.
        """
        self.fn = fn
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
        super().__init__(key, spec if spec is not None else {"kind": self.kind, "function": name})

    async def sample(self, case: CaseInput, repeat: int, concurrency: int) -> RawSample:
        """Call the function once.

        Args:
            case: The case whose input is passed to the function.
            repeat: The 0-based repeat index.
            concurrency: How many calls the harness allows at once (recorded).

        Returns:
            The sample; an exception from the function becomes an `error:exit` outcome.
        """
        started_at = utc_now_iso()
        started = time.perf_counter()
        try:
            if inspect.iscoroutinefunction(self.fn):
                value: Any = await self.fn(case.input, case.case_id, repeat)
            else:
                value = await asyncio.to_thread(self.fn, case.input, case.case_id, repeat)
                if inspect.isawaitable(value):
                    value = await value
            error: str | None = None
        except Exception as exc:
            value, error = None, f"{type(exc).__name__}: {exc}"
        wall_s = time.perf_counter() - started
        common: dict[str, Any] = {
            "kind": self.kind,
            "case_id": case.case_id,
            "repeat": repeat,
            "wall_s": wall_s,
            "started_at": started_at,
            "concurrency": concurrency,
        }
        if error is None and isinstance(value, str):
            return RawSample(
                **common,
                outcome=Outcome.OK,
                output=decode_stream(value.encode("utf-8", "surrogatepass")),
            )
        if error is None and isinstance(value, bytes | bytearray):
            return RawSample(**common, outcome=Outcome.OK, output=decode_stream(bytes(value)))
        if error is None:
            error = f"returned {type(value).__name__}, expected str"
        return RawSample(**common, outcome=Outcome.EXIT, error=error)

    async def aclose(self) -> None:
        """Nothing to release."""


class FunctionKind(TargetKind):
    """In-process functions: built by the code that embeds noisefloor, never named by a suite."""

    name = "function"


KIND = FunctionKind()
