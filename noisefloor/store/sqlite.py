"""SQLite plumbing for an index file shared between processes: connections in WAL mode with a
busy timeout, a lock file, immediate transactions retried on lock, and recreation when corrupt.

What the file holds (tables, views, rows) is the caller's: it passes the schema and its version.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from noisefloor.errors import StoreError
from noisefloor.store.files import FULL_ERRNOS, remove_not_a_file, write_failure

__all__ = [
    "BUSY_TIMEOUT_MS",
    "EXCLUSIVE_WAIT_S",
    "Database",
    "connect",
    "ensure_schema",
    "transaction",
    "unlink_db",
]

#: How long a writer waits for another writer's lock before SQLite reports "database is locked".
BUSY_TIMEOUT_MS = 30_000

# A lock that still escapes the busy timeout is retried: a write must never be lost to it.
RETRIES = 5
RETRY_SLEEP_S = 0.05

#: How long `Database.exclusive` (a rebuild, recovery from a corrupt file) waits for other open
#: handles to close.
EXCLUSIVE_WAIT_S = 30.0

# SQLite primary result codes (the low byte of an extended code).
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6
_SQLITE_IOERR = 10
_SQLITE_CORRUPT = 11
_SQLITE_FULL = 13
_SQLITE_NOTADB = 26

T = TypeVar("T")


def _code(exc: sqlite3.Error) -> int:
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def is_locked(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds a lock."""
    message = str(exc).lower()
    return _code(exc) in (_SQLITE_BUSY, _SQLITE_LOCKED) or "locked" in message or "busy" in message


def is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether the file is no database, or a damaged one."""
    message = str(exc).lower()
    return (
        _code(exc) in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
        or "not a database" in message
        or "malformed" in message
    )


def refused(path: Path, exc: sqlite3.Error | OSError) -> StoreError | None:
    """The StoreError of a write to the database at `path` that found no room (a full disk,
    the file-size limit, which SQLite reports as an I/O error); None for any other error."""
    if isinstance(exc, OSError):
        full = exc.errno in FULL_ERRNOS
        reason = (exc.strerror or str(exc)).lower()
    else:
        code = _code(exc)
        full = code == _SQLITE_FULL or "disk is full" in str(exc).lower()
        reason = "no space left on device"
        if not full and (code == _SQLITE_IOERR or "disk i/o error" in str(exc).lower()):
            full, reason = True, f"{str(exc).lower()} (a full disk, or the file-size limit)"
    return write_failure(f"the ledger {path}", reason) if full else None


def connect(path: Path, *, wal: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode with the busy timeout set (and WAL unless `wal=False`).

    A connection may be opened in one thread and used or closed in another, one at a time: a
    handle opened by the thread that writes samples is closed by the thread that waited for it.
    """
    # autocommit mode: transactions are opened explicitly with BEGIN IMMEDIATE, which takes the
    # write lock up front and so waits in the busy handler instead of failing on lock upgrade
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if wal:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One immediate transaction: committed on success, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # a failed COMMIT leaves the transaction open; a retry must start from a clean slate
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def ensure_schema(
    conn: sqlite3.Connection, where: Path, schema: Sequence[str], version: int
) -> bool:
    """Create the tables and views if missing; return True if an older file's were dropped.

    The file's `user_version` is the schema's version: an older one is dropped whole and
    created again, a newer one refused.
    """
    with transaction(conn):
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if found == version:
            return False
        if found > version:
            raise StoreError(
                f"the ledger {where} has schema version {found}; this noisefloor knows {version}",
                hint="upgrade noisefloor, or delete the file and run `noisefloor ledger rebuild`",
            )
        objects = conn.execute(
            "SELECT type, name FROM sqlite_master "
            "WHERE type IN ('view', 'table') AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        # views first: a table cannot be dropped while a view still names it in some versions
        for kind, name in sorted(objects, key=lambda row: row[0] != "view"):
            conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        for statement in schema:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version}")
        return bool(objects)


