"""Running task dicts on doit's engine: its sqlite3 database under the store root, md5 checks,
and a count of what ran and what was up to date; the one module that imports doit."""

from __future__ import annotations

import contextlib
import gc
import io
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from noisefloor.errors import StoreError
from noisefloor.store.files import remove_not_a_file, write_failure
from noisefloor.store.sqlite import unlink_db
from noisefloor.store.store import Store

__all__ = ["DOIT_BUSY_S", "EngineStats", "SamplesDropped", "Task", "all_current", "run_tasks"]

Task = dict[str, Any]

#: How long a check waits for another process's write to the doit database (doit's own is
#: 5 s, which concurrent checks of several suites on one store outlast).
DOIT_BUSY_S = 600.0

# The name doit's plugin loader finds the backend by (`module:attribute`).
_BACKEND = "noisefloor-sqlite3"
_BACKEND_CLASS = "PatientSqliteDB"


def __getattr__(name: str) -> Any:
    """The doit backend class, made on first use: doit is imported only when tasks run."""
    if name == _BACKEND_CLASS:
        return _patient_db()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _patient_db() -> type:
    """doit's sqlite3 backend, its connection waiting `DOIT_BUSY_S` for a lock, not 5 s."""
    from doit.dependency import DatabaseException, SqliteDB

    class PatientSqliteDB(SqliteDB):  # type: ignore[misc]
        # doit's own `_sqlite3`, but for the timeout, and an error that does not call a
        # locked or full file corrupt
        def _sqlite3(self, name: str) -> sqlite3.Connection:
            decode = self.codec.decode
            sqlite3.register_adapter(list, self.codec.encode)
            sqlite3.register_adapter(dict, self.codec.encode)
            sqlite3.register_converter("json", lambda data: decode(data.decode("utf-8")))
            conn = sqlite3.connect(
                name,
                timeout=DOIT_BUSY_S,
                detect_types=sqlite3.PARSE_DECLTYPES | sqlite3.PARSE_COLNAMES,
                isolation_level="DEFERRED",
            )
            conn.row_factory = _dict_row
            try:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS doit "
                    "(task_id TEXT NOT NULL PRIMARY KEY, task_data json)"
                )
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise DatabaseException(f"cannot use the doit database {name}: {exc}") from None
            return conn

    return PatientSqliteDB


@dataclass
class EngineStats:
    """What one engine invocation did, by task kind."""

    executed: Counter[str] = field(default_factory=Counter)
    up_to_date: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def merged(self, other: EngineStats) -> EngineStats:
        """The counts of two invocations together."""
        return EngineStats(
            self.executed + other.executed,
            self.up_to_date + other.up_to_date,
            self.failures + other.failures,
        )

    def as_dict(self) -> dict[str, dict[str, int]]:
        """JSON-able counts."""
        return {"executed": dict(self.executed), "up_to_date": dict(self.up_to_date)}


class SamplesDropped(StoreError):
    """Samples read back corrupt and were deleted: they count as missing, and a run that
    samples again takes them (`paths`)."""

    def __init__(self, store: Store) -> None:
        self.paths = list(dict.fromkeys(store.dropped_samples))
        store.dropped_samples.clear()
        shown = ", ".join(store.rel(p) for p in self.paths[:5])
        more = f" (and {len(self.paths) - 5} more)" if len(self.paths) > 5 else ""
        super().__init__(
            f"corrupt sample {shown}{more}: deleted, it counts as missing",
            hint="run the command again: it takes the missing samples again",
        )


def _kind(task_name: str) -> str:
    return task_name.split(":", 1)[0]


@contextlib.contextmanager
def _quiet_process() -> Iterator[io.StringIO]:
    """doit swaps sys.stdout for captured output; restore it, keep what doit itself writes to
    stderr (a traceback when its database fails) for the error message, and pause GC while
    tasks load (garbage collection over the ~7 KB of each task doubled the time of a run with
    nothing to do)."""
    out, err = sys.stdout, sys.stderr
    sys.stderr = captured = io.StringIO()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield captured
    finally:
        sys.stdout, sys.stderr = out, err
        if gc_was_enabled:
            gc.enable()


@contextlib.contextmanager
def _no_plugin_scan() -> Iterator[None]:
    """doit looks for third-party commands, backends and reporters in the entry points of every
    installed distribution, three scans per invocation (22 ms with this project's development
    dependencies); the engine names its own backend and reporter, so it looks up none."""
    import doit.plugin

    scan = doit.plugin.entry_points_impl
    doit.plugin.entry_points_impl = lambda: _no_entry_points
    try:
        yield
    finally:
        doit.plugin.entry_points_impl = scan


def _no_entry_points(group: str) -> tuple[()]:
    return ()


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> dict[str, Any]:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}


