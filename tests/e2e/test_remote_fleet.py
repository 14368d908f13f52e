"""A fleet of CI runners on one remote, through the real command line in subprocesses: detached
clones of a repository whose default branch is master, runners adopting one commit at once, a
server out mid-check or frozen, and the branch a check compares with and why."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.servers.object_faults import ObjectFaultProxy
from bench.servers.object_store import S3Server
from tests.builders import git
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
)


def at_once(runners: list[Path], remote: tuple[str, dict[str, str]], *args: str) -> list[Any]:
    """`check suite.yaml --format json ARGS` started in every runner at once; each report."""
    started = []
    for runner in runners:
        argv, environ = command(runner, remote, "check", "suite.yaml", "--format", "json", *args)
        started.append(
            subprocess.Popen(
                argv, cwd=runner, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    reports = []
    for process in started:
        out, err = process.communicate(timeout=300)
        assert process.returncode in (0, 1), err.decode()
        assert b"Traceback" not in err
        reports.append(orjson.loads(out))
    return reports


def pointer_of(remote: tuple[str, dict[str, str]], branch: str) -> str | None:
    data = remote_object(remote, f"baselines/{branch}/fake.json")
    return None if data is None else str(orjson.loads(data)["run_id"])


@pytest.mark.quality  # (eight checks of changed commits in subprocesses)
@pytest.mark.parametrize("remote", ["s3"], indirect=True)
def test_four_detached_clones_of_a_master_repository_compare_with_masters_baseline(
    origin, tmp_path, remote
):
    git(origin, "branch", "-M", "master")  # git's own default branch
    first = adopted(origin, tmp_path, remote)
    assert pointer_of(remote, "master") == first["candidate"]
    assert pointer_of(remote, "main") is None
    commits = [change(origin, f"commit {n}") for n in range(8)]
    runners = [clone(origin, tmp_path / f"runner{n}", c) for n, c in enumerate(commits)]
    together = at_once(runners[:4], remote)
    one_by_one = [check(runner, remote) for runner in runners[4:]]
    for report in together + one_by_one:
        assert report["adopted"] is False and report["baseline"] == first["candidate"]
        branch = report["baseline_branch"]
        assert branch["name"] == "master" and "detached commit" in branch["why"], branch
    assert pointer_of(remote, "master") == first["candidate"]  # none moved it
    calls = sum(r["calls"] for r in together)
    assert 0 < calls <= 2 * sum(r["calls"] for r in one_by_one)


@pytest.mark.quality  # (four adoptions in subprocesses, on each kind of remote)
def test_four_runners_adopting_one_commit_at_once_take_each_sample_once(origin, tmp_path, remote):
    runners = [clone(origin, tmp_path / f"runner{n}") for n in range(4)]
    reports = at_once(runners, remote)
    assert [r["exit_code"] for r in reports] == [0] * 4
    baseline = pointer_of(remote, "main")
    assert baseline is not None and {r["baseline"] for r in reports} == {baseline}
    # one adopted; each other lost the race to move the pointer, or found it moved, and
    # compared with the winner's run
    assert sum(r["adopted"] for r in reports) == 1
    for report in reports:
        if report["candidate"] != baseline:
            assert report["adopted"] is False
            assert "was moved by" in report["baseline_branch"]["race"]
    # no sample taken twice: the calls made are the samples the remote holds, the baseline's
    assert sum(r["calls"] for r in reports) == len(sample_keys(remote)) == 8
    inspected = noisefloor(runners[0], remote, "store", "verify", "--remote", "--format", "json")
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr


@pytest.mark.quality  # (an outage mid-check waits out the retries)
def test_a_server_out_mid_check_leaves_no_hole_once_the_check_is_run_again(origin, tmp_path):
    with S3Server() as s3, ObjectFaultProxy(s3.url, "latency", rate=0.0) as proxy:
        remote = (
            f"s3://{s3.bucket('nf-outage')}/team",
            {**s3.env(), "AWS_ENDPOINT_URL": proxy.url},
        )
        adopted(origin, tmp_path, remote)
        runner = clone(origin, tmp_path / "runner", change(origin, "slow"))
        argv, environ = command(
            runner, remote, "check", "suite.yaml", "--repeats", "8", NOISEFLOOR_FAKE_SLEEP="0.2"
        )
        process = subprocess.Popen(argv, cwd=runner, env=environ, stderr=subprocess.PIPE)
        samples = runner / ".noisefloor" / "samples"
        deadline = time.monotonic() + 120
        while len(list(samples.rglob("r*.json"))) < 8 + 4 and time.monotonic() < deadline:
            time.sleep(0.05)  # the baseline's 8, fetched, and 4 of the candidate's
        proxy.down = True
        _, err = process.communicate(timeout=120)
        assert process.returncode == 3, err.decode()
        assert b"Traceback" not in err
        proxy.down = False
        again = check(runner, remote, "--repeats", "8")
        inspected = noisefloor(runner, remote, "store", "verify", "--remote", "--format", "json")
        assert inspected.returncode == 0, inspected.stdout + inspected.stderr
        assert orjson.loads(inspected.stdout)["problems"] == []
        # every sample the runner holds is in the remote, the rerun's record with them
        store = runner / ".noisefloor"
        held = {p.relative_to(store).as_posix() for p in samples.rglob("r*.json")}
        assert held <= set(remote_keys(remote))
        assert remote_object(remote, f"runs/fake/{again['candidate']}.json") is not None


@pytest.mark.quality  # (waits out the timeouts, 20 s)
def test_a_frozen_server_fails_within_35_s_saying_timed_out(origin, tmp_path):
    with S3Server() as s3:
        remote = (f"s3://{s3.bucket('nf-frozen')}/team", s3.env())
        adopted(origin, tmp_path, remote)
        runner = clone(origin, tmp_path / "stranded")
        os.killpg(s3.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            done = noisefloor(runner, remote, "check", "suite.yaml")
            took = time.monotonic() - started
        finally:
            os.killpg(s3.pid, signal.SIGCONT)
    assert done.returncode == 3, done.stderr
    assert "timed out" in done.stderr and remote[0] in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert took < 35, took


@pytest.mark.quality  # (six commands in subprocesses)
@pytest.mark.parametrize("remote", ["s3"], indirect=True)
def test_a_check_on_a_branch_compares_with_its_own_pointer_else_the_one_it_merges_into(
    origin, tmp_path, remote
):
    main_run = adopted(origin, tmp_path, remote)["candidate"]
    git(origin, "checkout", "-q", "-b", "feature")
    change(origin, "feature work")
    runner = clone(origin, tmp_path / "feature")
    git(runner, "checkout", "-q", "feature")
    made = noisefloor(runner, remote, "run", "suite.yaml", "--format", "json")
    assert made.returncode == 0, made.stderr
    feature_run = orjson.loads(made.stdout)["run"]["run_id"]
    moved = noisefloor(runner, remote, "baseline", "set", feature_run)
    assert moved.returncode == 0, moved.stderr
    assert (pointer_of(remote, "feature"), pointer_of(remote, "main")) == (feature_run, main_run)
    own = check(runner, remote)
    assert own["baseline"] == feature_run
    assert own["baseline_branch"] == {"name": "feature", "why": "the branch checked out"}
    merging = noisefloor(
        runner, remote, "check", "suite.yaml", "--format", "json", GITHUB_BASE_REF="main"
    )
    assert merging.returncode in (0, 1), merging.stderr
    report = orjson.loads(merging.stdout)
    assert report["baseline"] == main_run
    assert report["baseline_branch"]["name"] == "main"
    assert "GITHUB_BASE_REF" in report["baseline_branch"]["why"]
    # and a note says it, before the report
    said = merging.stderr.splitlines()
    assert "note: baseline of branch 'main': the branch the pull request merges into" in said[0]


def test_a_different_record_under_the_same_run_id_is_never_replaced(origin, tmp_path, remote):
    runner = clone(origin, tmp_path / "runner")
    made = noisefloor(runner, remote, "run", "suite.yaml", "--format", "json")
    assert made.returncode == 0, made.stderr
    run_id = orjson.loads(made.stdout)["run"]["run_id"]
    key = f"runs/fake/{run_id}.json"
    pushed = remote_object(remote, key)
    assert pushed is not None
    local = runner / ".noisefloor" / key
    record = orjson.loads(local.read_bytes())
    local.write_bytes(orjson.dumps({**record, "label": "rewritten here"}))
    done = noisefloor(runner, remote, "store", "push")
    assert done.returncode == 0, done.stderr
    assert f"another record under run id {run_id}" in done.stderr
    assert "never replaced" in done.stderr
    assert remote_object(remote, key) == pushed