def unlink_db(path: Path) -> None:
    """Delete a database file and its WAL, shared-memory and journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class Database:
    """An open database file: WAL mode, a 30 s busy timeout, a shared lock on `<file>.lock`.

    `exclusive` takes the lock file exclusively, because swapping the database file under a
    live WAL connection would corrupt it; every other handle holds it shared.

    Attributes:
        path: The database file.
        recreated: True when an older-version or corrupt file was replaced on open.
    """

    def __init__(self, path: Path, schema: Sequence[str], version: int) -> None:
        """Open (creating if needed) the database at `path` with `schema` at `version`.

        Raises:
            StoreError: The file was written by a newer schema, or stays locked.
        """
        self.path = Path(path)
        self.recreated = False
        self._schema = tuple(schema)
        self._version = version
        # a directory or a symlink loop where the file or its lock belongs holds no database
        # and no lock: it goes, and the caller fills the new file (`recreated`)
        if remove_not_a_file(self.path):
            self.recreated = True
        remove_not_a_file(f"{self.path}.lock")
        self._lock_fd: int | None = None
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock_fd = os.open(
                f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644
            )
            fcntl.flock(self._lock_fd, fcntl.LOCK_SH)
            self._conn = self._open()
        except OSError as exc:
            self.close()
            error = refused(self.path, exc)
            if error is None:
                raise
            raise error from None
        except BaseException:
            self.close()
            raise

    def _open(self) -> sqlite3.Connection:
        # Two processes opening a fresh file both switch it to WAL; SQLite answers one of them
        # "database is locked" at once, without the busy handler, to avoid a deadlock.
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return self._try_open()
            except sqlite3.OperationalError as exc:
                if not is_locked(exc):
                    raise refused(self.path, exc) or StoreError(
                        f"cannot open the ledger {self.path}: {exc}"
                    ) from exc
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"the ledger {self.path} stayed locked for {BUSY_TIMEOUT_MS // 1000} s",
                        hint="another process holds it; the sample files are kept either way",
                    ) from exc
                time.sleep(RETRY_SLEEP_S)

    def create(self, path: Path, *, wal: bool = True) -> sqlite3.Connection:
        """A connection to `path` with this database's schema in place."""
        conn = connect(path, wal=wal)
        try:
            self.recreated = (
                ensure_schema(conn, path, self._schema, self._version) or self.recreated
            )
        except BaseException:
            conn.close()
            raise
        return conn

    def _try_open(self) -> sqlite3.Connection:
        try:
            return self.create(self.path)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) or not is_corrupt(exc):
                raise
        # a corrupt index costs nothing to drop: the caller fills it again
        with self.exclusive():
            unlink_db(self.path)
        self.recreated = True
        return self.create(self.path)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the lock file exclusively: no other handle is open meanwhile."""
        assert self._lock_fd is not None
        deadline = time.monotonic() + EXCLUSIVE_WAIT_S
        while True:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    # do not keep a half-converted lock: shared again, as an open handle holds it
                    fcntl.flock(self._lock_fd, fcntl.LOCK_SH)
                    raise StoreError(
                        f"the ledger {self.path} is open in another process",
                        hint="retry when running commands have finished",
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            # a downgrade never waits, so no other process can slip in between
            fcntl.flock(self._lock_fd, fcntl.LOCK_SH)

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the ledger {self.path} is closed")
        return self._conn

    def close(self) -> None:
        """Close the connection and release the lock; safe to call twice."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Database:
        """Use the database in a `with` block that closes it."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the database."""
        self.close()

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` in one immediate transaction, retrying it when the lock still escapes."""
        conn = self._db()
        for attempt in range(RETRIES):
            try:
                with transaction(conn):
                    return work(conn)
            except sqlite3.OperationalError as exc:
                if not is_locked(exc):
                    error = refused(self.path, exc)
                    if error is None:
                        raise
                    raise error from None
                if attempt == RETRIES - 1:
                    raise StoreError(
                        f"the ledger {self.path} stayed locked through {RETRIES} attempts: {exc}",
                        hint="the sample files are kept; `noisefloor ledger rebuild` restores "
                        "the index",
                    ) from exc
                time.sleep(RETRY_SLEEP_S * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def replace_with(self, build: Callable[[sqlite3.Connection], T]) -> T:
        """Write a whole new file with `build` beside this one and swap it in (`os.replace`).

        A build that fails leaves the old file as it was. Waits up to `EXCLUSIVE_WAIT_S` for
        other open handles to close.
        """
        tmp = self.path.with_name(f"{self.path.name}.rebuild-{os.getpid()}.tmp")
        with self.exclusive():
            unlink_db(tmp)
            try:
                # no WAL for a file nobody else opens yet: a clean close leaves it alone
                conn = self.create(tmp, wal=False)
                try:
                    result = build(conn)
                finally:
                    conn.close()
            except BaseException:
                unlink_db(tmp)
                raise
            self._swap(tmp)
        return result

    def _swap(self, tmp: Path) -> None:
        """Replace the database file by `tmp`; the caller holds the lock exclusively."""
        conn, self._conn = self._db(), None
        try:
            # fold the WAL into the old file and close: a leftover -wal beside the new file
            # would be replayed into it
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.close()
        try:
            os.replace(tmp, self.path)
            Path(f"{self.path}-wal").unlink(missing_ok=True)
            Path(f"{self.path}-shm").unlink(missing_ok=True)
        except BaseException:
            unlink_db(tmp)
            raise
        finally:
            self._conn = self._open()
