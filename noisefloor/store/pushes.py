"""Samples pushed to a remote from a small pool of threads, so that a take's writer never waits
on a round trip: any order will do, since every object is immutable and written only if absent.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

from noisefloor.store.remote import Remote

__all__ = ["Pushes"]


class Pushes:
    """Objects put in a remote if absent, `connections` at a time, in the background, until
    `close`.

    At most twice `connections` are queued or in flight: a writer faster than the remote waits
    for room. The first failure is raised by every later `put` and by `settle`. One connection
    pushes in the caller's thread, each object before `put` returns.
    """

    def __init__(self, remote: Remote, connections: int) -> None:
        self._remote = remote
        self._pool = (
            ThreadPoolExecutor(connections, thread_name_prefix="noisefloor-push")
            if connections > 1
            else None
        )
        self._room = threading.Semaphore(2 * connections)
        self._flying: set[Future[bool]] = set()
        self._guard = threading.Lock()
        self._error: BaseException | None = None

    def put(self, key: str, data: bytes) -> None:
        """Push `data` at `key` if the remote lacks it, in the background.

        Raises:
            RemoteError: An earlier push failed (the remote refused it or could not be reached).
        """
        self._raise()
        if self._pool is None:
            self._remote.put_new(key, data)
            return
        self._room.acquire()
        future = self._pool.submit(self._remote.put_new, key, data)
        with self._guard:
            self._flying.add(future)
        future.add_done_callback(self._landed)

    def _landed(self, future: Future[bool]) -> None:
        queued: list[Future[bool]] = []
        with self._guard:
            self._flying.discard(future)
            failed = not future.cancelled() and future.exception() is not None
            if failed and self._error is None:
                self._error = future.exception()
                queued = list(self._flying)
        self._room.release()
        # the remote is failing: those not started yet are not tried (each would wait out its
        # own timeouts, and the command stops anyway); a cancel calls back here
        for waiting in queued:
            waiting.cancel()

    def settle(self) -> None:
        """Wait for every push queued or in flight.

        Raises:
            RemoteError: A push failed.
        """
        with self._guard:
            flying = list(self._flying)
        wait(flying)
        self._raise()

    def close(self) -> None:
        """Wait for every push (`settle`), then stop the pool's threads.

        Raises:
            RemoteError: A push failed.
        """
        try:
            self.settle()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)

    def _raise(self) -> None:
        with self._guard:
            error = self._error
        if error is not None:
            raise error
