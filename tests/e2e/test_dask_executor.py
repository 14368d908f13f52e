"""Samples taken by a real Dask cluster on loopback (a scheduler and two worker processes): the
same verdicts and sample files as a local run, a worker killed halfway, a stale worker refused,
the scheduler going away, Ctrl-C cancelling the cluster's tasks."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import Client

from noisefloor.errors import TargetConfigError, UsageError
from noisefloor.executors import dask as dask_executor
from noisefloor.executors.base import SampleHooks
from noisefloor.executors.dask import DaskExecutor
from noisefloor.executors.sampling import pending_samples, take_samples
from noisefloor.pipeline.cases import case_records
from noisefloor.store.store import Store
from noisefloor.suite.load import load_suite
from noisefloor.suite.targets import build_target
from noisefloor.targets.function import FunctionTarget
from tests.builders import answer_case, commit_all, fake_suite, isolate_git, sample_files

#: Fields of a sample that record when and how fast, not what: they differ between any two runs.


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclasses.dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]

    @property
    def executor(self) -> str:
        return "dask://" + self.address.removeprefix("tcp://")


def _start(cmd: list[str], logs: Path, name: str) -> subprocess.Popen[bytes]:
    with (logs / f"{name}.log").open("wb") as log:
        # its own session, so that a terminal's Ctrl-C never reaches it
        return subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)


@contextlib.contextmanager
def _cluster(logs: Path, workers: int = 2, threads: int = 2) -> Iterator[Cluster]:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            _start(
                [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
                + ["--port", str(port), "--no-dashboard"],
                logs,
                "scheduler",
            )
        )
        for n in range(workers):
            procs.append(
                _start(
                    [sys.executable, "-m", "distributed.cli.dask_worker", address]
                    + ["--nthreads", str(threads), "--no-nanny", "--no-dashboard"]
                    + ["--host", "127.0.0.1", "--name", f"w{n}"],
                    logs,
                    f"worker{n}",
                )
            )
        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=30)
        yield Cluster(address, procs[0], procs[1:])
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A scheduler and two workers of two threads each, shared by the tests that leave it be."""
    with _cluster(tmp_path_factory.mktemp("dask")) as running:
        yield running


