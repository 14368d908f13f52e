"""A Dask worker's side of a run: build the target from its source once per run, refuse tasks
when it computes another version than the client, and make one call per task.

Runs in the worker's process; it returns plain data and never touches the store.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from typing import Any

from noisefloor.errors import NoisefloorError
from noisefloor.targets.base import CaseInput, Target
from noisefloor.targets.source import TargetSource

__all__ = ["sample_on_worker"]

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
#: The targets of the current run, by (run, suite file, version); a refusal is kept as its text.
_built: dict[tuple[str, str, str], Target | str] = {}


def _event_loop() -> asyncio.AbstractEventLoop:
    """The worker's own event loop, in a thread of its own: a target's connection pool lives
    on one loop, and Dask runs each task on a thread of its pool."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
        thread = threading.Thread(target=_loop.run_forever, name="noisefloor-loop", daemon=True)
        thread.start()
    return _loop


def _where() -> str:
    try:
        from distributed import get_worker

        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
        return f"worker pid {os.getpid()} on {socket.gethostname()}"


def _target(source: TargetSource, run: str) -> Target | str:
    """The run's target built from `source`, or why this worker refuses to take its samples."""
    key = (run, source.suite_path, source.key)
    with _lock:
        if key not in _built:
            loop = _event_loop()
            for old, target in list(_built.items()):
                if old[0] != run:  # an earlier run's: release its connections
                    del _built[old]
                    if not isinstance(target, str):
                        asyncio.run_coroutine_threadsafe(target.aclose(), loop).result()
            try:
                _built[key] = source.build(_where()).target
            except NoisefloorError as exc:
                _built[key] = exc.format_message()
        return _built[key]


def sample_on_worker(
    source: TargetSource, run: str, case_id: str, text: str, repeat: int, concurrency: int
) -> dict[str, Any]:
    """One call of the target: `{"sample": RawSample as JSON}`, or `{"refused": why}` when this
    worker cannot build the client's target version."""
    target = _target(source, run)
    if isinstance(target, str):
        return {"refused": target}
    call = target.sample(CaseInput(case_id=case_id, input=text), repeat, concurrency)
    sample = asyncio.run_coroutine_threadsafe(call, _event_loop()).result()
    return {"sample": sample.model_dump(mode="json")}
