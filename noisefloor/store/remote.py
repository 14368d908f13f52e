"""A remote store a team shares, behind one small interface: objects read by key, immutable ones
written only if absent, pointers moved only from the version read.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass

from noisefloor.errors import RemoteError

__all__ = ["Fetched", "Moved", "Remote"]


@dataclass(frozen=True)
class Fetched:
    """An object read from a remote, with the version a conditional write names."""

    data: bytes
    version: str


class Moved(Exception):  # noqa: N818 (a condition a caller handles, not a fault)
    """A conditional write found its object at another version than the one it named."""


class Remote(ABC):
    """The shared copy of a store: every key is a path relative to a store root.

    Counts its requests by kind ("get", "put"), for the bench and the tests.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.requests: Counter[str] = Counter()
        self._counting = threading.Lock()

    def counted(self, kind: str) -> None:
        """Count one request of `kind` (requests run on several threads)."""
        with self._counting:
            self.requests[kind] += 1

    @abstractmethod
    def get(self, key: str) -> Fetched | None:
        """The object at `key`, or None when there is none.

        Raises:
            RemoteError: The remote could not be read (its URL and the cause in the message).
        """

    @abstractmethod
    def put_new(self, key: str, data: bytes) -> bool:
        """Write `data` at `key` only if no object is there; False when one already was.

        Raises:
            RemoteError: The remote refused the write or could not be reached.
        """

    @abstractmethod
    def put_over(self, key: str, data: bytes, version: str | None) -> str:
        """Write `data` at `key` only while the object there is at `version` (None: absent);
        the version written.

        Raises:
            Moved: Another writer moved the object first.
            RemoteError: The remote refused the write or could not be reached.
        """

    @abstractmethod
    def put_any(self, key: str, data: bytes) -> str:
        """Write `data` at `key` whatever is there (a server that ignores conditional writes,
        in single-writer mode, and the probe's scratch object); the version written.

        Raises:
            RemoteError: The remote refused the write or could not be reached.
        """

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove the object at `key`, if any (the probe's scratch object only).

        Raises:
            RemoteError: The remote refused or could not be reached.
        """

    @property
    def server(self) -> str:
        """What serves this remote (an endpoint, or the cloud's own), so that a probe of its
        conditional writes is cached per remote and server."""
        return self.url

    @abstractmethod
    def keys(self, prefix: str) -> list[str]:
        """Every key under `prefix`, sorted: for `store pull --all` only, never on a command's
        path (a listing costs a request per thousand keys and sees no order).

        Raises:
            RemoteError: The remote could not be listed.
        """

    def failed(self, key: str, cause: str) -> RemoteError:
        """The error of a request on `key` that failed for `cause`, naming the URL."""
        return RemoteError(
            f"remote {self.url}: {cause} (object {key})",
            hint="check the URL (--remote, NOISEFLOOR_REMOTE or the suite's defaults.remote), "
            "the network and the credentials; --offline checks from the local copy alone, "
            "and every sample taken so far is kept there",
        )
