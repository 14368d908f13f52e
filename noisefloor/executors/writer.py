"""The one writer of a take's samples: each written atomically the moment it arrives, in arrival
order, from a thread of its own, and told to the take's hooks once it is on disk.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from noisefloor.executors.base import ArmPending, Pending, SampleHooks
from noisefloor.store.store import Store
from noisefloor.targets.base import RawSample
from noisefloor.targets.kinds import kind_named

__all__ = ["FLUSH_S", "IDLE_S", "SampleWriter"]

#: Seconds the writer waits for the next sample before it flushes the hooks that batch.
IDLE_S = 0.02
#: Seconds at most between two flushes of the hooks that batch while samples keep coming.
FLUSH_S = 0.5


class SampleWriter:
    """Writes samples in arrival order from a thread of its own, so that the event loop never
    waits on the file system: creating a file took 0.5-1 ms here in the middle of a run, as
    long as a whole request's CPU time.

    Each sample is told to `hooks.written` as soon as its file is written; the hooks that batch
    (the ledger's indexer) are flushed whenever the writer waits for the next sample, so a run
    killed halfway has all but its last moments' samples indexed.
    """

    def __init__(self, store: Store, hooks: SampleHooks) -> None:
        self._store = store
        self._hooks = hooks
        self._queue: queue.SimpleQueue[tuple[Pending, dict[str, Any]] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="noisefloor-writer", daemon=True)
        self._thread.start()

    def put(self, item: Pending, data: dict[str, Any]) -> None:
        """Queue one sample; raise the error of an earlier write, if one failed."""
        if self._error is not None:
            raise self._error
        self._queue.put((item, data))

    def add(self, arm: ArmPending, item: Pending, sample: RawSample) -> None:
        """Queue one of `arm`'s samples, redacted as the arm says."""
        data = arm.redactor.sample(sample.model_dump(mode="json"))
        if arm.redactor:
            kind_named(data["kind"]).after_redaction(data)
        self.put(item, data)

    def close(self) -> None:
        """Write everything queued (an interrupted run keeps what it finished), then stop."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _drain(self) -> None:
        batches = self._hooks.batches
        held: float | None = None  # when the hooks began to hold samples not yet flushed
        while True:
            try:
                queued = self._queue.get(timeout=IDLE_S) if held is not None else self._queue.get()
            except queue.Empty:
                self._flushed()
                held = None
                continue
            if queued is None:
                break
            if self._error is not None:
                continue
            item, data = queued
            try:
                path = item.path
                self._store.write_sample(path, data)
                self._hooks.written(item, path, data)
                if batches and held is None:
                    held = time.monotonic()
            except BaseException as exc:  # handed to the loop's thread by put/close
                self._error = exc
            if held is not None and time.monotonic() - held >= FLUSH_S:
                self._flushed()
                held = None
        self._flushed()

    def _flushed(self) -> None:
        """Flush the hooks that batch (an error stops the run as a failed write would)."""
        if self._hooks.batches and self._error is None:
            try:
                self._hooks.flush()
            except BaseException as exc:  # handed to the loop's thread by put/close
                self._error = exc
