"""A directory every runner mounts (`file:///shared/path`) as a remote: immutable files created by
a hard link that fails when the name exists, pointers replaced under a lock from their version.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from noisefloor.store.remote import Fetched, Moved, Remote

__all__ = ["FileRemote"]


class FileRemote(Remote):
    """A shared directory as a remote. Python's own file calls serve it: obstore's local store
    cannot move an object from a version it names, which the pointers need."""

    def __init__(self, url: str, path: str) -> None:
        super().__init__(url)
        self.root = Path(path)

    def _path(self, key: str) -> Path:
        return self.root / key

    def get(self, key: str) -> Fetched | None:
        self.counted("get")
        try:
            data = self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self.failed(key, f"{exc.strerror or exc}") from None
        return Fetched(data, hashlib.sha256(data).hexdigest())

    def put_new(self, key: str, data: bytes) -> bool:
        self.counted("put")
        path = self._path(key)
        try:
            with self._written(path, data) as temporary:
                os.link(temporary, path)  # fails when the name exists: the first writer wins
        except FileExistsError:
            return False
        except OSError as exc:
            raise self.failed(key, f"{exc.strerror or exc}") from None
        return True

    def put_over(self, key: str, data: bytes, version: str | None) -> str:
        self.counted("put")
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path.parent / f".{path.name}.lock", "a+b") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    now = hashlib.sha256(path.read_bytes()).hexdigest()
                except FileNotFoundError:
                    now = None
                if now != version:
                    raise Moved(key)
                with self._written(path, data) as temporary:
                    os.replace(temporary, path)
        except OSError as exc:
            raise self.failed(key, f"{exc.strerror or exc}") from None
        return hashlib.sha256(data).hexdigest()

    def put_any(self, key: str, data: bytes) -> str:
        self.counted("put")
        path = self._path(key)
        try:
            with self._written(path, data) as temporary:
                os.replace(temporary, path)
        except OSError as exc:
            raise self.failed(key, f"{exc.strerror or exc}") from None
        return hashlib.sha256(data).hexdigest()

    def delete(self, key: str) -> None:
        self.counted("delete")
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise self.failed(key, f"{exc.strerror or exc}") from None

    def keys(self, prefix: str) -> list[str]:
        self.counted("list")
        base = self.root / prefix
        if not base.is_dir():
            return []
        return sorted(
            path.relative_to(self.root).as_posix()
            for path in base.rglob("*")
            if path.is_file() and not path.name.startswith(".")
        )

    @staticmethod
    @contextlib.contextmanager
    def _written(path: Path, data: bytes) -> Iterator[str]:
        """`data` in a synced temporary file beside `path`, removed after the block."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            yield temporary
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
