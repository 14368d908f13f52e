"""The remote store's fault trial at CI size: one trial of every fault an object store's front
end shows (latency, 500s, 503 SlowDown, resets, cut uploads, answers lost after the write), of
each outage (out mid-push, frozen), and of each refusal worded as its cause."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bench.fault_trials import cli_run, has_traceback, remote
from bench.servers.object_faults import OBJECT_FAULTS, ObjectFaultProxy
from bench.servers.object_store import S3Server


def test_one_trial_of_every_remote_fault_is_clean(tmp_path: Path) -> None:
    tallies = remote.fault_trials(1, tmp_path)
    assert [t.trials for t in tallies] == [1] * len(OBJECT_FAULTS)
    for tally in tallies:
        assert tally.clean, (tally.name, tally.notes)
        served = next(iter(tally.figures.values()))
        assert int(served) > 0, f"{tally.name}: no fault was served"


@pytest.mark.quality  # (a frozen server is waited out: 20 s)
def test_one_trial_of_each_outage_loses_nothing(tmp_path: Path) -> None:
    """The server out mid-push, then frozen mid-check: each check fails or passes cleanly, the
    frozen one within the bound saying "timed out", and once the server is back a rerun
    leaves every sample in the remote and `store verify --remote` clean."""
    tallies = remote.outage_trials(1, tmp_path)
    assert [t.name for t in tallies] == ["remote, outage mid-push", "remote, frozen server"]
    for tally in tallies:
        assert tally.trials == 1 and tally.clean, (tally.name, tally.notes)


def test_writes_whose_answers_were_lost_are_found_landed_not_taken_for_a_race(
    tmp_path: Path,
) -> None:
    """Every PUT lands and its answer is lost: the retry meets the object it wrote (412). A
    sample, a run record and the pointer are each found to be this command's own."""
    suite = remote.project(tmp_path / "project")
    with S3Server() as s3, ObjectFaultProxy(s3.url, "lost_answer", rate=1.0, burst=1) as proxy:
        url = f"s3://{s3.bucket('nf-lost-answers')}/team"
        env = {**s3.env(), "AWS_ENDPOINT_URL": proxy.url, "NOISEFLOOR_REMOTE": url}
        done = cli_run("check", suite, "--format", "json", root=tmp_path / "store", env=env)
        assert done.returncode == 0, done.stderr
        assert proxy.faults["lost_answer"] > 0
        report = json.loads(done.stdout)
        assert report["adopted"] is True
        again = cli_run("check", suite, "--format", "json", root=tmp_path / "fresh", env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["baseline"] == report["candidate"]


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("denied", "access denied (403)"),
        ("slow_down", "throttled (503 SlowDown) past its retries"),
        pytest.param(
            "bad_signature",
            "bad signature: the secret key does not match the access key id",
            marks=pytest.mark.quality,  # (each cause's wording is unit-tested by default)
        ),
        pytest.param(
            "skewed",
            "clock skew: this machine's clock differs too much from the server's",
            marks=pytest.mark.quality,
        ),
    ],
    ids=["403", "throttled", "bad-signature", "clock-skew"],
)
def test_a_remote_that_refuses_every_time_exits_3_naming_it_and_the_cause(
    tmp_path: Path, fault: str, cause: str
) -> None:
    suite = remote.project(tmp_path / "project")
    with S3Server() as s3, ObjectFaultProxy(s3.url, fault, rate=1.0, burst=100) as proxy:
        url = f"s3://{s3.bucket('nf-refusing')}/team"
        env = {**s3.env(), "AWS_ENDPOINT_URL": proxy.url, "NOISEFLOOR_REMOTE": url}
        started = time.monotonic()
        done = cli_run("check", suite, root=tmp_path / "store", env=env)
    assert time.monotonic() - started < 120
    assert done.returncode == 3, done.stderr
    assert f"remote {url}: {cause}" in done.stderr
    assert not has_traceback(done.stderr)
