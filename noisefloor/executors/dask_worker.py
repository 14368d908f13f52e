"""A Dask worker's side of a run: build the target from its source once per run, refuse tasks
when it computes another version than the client, and make one call per task.

Runs in the worker's process; it returns plain data and never touches the store.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections import OrderedDict
from typing import Any

from noisefloor.errors import NoisefloorError
from noisefloor.targets.base import CaseInput, Target
from noisefloor.targets.source import TargetSource

__all__ = ["sample_on_worker"]

_lock = threading.Lock()
_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
#: The targets of recent runs, by (run, suite file, version), the newest last; a refusal is kept
#: as its text. Several clients may share a cluster, so a target is released only once this
#: many newer ones were built.
_built: OrderedDict[tuple[str, str, str], Target | str] = OrderedDict()
KEPT = 16


def _event_loop() -> asyncio.AbstractEventLoop:
    """The worker's own event loop, in a thread of its own: a target's connection pool lives
    on one loop, and Dask runs each task on a thread of its pool."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            run = threading.Thread(target=_loop.run_forever, name="noisefloor-loop", daemon=True)
            run.start()
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
            try:
                _built[key] = source.build(_where()).target
            except NoisefloorError as exc:
                _built[key] = exc.format_message()
            while len(_built) > KEPT:
                _, old = _built.popitem(last=False)
                if not isinstance(old, str):  # release its connections
                    asyncio.run_coroutine_threadsafe(old.aclose(), _event_loop()).result()
        _built.move_to_end(key)
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
