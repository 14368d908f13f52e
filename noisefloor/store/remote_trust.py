"""A remote written to only once its server has shown it honours conditional writes (probed on a
scratch key, once per remote and server), else refused, or written in the single-writer mode.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
import uuid
from pathlib import Path

import orjson

from noisefloor.errors import RemoteError
from noisefloor.store.layout import utc_now
from noisefloor.store.remote import Fetched, Moved, Remote

__all__ = ["KNOWN_GOOD", "SINGLE_WRITER", "Trusted", "probe"]

#: The mode for a server that ignores conditional writes (NOISEFLOOR_REMOTE_WRITES).
SINGLE_WRITER = "single-writer"
#: Servers that honour If-None-Match and If-Match on a put (GCS: its generation).
KNOWN_GOOD = (
    "AWS S3, Google Cloud Storage, Azure Blob Storage, MinIO, Cloudflare R2; "
    "tested here: moto's server and Azurite"
)
#: Seconds a single-writer move waits before reading its write back: a rival that read the
#: pointer before this write landed has written by then (its read-to-write must take less than
#: half of it, or the move fails), so at most one of two racing moves reads its own back.
SETTLE_S = 2.0


def probe(remote: Remote) -> list[str]:
    """What the remote's server lacks of conditional writes, tried on a scratch key (removed
    after): a second put-if-absent must fail, and so must a put from a stale version. A write
    retried after its answer was lost meets itself, which is read back, not taken for a
    refusal."""
    key = f"probes/{uuid.uuid4().hex}.json"
    lacks = []
    try:
        _landed(remote, key, b'{"probe": 1}', None)
        if remote.put_new(key, b'{"probe": 2}'):
            lacks.append("a put only if absent (If-None-Match: *) overwrote the object")
        held = remote.get(key)
        version = held.version if held is not None else None
        _landed(remote, key, b'{"probe": 3}', version)
        if _landed(remote, key, b'{"probe": 4}', version):
            lacks.append("a put from a stale version (If-Match) overwrote the object")
    finally:
        with contextlib.suppress(RemoteError):
            remote.delete(key)
    return lacks


def _landed(remote: Remote, key: str, data: bytes, version: str | None) -> bool:
    """Put `data` from `version`; whether it is there now (refused: False)."""
    try:
        remote.put_over(key, data, version)
    except Moved:
        now = remote.get(key)
        return now is not None and now.data == data
    return True


class Trusted(Remote):
    """`inner`, whose first write waits for the probe of its server (`probe`; a success kept in
    `cache`, a file under the store root): a server that fails it is refused with exit 3, or,
    with `mode` single-writer, written to by reads, writes and read-backs that never let a
    write pass silently over another's."""

    def __init__(self, inner: Remote, cache: Path, mode: str) -> None:
        super().__init__(inner.url)
        self.requests = inner.requests  # one count of the requests, probe's included
        self._inner = inner
        self._cache = cache
        self._mode = mode
        self._probing = threading.Lock()
        self._lacks: list[str] | None = None

    @property
    def server(self) -> str:
        return self._inner.server

    def _emulated(self) -> bool:
        """Whether writes go the single-writer way; refuses an untrusted server otherwise.

        Raises:
            RemoteError: The server fails the probe, and single-writer mode is not chosen.
        """
        with self._probing:
            if self._lacks is None:
                self._lacks = [] if self._cached() else probe(self._inner)
                if not self._lacks:
                    self._remember()
        if self._lacks and self._mode != SINGLE_WRITER:
            raise RemoteError(
                f"remote {self.url}: its server ({self.server}) does not honour conditional "
                f"writes: {'; '.join(self._lacks)}. Two runners moving one baseline could both "
                "succeed, one move lost, and a sample be overwritten silently",
                hint=f"use a server that honours them ({KNOWN_GOOD}), or promise one writer "
                f"at a time with NOISEFLOOR_REMOTE_WRITES={SINGLE_WRITER} (the suite's "
                "defaults.remote_writes): each write then is read back, and a pointer move "
                f"waits {SETTLE_S:.0f} s before it reads its own",
            )
        return bool(self._lacks)

    def _id(self) -> str:
        return f"{self.url} via {self.server}"

    def _cached(self) -> bool:
        try:
            doc = orjson.loads(self._cache.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return False
        return isinstance(doc, dict) and isinstance(doc.get(self._id()), dict)

    def _remember(self) -> None:
        """Keep the server's success (a cache: a lost or damaged file costs one probe)."""
        try:
            doc = orjson.loads(self._cache.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            doc = {}
        doc = doc if isinstance(doc, dict) else {}
        doc[self._id()] = {"honours_conditional_writes": True, "probed_at": utc_now()}
        self._cache.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self._cache.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        os.replace(temporary, self._cache)

    def get(self, key: str) -> Fetched | None:
        return self._inner.get(key)

    def keys(self, prefix: str) -> list[str]:
        return self._inner.keys(prefix)

    def delete(self, key: str) -> None:
        self._inner.delete(key)

    def put_any(self, key: str, data: bytes) -> str:
        return self._inner.put_any(key, data)

    def put_new(self, key: str, data: bytes) -> bool:
        if not self._emulated():
            return self._inner.put_new(key, data)
        if key.startswith("claims/"):  # who takes a sample: a race to settle, as a pointer's
            try:
                self.put_over(key, data, None)
            except Moved:
                return False
            return True
        # immutable: equal bytes for a key (runs, packs, manifests), or claimed (samples)
        if self._inner.get(key) is not None:
            return False
        self._inner.put_any(key, data)
        back = self._inner.get(key)
        if back is None or back.data != data:
            raise self._overwritten(key)
        return True

    def put_over(self, key: str, data: bytes, version: str | None) -> str:
        if not self._emulated():
            return self._inner.put_over(key, data, version)
        started = time.monotonic()
        held = self._inner.get(key)
        if (held.version if held is not None else None) != version:
            raise Moved(key)
        self._inner.put_any(key, data)
        took = time.monotonic() - started
        if took > SETTLE_S / 2:
            raise RemoteError(
                f"remote {self.url}: reading and writing {key} took {took:.1f} s, too long to "
                f"move it safely in single-writer mode (at most {SETTLE_S / 2:.0f} s)",
                hint="run the command again: nothing was lost, and the move is read back",
            )
        time.sleep(SETTLE_S)
        back = self._inner.get(key)
        if back is None or back.data != data:
            raise Moved(key)
        return back.version

    def _overwritten(self, key: str) -> RemoteError:
        return RemoteError(
            f"remote {self.url}: another writer wrote {key} at the same time as this command, "
            "which single-writer mode promised would not happen",
            hint="run one writer at a time against this server, or use one that honours "
            f"conditional writes ({KNOWN_GOOD})",
        )
