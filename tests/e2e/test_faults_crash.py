"""Fault trials of the store under CI-sized counts (concurrent checks, SIGKILL at any moment,
a full disk), and the focused tests of what they found: a bounded lock, a doit database that
stays locked, write errors that name the file."""

from __future__ import annotations

import os
import threading
import time

from noisefloor.store import Store
from tests.conftest import answer_case, fake_suite


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


def test_a_bad_lock_timeout_in_the_environment_is_a_usage_error(cli, project, monkeypatch):
    monkeypatch.setenv("NOISEFLOOR_LOCK_TIMEOUT", "soon")
    suite = fake_suite(project, [answer_case("a")], repeats=2)
    result = cli("check", suite)
    assert result.code == 3
    assert "NOISEFLOOR_LOCK_TIMEOUT must be a number of seconds >= 0, got 'soon'" in result.err
