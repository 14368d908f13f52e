"""The remote store end to end: the real command line in subprocesses, fresh git clones as CI
runners (`.noisefloor/` ignored by git), against moto's S3 server on loopback and a file:// remote.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest
import yaml

from bench.servers.object_store import S3_ENV, S3Server
from noisefloor.errors import PointerMoved
from noisefloor.executors import executor_of
from noisefloor.operations.check import check_suite
from noisefloor.operations.deepen import deepen_baseline
from noisefloor.operations.run import RunOptions
from noisefloor.settings.resolved import resolve
from noisefloor.store.branches import Branches
from noisefloor.store.mirrored import MirroredStore
from noisefloor.store.remote_url import open_remote
from noisefloor.suite.load import load_suite
from tests.builders import commit_all
from tests.remote_runners import (
    adopted,
    change,
    check,
    clone,
    command,
    noisefloor,
    remote_keys,
    remote_object,
    sample_keys,
    verdicts,
)


def test_a_fresh_clone_of_the_adopted_commit_checks_with_no_calls(origin, tmp_path, remote):
    first = adopted(origin, tmp_path, remote)
    assert first["calls"] == 8
    report = check(clone(origin, tmp_path / "runner"), remote)
    assert (report["exit_code"], report["calls"]) == (0, 0)
    assert report["baseline"] == first["candidate"]
    # no SQLite file lives in the remote, and no secret in any file a command wrote
    keys = remote_keys(remote)
    assert not [k for k in keys if "sqlite" in k]
    secret = S3_ENV["AWS_SECRET_ACCESS_KEY"].encode()
    written = [p for p in tmp_path.rglob("*") if p.is_file() and ".git" not in p.parts]
    assert written and not [p for p in written if secret in p.read_bytes()]


def test_a_fresh_runner_fetches_the_baseline_in_a_request_per_case(
    origin, tmp_path, remote, monkeypatch
):
    adopted(origin, tmp_path, remote)
    for name, value in remote[1].items():
        monkeypatch.setenv(name, value)
    reader = open_remote(remote[0])
    store = MirroredStore(tmp_path / "fresh", reader, Branches(("main",), "main"))
    pointer = store.baseline("fake")
    assert pointer is not None
    # the pointer, the run record, and one pack per case: never a sample at a time
    assert dict(reader.requests) == {"get": 4}
    run = store.load_run("fake", pointer.run_id)
    assert sum(len(store.sample_files(c)) for c in run.cases) == 8
    assert all(Path(f).is_file() for c in run.cases for f in store.sample_files(c))


def test_the_default_branch_deepens_its_baseline_into_the_remote(origin, tmp_path, remote):
    first = adopted(origin, tmp_path, remote)
    deepener = clone(origin, tmp_path / "deepener")
    done = noisefloor(deepener, remote, "baseline", "deepen", "suite.yaml", "--repeats", "7")
    assert done.returncode == 0, done.stderr
    assert "6 target call(s)" in done.stdout  # 2 cases from 4 repeats to 7
    report = check(clone(origin, tmp_path / "runner"), remote)
    assert (report["exit_code"], report["calls"]) == (0, 0)
    assert report["baseline"] != first["candidate"]
    assert report["runs"]["baseline"]["repeats"] == 7  # the deepened pool, fetched


def test_a_changed_commit_sampled_by_one_runner_costs_the_next_none(origin, tmp_path, remote):
    adopted(origin, tmp_path, remote)
    commit = change(origin, "refactor")
    first = check(clone(origin, tmp_path / "one", commit), remote)
    assert first["calls"] > 0
    second = check(clone(origin, tmp_path / "two", commit), remote)
    assert second["calls"] == 0
    assert verdicts(second) == verdicts(first)
    assert second["exit_code"] == first["exit_code"] == 0
    # the same runner again reads the pointer and takes nothing
    again = check(tmp_path / "two", remote)
    assert again["calls"] == 0
    # the run that took the samples is in the remote as its runner finished it (a sequential
    # check saves its run again once its looks are judged); the runs that took none are not
    record = tmp_path / "one" / ".noisefloor" / "runs" / "fake" / f"{first['candidate']}.json"
    assert remote_object(remote, f"runs/fake/{record.name}") == record.read_bytes()
    for run_id in (second["candidate"], again["candidate"]):
        assert (tmp_path / "two" / ".noisefloor" / "runs" / "fake" / f"{run_id}.json").is_file()
        assert remote_object(remote, f"runs/fake/{run_id}.json") is None


def test_a_warm_runner_reads_the_pointer_and_writes_nothing(origin, tmp_path, remote, monkeypatch):
    adopted(origin, tmp_path, remote)
    runner = clone(origin, tmp_path / "runner", change(origin, "warm"))
    assert check(runner, remote)["calls"] > 0
    for name, value in remote[1].items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(runner)
    opened = open_remote(remote[0])
    store = MirroredStore(runner / ".noisefloor", opened, Branches(("main",), "main"))
    suite = load_suite(runner / "suite.yaml")
    resolved = resolve({}, {}, suite.defaults)
    report = check_suite(store, suite, RunOptions(jobs=2), resolved.rule, design=resolved.design)
    assert (report.exit_code, report.calls) == (0, 0)
    # the pointer, and nothing else: no sample to fetch, no run record pushed
    assert dict(opened.requests) == {"get": 1}
    assert remote_object(remote, f"runs/fake/{report.candidate}.json") is None


def test_a_deepened_baseline_pushes_only_what_it_took(origin, tmp_path, remote, monkeypatch):
    adopted(origin, tmp_path, remote)
    for name, value in remote[1].items():
        monkeypatch.setenv(name, value)
    runner = clone(origin, tmp_path / "deepener")
    monkeypatch.chdir(runner)
    opened = open_remote(remote[0])
    store = MirroredStore(runner / ".noisefloor", opened, Branches(("main",), "main"))
    done = deepen_baseline(
        store, load_suite(runner / "suite.yaml"), 7, jobs=2, executor=executor_of("local")
    )
    assert done.run.calls == 6  # 2 cases from 4 repeats to 7
    # a claim per case on the repeats it takes (no other runner takes them at once), its 6
    # samples, its run record, a pack per case and the pointer: none of the 8 samples the
    # baseline had already is written again
    assert opened.requests["put"] == 2 + 6 + 1 + 2 + 1
    assert (
        remote_object(remote, f"runs/fake/{done.run.run_id}.json")
        == store.run_path("fake", done.run.run_id).read_bytes()
    )


def test_a_fresh_runner_names_the_files_that_moved_from_the_baselines_manifest(
    origin, tmp_path, remote
):
    suite = yaml.safe_load((origin / "suite.yaml").read_text())
    del suite["target"]["fingerprint"]  # the files git tracks make the version: a manifest
    (origin / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    commit_all(origin, "versioned by git")
    adopted(origin, tmp_path, remote)
    assert [k for k in remote_keys(remote) if k.startswith("manifests/")]
    report = check(clone(origin, tmp_path / "runner", change(origin, "moved")), remote)
    assert report["target_change"]["modified"] == ["fake_target.py"]


def test_four_runners_checking_four_commits_at_once(origin, tmp_path, remote):
    adopted(origin, tmp_path, remote)
    commits = [change(origin, f"commit {n}") for n in range(4)]
    runners = [clone(origin, tmp_path / f"runner{n}", c) for n, c in enumerate(commits)]
    started = []
    for runner in runners:
        argv, environ = command(runner, remote, "check", "suite.yaml", "--format", "json")
        started.append(
            subprocess.Popen(
                argv, cwd=runner, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    for process in started:
        out, err = process.communicate(timeout=300)
        assert process.returncode in (0, 1), err.decode()
    # every sample is stored once, and each is one a run record names
    samples = set(sample_keys(remote))
    named = set()
    copy = tmp_path / "audit"
    pulled = noisefloor(origin, remote, "--root", str(copy), "store", "pull", "--all")
    assert pulled.returncode == 0, pulled.stderr
    for run in (copy / "runs" / "fake").glob("*.json"):
        for case in orjson.loads(run.read_bytes())["cases"]:
            named |= {f"{case['sample_dir']}/r{n}.json" for n in range(case["repeats"])}
    assert samples == named
    verified = noisefloor(origin, remote, "--root", str(copy), "store", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # the remote itself, read where it lies: every object sound, nothing copied to a store here
    inspected = noisefloor(origin, remote, "store", "verify", "--remote", "--format", "json")
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr
    found = orjson.loads(inspected.stdout)
    assert (found["files"], found["problems"]) == (len(remote_keys(remote)), [])
    assert not (origin / ".noisefloor").exists()
    for n, commit in enumerate(commits):
        assert check(clone(origin, tmp_path / f"again{n}", commit), remote)["calls"] == 0


def test_two_runners_moving_one_baseline_at_once_one_wins(origin, tmp_path, remote, monkeypatch):
    adopted(origin, tmp_path, remote)
    ours = [clone(origin, tmp_path / f"mover{n}", change(origin, f"m{n}")) for n in range(2)]
    runs = []
    for runner in ours:
        done = noisefloor(runner, remote, "run", "suite.yaml", "--format", "json")
        assert done.returncode == 0, done.stderr
        runs.append(orjson.loads(done.stdout)["run"]["run_id"])
    for name, value in remote[1].items():
        monkeypatch.setenv(name, value)
    stores = [
        MirroredStore(r / ".noisefloor", open_remote(remote[0]), Branches(("main",), "main"))
        for r in ours
    ]
    # both read the pointer before either moves it: the race, made deterministic
    read = [store.baseline("fake") for store in stores]
    assert read[0] is not None and read[0] == read[1]
    stores[0].set_baseline("fake", runs[0])
    with pytest.raises(PointerMoved) as lost:
        stores[1].set_baseline("fake", runs[1])
    assert runs[0] in lost.value.message and "main" in lost.value.message
    assert lost.value.exit_code == 3
    # nothing is lost: the loser's run is in the remote, and the winner's pointer stands
    keys = remote_keys(remote)
    assert {f"runs/fake/{r}.json" for r in runs} <= set(keys)
    runner = clone(origin, tmp_path / "reader")
    shown = noisefloor(runner, remote, "store", "pull", "fake")
    assert runs[0] in shown.stdout, shown.stderr


@pytest.mark.parametrize("remote", ["file"], indirect=True)
def test_two_baseline_set_commands_racing_through_the_cli_one_wins(origin, tmp_path, remote):
    """Both commands read the pointer while the shared directory's pointer lock is held, so
    both move it from the same version once it is released: the second finds it moved."""
    adopted(origin, tmp_path, remote)
    ours = [clone(origin, tmp_path / f"racer{n}", change(origin, f"r{n}")) for n in range(2)]
    runs = []
    for runner in ours:
        done = noisefloor(runner, remote, "run", "suite.yaml", "--format", "json")
        assert done.returncode == 0, done.stderr
        runs.append(orjson.loads(done.stdout)["run"]["run_id"])
    shared = Path(remote[0].removeprefix("file://"))
    with open(shared / "baselines" / "main" / ".fake.json.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        racing = []
        for runner, run_id in zip(ours, runs, strict=True):
            argv, environ = command(runner, remote, "baseline", "set", run_id, "--branch", "main")
            racing.append(
                subprocess.Popen(
                    argv, cwd=runner, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                )
            )
        inode = os.fstat(lock.fileno()).st_ino
        deadline = time.monotonic() + 60
        while _waiting_for(inode) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _waiting_for(inode) == 2, "both commands read the pointer and wait to move it"
        fcntl.flock(lock, fcntl.LOCK_UN)
    ended = [(p.wait(timeout=60), p.stderr.read().decode()) for p in racing if p.stderr]
    assert sorted(code for code, _ in ended) == [0, 3]
    [lost] = [err for code, err in ended if code == 3]
    winner = runs[[code for code, _ in ended].index(0)]
    assert "was moved by" in lost and winner in lost and "Traceback" not in lost
    assert {f"runs/fake/{r}.json" for r in runs} <= set(remote_keys(remote))
    for process in racing:
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _waiting_for(inode: int) -> int:
    """Processes waiting for the lock of one file (Linux: its `->` lines in /proc/locks)."""
    lines = Path("/proc/locks").read_text().splitlines()
    return sum("->" in line and f":{inode} " in line for line in lines)


def test_a_runner_killed_mid_check_leaves_the_next_only_what_is_missing(origin, tmp_path, remote):
    adopted(origin, tmp_path, remote)
    base = set(sample_keys(remote))
    commit = change(origin, "slow")
    runner = clone(origin, tmp_path / "killed", commit)
    argv, environ = command(
        runner, remote, "check", "suite.yaml", "--repeats", "6", NOISEFLOOR_FAKE_SLEEP="0.3"
    )
    process = subprocess.Popen(argv, cwd=runner, env=environ, stderr=subprocess.DEVNULL)
    store = runner / ".noisefloor"
    deadline = time.monotonic() + 120
    taken: set[str] = set()
    while len(taken) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
        found = {p.relative_to(store).as_posix() for p in store.glob("samples/*/*/*/*/*/r*.json")}
        taken = found - base
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    took = set(sample_keys(remote)) - base
    assert 0 < len(took) < 12
    # each sample the killed runner wrote was pushed as it was written (but the one whose push
    # the signal came before)
    assert len(taken - took) <= 1
    report = check(clone(origin, tmp_path / "next", commit), remote, "--repeats", "6")
    assert report["calls"] == 12 - len(took)
    assert len(set(sample_keys(remote)) - base) == 12


def test_the_server_killed_exits_3_naming_the_bucket(origin, tmp_path):
    with S3Server() as doomed:
        bucket = doomed.bucket("nf-doomed")
        gone = (f"s3://{bucket}/team", doomed.env())
        doomed.kill()
        started = time.monotonic()
        done = noisefloor(clone(origin, tmp_path / "stranded"), gone, "check", "suite.yaml")
    assert done.returncode == 3
    assert time.monotonic() - started < 120
    assert bucket in done.stderr and "Traceback" not in done.stderr
    assert "connection refused" in done.stderr


def test_the_server_killed_mid_check_exits_3_and_keeps_every_sample_taken(origin, tmp_path):
    with S3Server() as doomed:
        bucket = doomed.bucket("nf-doomed-later")
        shared = (f"s3://{bucket}/team", doomed.env())
        adopted(origin, tmp_path, shared)
        runner = clone(origin, tmp_path / "stranded", change(origin, "slow"))
        argv, environ = command(
            runner, shared, "check", "suite.yaml", "--repeats", "6", NOISEFLOOR_FAKE_SLEEP="0.3"
        )
        process = subprocess.Popen(
            argv, cwd=runner, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        samples = runner / ".noisefloor" / "samples"
        deadline = time.monotonic() + 120
        while len(list(samples.rglob("r*.json"))) < 8 + 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # the baseline's 8, fetched, and 2 of the candidate's
        doomed.kill()
        started = time.monotonic()
        _, err = process.communicate(timeout=300)
    assert process.returncode == 3, err.decode()
    assert time.monotonic() - started < 120
    said = err.decode()
    assert bucket in said and "Traceback" not in said
    assert len(list(samples.rglob("r*.json"))) >= 10  # every sample taken is kept here


def test_a_baseline_older_than_its_maximum_age_is_warned_of(origin, tmp_path, remote, monkeypatch):
    adopted(origin, tmp_path, remote)
    for name, value in remote[1].items():
        monkeypatch.setenv(name, value)
    store = MirroredStore(
        tmp_path / "fresh", open_remote(remote[0]), Branches(("main",), "main"), max_age_s=0
    )
    assert store.baseline("fake") is not None
    [note] = store.notes
    assert "on branch 'main'" in note and "longer ago than baseline_max_age" in note


def test_offline_checks_from_the_local_copy_alone(origin, tmp_path, remote):
    adopted(origin, tmp_path, remote)
    runner = clone(origin, tmp_path / "runner")
    check(runner, remote)
    dead = ("s3://nf-nowhere/team", {**S3_ENV, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    report = check(runner, dead, "--offline")
    assert (report["exit_code"], report["calls"]) == (0, 0)


def test_a_committed_baseline_pushed_and_pulled(origin, tmp_path, remote):
    runner = clone(origin, tmp_path / "committer")
    local = ("", {})
    done = noisefloor(runner, local, "check", "suite.yaml", "--format", "json")
    assert done.returncode == 0, done.stderr
    pushed = noisefloor(runner, remote, "store", "push")
    assert pushed.returncode == 0, pushed.stderr
    assert "fake:" in pushed.stdout
    run_id = orjson.loads(done.stdout)["candidate"]
    shown = noisefloor(runner, remote, "baseline", "show")
    assert shown.returncode == 0, shown.stderr
    assert f"in {remote[0]}:\n  fake on main: {run_id}  (set " in shown.stdout
    assert "(process " in shown.stdout  # who moved it
    fresh = check(clone(origin, tmp_path / "fresh"), remote)
    assert (fresh["exit_code"], fresh["calls"]) == (0, 0)
    # and back: a store pulled here works with no remote at all
    back = tmp_path / "back"
    pulled = noisefloor(origin, remote, "--root", str(back), "store", "pull", "suite.yaml")
    assert pulled.returncode == 0, pulled.stderr
    # what it copied is counted: the run record and the baseline's 8 samples
    assert ": 9 object(s) copied" in pulled.stdout
    again = noisefloor(
        origin, local, "--root", str(back), "check", "suite.yaml", "--format", "json"
    )
    assert orjson.loads(again.stdout)["calls"] == 0
