"""The per-suite lock of a store: one run of a suite at a time, with a bounded wait, and a "store
busy" that names the holder the lock file records.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from noisefloor.errors import StoreError
from noisefloor.store.files import remove_not_a_file
from noisefloor.store.layout import utc_now

__all__ = ["suite_lock"]

# How often a waiting run tries the lock again.
_LOCK_POLL_S = 0.05


@contextlib.contextmanager
def suite_lock(path: Path, suite: str, timeout_s: float, root: Path, shown: str) -> Iterator[None]:
    """An exclusive lock per suite, so two runs cannot race on epochs and pointers.

    Waits up to `timeout_s` for another process to release it, then raises "store busy" naming
    the holder, which the lock file records (the system releases the lock of a process that
    dies, so a killed run never leaves it held). `root` and `shown` (the lock file as the store
    names it) word that error.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # a directory or a symlink loop in its place is no lock anyone holds: it goes
    remove_not_a_file(path)
    with open(path, "a+b") as fh:
        started = time.monotonic()
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited >= timeout_s:
                    raise _busy(suite, path, waited, root, shown) from None
                time.sleep(min(_LOCK_POLL_S, max(timeout_s - waited, 0.001)))
        try:
            holder = f"process {os.getpid()} ({' '.join(sys.argv)[:200]}) since {utc_now()}"
            # only what a waiting run shows: a disk too full to hold it stops nothing here
            with contextlib.suppress(OSError):
                os.ftruncate(fh.fileno(), 0)
                os.write(fh.fileno(), holder.encode())
            yield
        finally:
            # a released lock names nobody: a run that finds it taken before its new holder
            # wrote a line must not name the one before
            with contextlib.suppress(OSError):
                os.ftruncate(fh.fileno(), 0)
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _busy(suite: str, path: Path, waited: float, root: Path, shown: str) -> StoreError:
    """The "store busy" error of a lock another process held for all of `waited` seconds."""
    try:
        holder = path.read_text(errors="replace").strip()
    except OSError:
        holder = ""
    # an empty file: its holder took it an instant ago and has not said who it is yet
    holder = holder or "another process that has just taken it"
    return StoreError(
        f"store busy: suite {suite!r} under {root} is locked by {holder}; "
        f"waited {waited:.1f} s for it ({shown})",
        hint="let that run finish, or wait longer with --lock-timeout SECONDS "
        "(env NOISEFLOOR_LOCK_TIMEOUT)",
    )