def _usable_db(store: Store) -> None:
    """Delete doit's database when it cannot be opened (it only records file checksums: losing
    it costs re-checking the derived files, never a sample)."""
    path = store.doit_db
    remove_not_a_file(path)
    if not path.exists():
        return
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=DOIT_BUSY_S)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.OperationalError:
        # busy or unreadable for now (another check writing it): never a reason to delete it
        return
    except sqlite3.DatabaseError:
        unlink_db(path)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def all_current(tasks: Sequence[Task]) -> EngineStats:
    """The stats of tasks found current without starting doit: every one up to date."""
    stats = EngineStats()
    for name in {t["name"] for t in tasks}:
        stats.up_to_date[_kind(name)] += 1
    return stats


#: How many times one run rebuilds derived files it found corrupt before it gives up.
REBUILDS = 8


def run_tasks(store: Store, tasks: Sequence[Task], rebuilds: int = REBUILDS) -> EngineStats:
    """Run task dicts through doit (sqlite3 backend under the store root); raise on failure.

    A task that read a corrupt derived file (a score, band, verdict or report) drops it and
    the run starts again, so the task that makes it rebuilds it, at most `rebuilds` times.
    """
    from doit.cmd_base import TaskLoader2
    from doit.doit_cmd import DoitMain
    from doit.task import dict_to_task

    stats = EngineStats()
    unique = list({t["name"]: t for t in tasks}.values())
    dropped_before = len(store.dropped)
    refused_before = store.write_error

    class Reporter:
        def __init__(self, outstream: Any, options: Any) -> None:
            pass

        def initialize(self, tasks: Any, selected_tasks: Any) -> None:
            pass

        def get_status(self, task: Any) -> None:
            pass

        def execute_task(self, task: Any) -> None:
            pass

        def add_success(self, task: Any) -> None:
            stats.executed[_kind(task.name)] += 1

        def add_failure(self, task: Any, fail: Any) -> None:
            # doit keeps a failure's formatted traceback, not the exception: quote its last line
            stats.failures.append(f"{task.name}: {fail.get_msg().strip().splitlines()[-1]}")

        def skip_uptodate(self, task: Any) -> None:
            stats.up_to_date[_kind(task.name)] += 1

        def skip_ignore(self, task: Any) -> None:
            pass

        def cleanup_error(self, exception: Any) -> None:
            stats.failures.append(f"cleanup: {exception}")

        def runtime_error(self, msg: str) -> None:
            stats.failures.append(msg.strip())

        def teardown_task(self, task: Any) -> None:
            pass

        def complete_run(self) -> None:
            pass

    class Loader(TaskLoader2):  # type: ignore[misc]
        def setup(self, opt_values: Any) -> None:
            pass

        def load_doit_config(self) -> dict[str, Any]:
            return {
                "dep_file": str(store.doit_db),
                "backend": _BACKEND,
                "verbosity": 0,
                "reporter": Reporter,
                "check_file_uptodate": "md5",
            }

        def load_tasks(self, cmd: Any, pos_args: Any) -> list[Any]:
            return [dict_to_task(t) for t in unique]

    if not unique:
        return stats
    store.ensure()
    _usable_db(store)
    plugins = {"BACKEND": {_BACKEND: f"{__name__}:{_BACKEND_CLASS}"}}
    with _quiet_process() as doit_err, _no_plugin_scan():
        code = DoitMain(Loader(), config_filenames=(), extra_config=plugins).run(
            ["run", "--continue"]
        )
    # doit prints the traceback of its own errors (its database, say) and exits 3: its last
    # line is raised as the error
    said = _last_line(doit_err.getvalue())
    if store.write_error is not refused_before and store.write_error is not None:
        # a task's write found no room: that, not the task's failure, is the news
        raise store.write_error
    if "disk is full" in said or "disk I/O error" in said:
        # SQLite's own words when the doit database could not grow (a full disk, or the
        # file-size limit, which it reports as an I/O error)
        raise write_failure(f"the doit database {store.doit_db}", said.split(": ", 1)[-1].lower())
    if store.dropped_samples:
        raise SamplesDropped(store)
    if len(store.dropped) > dropped_before and rebuilds > 0:
        # a task read a corrupt derived file and deleted it: run again, so the task that
        # makes it rebuilds it (the failures were only its consequences)
        return run_tasks(store, tasks, rebuilds - 1)
    if (stats.failures or code not in (0, None)) and rebuilds > 0:
        # a directory or a symlink loop where a task writes its file (no write replaces one),
        # or doit's database damaged past its first page: cleared, then one more go
        cleared = [remove_not_a_file(t) for task in unique for t in task.get("targets", ())]
        if any(cleared) or not stats.failures:
            unlink_db(store.doit_db)
            return run_tasks(store, tasks, 0)
    if stats.failures or code not in (0, None):
        # doit's own error is the last line of its traceback, after the exception's class
        own = said.split(": ", 1)[-1] if said else f"doit exited with {code}"
        shown = "; ".join(stats.failures[:5]) or own
        more = f" (and {len(stats.failures) - 5} more)" if len(stats.failures) > 5 else ""
        raise StoreError(f"the pipeline failed: {shown}{more}")
    return stats
