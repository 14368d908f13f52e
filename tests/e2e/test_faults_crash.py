"""Fault trials of the store under CI-sized counts (concurrent checks, SIGKILL at any moment,
a full disk), and the focused tests of what they found: a bounded lock, a doit database that
stays locked, write errors that name the file."""

from __future__ import annotations

import fcntl
import json
import os
import resource
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bench.fault_trials import concurrency, crashes, diskfull
from noisefloor.errors import StoreError
from noisefloor.ledger.ledger import Ledger
from noisefloor.store.store import Store
from tests.builders import answer_case, fake_suite


def test_a_check_waits_for_a_busy_store_then_says_who_holds_it(cli, project, _isolated_root):
    suite = fake_suite(project, [answer_case("a")], repeats=2)
    with Store(_isolated_root).lock("fake"):
        started = time.monotonic()
        result = cli("check", suite, "--lock-timeout", "0.3")
    assert time.monotonic() - started < 10
    assert result.code == 3, result.err
    assert "store busy: suite 'fake'" in result.err
    assert f"locked by process {os.getpid()}" in result.err
    assert "waited 0.3 s" in result.err
    assert "--lock-timeout" in result.err and "Traceback" not in result.err


def test_a_released_lock_names_nobody_and_a_holder_yet_to_say_is_not_misnamed(_isolated_root):
    """The lock file names its holder while held and nobody after: a run that finds the lock
    taken before its new holder wrote a line must not name the previous one."""
    store = Store(_isolated_root, lock_timeout_s=0)
    path = _isolated_root / "locks" / "fake.lock"
    with store.lock("fake"):
        assert f"process {os.getpid()}" in path.read_text()
    assert path.read_text() == ""
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # taken, no line written yet
        with (
            pytest.raises(StoreError) as busy,
            Store(_isolated_root, lock_timeout_s=0).lock("fake"),
        ):
            pass
    assert "is locked by another process that has just taken it" in busy.value.message


def test_a_check_gets_the_store_once_the_holder_lets_go(cli, project, _isolated_root, monkeypatch):
    monkeypatch.setenv("NOISEFLOOR_LOCK_TIMEOUT", "30")
    suite = fake_suite(project, [answer_case("a")], repeats=2)
    held = threading.Event()

    def hold() -> None:
        with Store(_isolated_root).lock("fake"):
            held.set()
            time.sleep(0.5)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    result = cli("check", suite)
    holder.join()
    assert result.code == 0, result.err