def _calls(log: Path) -> Counter[tuple[str, str]]:
    """How many completed calls the fake target logged, per (repeat, question)."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return Counter((repeat, question) for _, repeat, question in (ln.split(" ", 2) for ln in lines))


def _ledger_rows(root: Path) -> int:
    with contextlib.closing(sqlite3.connect(root / "ledger.sqlite")) as ledger:
        return int(ledger.execute("SELECT count(*) FROM samples").fetchone()[0])


def test_a_check_through_the_cluster_matches_a_local_one(
    cli: Any, project: Path, tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [answer_case(f"c{n}") for n in range(3)]
    suite = fake_suite(project, cases)
    outcomes = {}
    for where in ("local", cluster.executor):
        root = tmp_path / ("store-local" if where == "local" else "store-dask")
        monkeypatch.setenv("NOISEFLOOR_ROOT", str(root))
        monkeypatch.setenv("NOISEFLOOR_EXECUTOR", where)
        adopted = cli("check", suite, "--repeats", "6", "--format", "json")
        # the code changes: a new version, whose answers fail every case
        source = (project / "fake_target.py").read_text(encoding="utf-8")
        broken = source.replace('default=_env("answer", "Paris")', 'default=_env("answer", "Rome")')
        (project / "fake_target.py").write_text(broken, encoding="utf-8")
        regressed = cli("check", suite, "--repeats", "6", "--format", "json")
        (project / "fake_target.py").write_text(source, encoding="utf-8")
        verdicts = {c["case_id"]: c["verdict"] for c in regressed.json()["cases"]}
        outcomes[where] = (adopted.code, regressed.code, verdicts, sample_files(root))
        assert _ledger_rows(root) == 2 * 3 * 6
    local, dask = outcomes["local"], outcomes[cluster.executor]
    assert local[:2] == (0, 1)
    assert set(local[2].values()) == {"regressed"}
    assert len(local[3]) == 2 * 3 * 6
    assert dask == local


def test_ab_takes_both_arms_through_the_cluster(
    cli: Any,
    project: Path,
    tmp_path: Path,
    cluster: Cluster,
    monkeypatch: pytest.MonkeyPatch,
    _isolated_root: Path,
) -> None:
    isolate_git(monkeypatch, tmp_path)
    suite = fake_suite(project, [answer_case(f"c{n}") for n in range(2)])
    commit_all(project)
    program = project / "fake_target.py"
    text = program.read_text(encoding="utf-8")
    program.write_text(text.replace('_env("answer", "Paris")', '_env("answer", "Rome")'))
    result = cli(
        "ab",
        suite,
        "--baseline-ref",
        "HEAD",
        "--repeats",
        "6",
        "--format",
        "json",
        "--executor",
        cluster.executor,
    )
    assert result.code == 1, result.err
    report = result.json()
    assert {c["verdict"] for c in report["cases"]} == {"regressed"}
    answers = Counter(s["parsed"]["answer"] for s in sample_files(_isolated_root).values())
    assert answers == {"Paris": 12, "Rome": 12}


def test_a_worker_killed_halfway_loses_no_sample_and_takes_none_twice(
    cli: Any, project: Path, tmp_path: Path, _isolated_root: Path
) -> None:
    log = tmp_path / "calls.log"
    cases = [answer_case(f"c{n}") for n in range(6)]
    suite = fake_suite(
        project, cases, repeats=4, extra_argv=["--sleep", "0.3", "--log-calls", str(log)]
    )
    with _cluster(tmp_path) as running:
        victim = running.workers[1]

        def kill_halfway() -> None:
            while sum(_calls(log).values()) < 8:
                time.sleep(0.02)
            os.kill(victim.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_halfway, daemon=True)
        killer.start()
        result = cli("run", suite, "--executor", running.executor)
        killer.join(timeout=30)
    assert victim.poll() == -signal.SIGKILL
    assert result.code == 0, result.err
    wanted = {(str(r), f"question c{n}") for n in range(6) for r in range(4)}
    calls = _calls(log)
    assert set(calls) == wanted
    # a call the killed worker completed and never reported is taken again: at most one per
    # thread it had; every sample is written once
    assert sum(calls.values()) <= len(wanted) + 2
    assert len(sample_files(_isolated_root)) == len(wanted)
    assert _ledger_rows(_isolated_root) == len(wanted)


def test_a_worker_computing_another_version_refuses_the_task(
    project: Path, _isolated_root: Path, cluster: Cluster
) -> None:
    suite = load_suite(fake_suite(project, [answer_case("c0")], repeats=2))
    store = Store(_isolated_root)
    built = build_target(suite, store.root)
    assert built.source is not None
    stale = dataclasses.replace(built.source, key="0" * len(built.source.key))
    pending = pending_samples(store, case_records(store, suite, built, 0))
    with pytest.raises(TargetConfigError) as refused:
        executor = DaskExecutor(cluster.executor)
        take_samples(store, built.target, pending, executor=executor, source=stale, seed=1)
    message = refused.value.format_message()
    assert f"computes target version {built.record.key}" in message
    assert "refuses to take samples of another version" in message
    assert "hint: give every worker the same code" in message
    assert not sample_files(_isolated_root)


def test_a_sample_that_arrives_twice_is_written_once(
    project: Path, _isolated_root: Path, cluster: Cluster
) -> None:
    suite = load_suite(fake_suite(project, [answer_case("c0")], repeats=2))
    store = Store(_isolated_root)
    built = build_target(suite, store.root)
    pending = pending_samples(store, case_records(store, suite, built, 0))
    written: list[Path] = []
    calls = take_samples(
        store,
        built.target,
        [*pending, *pending],
        executor=DaskExecutor(cluster.executor),
        source=built.source,
        hooks=SampleHooks(lambda item, path, data: written.append(path)),
        seed=1,
    )
    assert calls == 2
    assert sorted(written) == sorted(p.path for p in pending)


def test_ctrl_c_cancels_the_clusters_tasks(
    project: Path, tmp_path: Path, _isolated_root: Path, cluster: Cluster
) -> None:
    log = tmp_path / "calls.log"
    cases = [answer_case(f"c{n}") for n in range(8)]
    suite = load_suite(
        fake_suite(
            project, cases, repeats=4, extra_argv=["--sleep", "0.2", "--log-calls", str(log)]
        )
    )
    store = Store(_isolated_root)
    built = build_target(suite, store.root)
    pending = pending_samples(store, case_records(store, suite, built, 0))

    def interrupt(item: Any, sample: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        take_samples(
            store,
            built.target,
            pending,
            executor=DaskExecutor(cluster.executor),
            source=built.source,
            hooks=SampleHooks(on_sample=interrupt),
            seed=1,
        )
    # the sample that arrived is kept; the tasks still queued never run
    assert len(sample_files(_isolated_root)) == 1
    time.sleep(1.0)
    assert sum(_calls(log).values()) <= 1 + 4 + 4
    with Client(cluster.address, timeout=10, set_as_default=False) as client:
        left = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
    assert left == 0


def test_the_scheduler_going_away_stops_the_run_with_exit_3_and_keeps_its_samples(
    cli: Any, project: Path, tmp_path: Path, _isolated_root: Path
) -> None:
    log = tmp_path / "calls.log"
    cases = [answer_case(f"c{n}") for n in range(6)]
    suite = fake_suite(
        project, cases, repeats=4, extra_argv=["--sleep", "0.3", "--log-calls", str(log)]
    )
    with _cluster(tmp_path) as running:

        def kill_halfway() -> None:
            while len(sample_files(_isolated_root)) < 6:
                time.sleep(0.02)
            os.kill(running.scheduler.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_halfway, daemon=True)
        killer.start()
        stopped = cli("run", suite, "--executor", running.executor)
        killer.join(timeout=30)
    assert stopped.code == 3, stopped.err
    assert "lost the Dask scheduler" in stopped.err
    kept = len(sample_files(_isolated_root))
    assert 6 <= kept < 24
    assert _ledger_rows(_isolated_root) == kept
    before = sum(_calls(log).values())
    resumed = cli("run", suite)
    assert resumed.code == 0, resumed.err
    assert len(sample_files(_isolated_root)) == 24
    assert sum(_calls(log).values()) - before == 24 - kept


def test_the_local_executor_imports_nothing_of_dask(project: Path, tmp_path: Path) -> None:
    suite = fake_suite(project, [answer_case("c0")], repeats=2)
    code = (
        "import sys\n"
        "from noisefloor.cli.main import main\n"
        f"assert main(['run', {str(suite)!r}, '--executor', 'local']) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print(loaded)\n"
    )
    env = {**os.environ, "NOISEFLOOR_ROOT": str(tmp_path / "store")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_an_executor_that_is_no_executor_is_refused(cli: Any, project: Path) -> None:
    suite = fake_suite(project, [answer_case("c0")], repeats=2)
    result = cli("run", suite, "--executor", "spark://somewhere")
    assert result.code == 3
    assert "--executor 'spark://somewhere' names no executor" in result.err
    assert "dask://HOST:PORT" in result.err


def test_a_scheduler_that_cannot_be_reached_is_exit_3_with_a_hint(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT_S", 1)
    suite = fake_suite(project, [answer_case("c0")], repeats=2)
    executor = f"dask://127.0.0.1:{_free_port()}"
    result = cli("run", suite, "--executor", executor)
    assert result.code == 3
    assert f"cannot reach the Dask scheduler at {executor}" in result.err
    assert "hint: start one (`dask scheduler`)" in result.err


def test_an_in_process_target_is_refused_before_reaching_a_cluster(
    project: Path, _isolated_root: Path
) -> None:
    suite = load_suite(fake_suite(project, [answer_case("c0")], repeats=1))
    store = Store(_isolated_root)
    pending = pending_samples(store, case_records(store, suite, build_target(suite), 0))
    target = FunctionTarget(lambda case, repeat: "Paris")
    with pytest.raises(UsageError, match="takes samples of command and http targets only"):
        executor = DaskExecutor(f"dask://127.0.0.1:{_free_port()}")
        take_samples(store, target, pending, executor=executor, seed=1)