def test_checks_started_together_on_an_empty_store_adopt_one_baseline(project, _isolated_root):
    """The first to finish adopts; the other, which found no baseline when it started, then
    compares with that one instead of moving the pointer to its own run."""
    log = project / "calls.log"
    suite = fake_suite(
        project,
        [answer_case("a"), answer_case("b")],
        repeats=3,
        env={"NOISEFLOOR_FAKE_LOG_CALLS": str(log), "NOISEFLOOR_FAKE_SLEEP": "0.3"},
    )
    args = [sys.executable, "-m", "noisefloor", "check", str(suite), "--adopt", "--format", "json"]
    env = {**os.environ, "NOISEFLOOR_ROOT": str(_isolated_root)}
    procs = [
        subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        for _ in range(2)
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        reports.append(json.loads(out))
    adopted = [r for r in reports if r["adopted"]]
    assert len(adopted) == 1
    (other,) = [r for r in reports if not r["adopted"]]
    assert other["baseline"] == adopted[0]["candidate"]
    assert other["counts"] == {"unchanged": 2}
    pointer = json.loads((_isolated_root / "baselines" / "fake.json").read_text())
    assert pointer["run_id"] == adopted[0]["candidate"]
    assert len(log.read_text().splitlines()) == 2 * 3


@pytest.mark.parametrize("value", ["soon", "-1", "nan"])
def test_a_bad_lock_timeout_in_the_environment_is_a_usage_error(cli, project, monkeypatch, value):
    monkeypatch.setenv("NOISEFLOOR_LOCK_TIMEOUT", value)
    suite = fake_suite(project, [answer_case("a")], repeats=2)
    result = cli("check", suite)
    assert result.code == 3
    assert f"NOISEFLOOR_LOCK_TIMEOUT must be a number of seconds >= 0, got {value!r}" in result.err


def test_the_doit_database_locked_longer_than_doits_own_wait_does_not_fail_a_check(
    cli, project, _isolated_root, monkeypatch
):
    """doit waits sqlite's default 5 s for a lock on its database; concurrent checks of several
    suites on one store can hold it longer, and a check must then wait, not fail with a
    traceback, nor take the database from the process that holds it. sqlite's default wait is
    cut to 0.1 s here, and the lock is held for 0.5 s after the check opens the database, so it
    outlasts doit's own wait without the test sleeping 5 s."""
    connect = sqlite3.connect
    opened = threading.Event()

    def impatient_by_default(database: Any, *args: Any, timeout: float = 0.1, **kw: Any) -> Any:
        if "doit.sqlite" in str(database):  # a path, or a read-only URI
            opened.set()
        return connect(database, *args, timeout=timeout, **kw)

    suite = fake_suite(project, [answer_case("a")], repeats=2)
    assert cli("check", suite).code == 0
    monkeypatch.setattr(sqlite3, "connect", impatient_by_default)
    held = threading.Event()

    def hold() -> None:
        conn = connect(_isolated_root / "doit.sqlite", isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("CREATE TABLE holder (written)")
        held.set()
        try:
            opened.wait(timeout=60)
            time.sleep(0.5)
        finally:
            conn.execute("COMMIT")
            conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    result = cli("check", suite, "--fresh")
    holder.join()
    assert opened.is_set(), "the check never opened the doit database"
    assert result.code == 0, result.err
    assert "Traceback" not in result.err
    # the holder's write landed in the database the check used: it was waited for, not replaced
    kept = connect(_isolated_root / "doit.sqlite")
    try:
        assert (
            kept.execute("SELECT count(*) FROM sqlite_master WHERE name = 'holder'").fetchone()[0]
            == 1
        )
        assert kept.execute("SELECT count(*) FROM doit").fetchone()[0] > 0
    finally:
        kept.close()


def _limited_check(suite: Path, root: Path, size: int) -> subprocess.CompletedProcess[str]:
    """A check in a fresh process whose files may not grow past `size` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))

    return subprocess.run(
        [sys.executable, "-m", "noisefloor", "--root", str(root), "check", str(suite)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
        check=False,
    )


def test_a_sample_write_past_the_file_size_limit_names_the_file_and_the_way_out(
    cli, project, _isolated_root
):
    suite = fake_suite(project, [answer_case("a")], repeats=2)
    Store(_isolated_root).ensure()  # the store's .gitignore is larger than a sample
    limited = _limited_check(suite, _isolated_root, 200)
    assert limited.returncode == 3, limited.stderr
    assert "error: file too large writing samples/fake/" in limited.stderr
    assert f"/r0.json under {_isolated_root}" in limited.stderr
    assert "hint: free space, or move the store with --root" in limited.stderr
    assert "Traceback" not in limited.stderr and "internal error" not in limited.stderr
    assert list(_isolated_root.rglob("*.tmp")) == []
    assert cli("check", suite).code == 0


def test_a_full_disk_under_the_ledger_is_a_store_error_that_keeps_the_samples(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite") as ledger:

        def fill(conn: sqlite3.Connection) -> None:
            raise sqlite3.OperationalError("database or disk is full")

        with pytest.raises(StoreError) as caught:
            ledger.write(fill)
    said = caught.value.format_message()
    assert f"no space left on device writing the ledger {tmp_path / 'ledger.sqlite'}" in said
    assert "every sample written so far is kept" in said


def test_concurrent_checks_each_end_with_a_verdict_and_take_each_sample_once(tmp_path):
    for tally in concurrency.trials(1, tmp_path, processes=3):
        assert tally.clean, tally.notes


def test_a_check_killed_at_random_moments_is_finished_by_the_next_one(tmp_path):
    for tally in crashes.trials(2, tmp_path):
        assert tally.clean, tally.notes


def test_a_check_out_of_room_stops_clearly_and_the_next_one_resumes(tmp_path):
    for tally in diskfull.trials(1, tmp_path):
        assert tally.clean, tally.notes
