"""Each kind of remote keeps the two promises the store rests on, against a real server: an
immutable object is written once (the first writer wins), and a pointer moves only from the
version read; a remote that cannot answer is exit 3 naming its URL and the cause."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.servers.object_store import S3Server
from noisefloor.errors import RemoteError
from noisefloor.store.remote import Moved, Remote
from noisefloor.store.remote_url import open_remote

_buckets = itertools.count()


@pytest.fixture(params=["s3", "file"])
def remote(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Remote:
    if request.param == "file":
        return open_remote(f"file://{tmp_path / 'shared'}")
    server: S3Server = request.getfixturevalue("s3")
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    return open_remote(f"s3://{server.bucket(f'nf-obj-{os.getpid()}-{next(_buckets)}')}/p")


def test_an_immutable_object_is_written_once_and_the_first_writer_wins(remote):
    assert remote.get("samples/x/r0.json") is None
    assert remote.put_new("samples/x/r0.json", b'{"first": 1}') is True
    assert remote.put_new("samples/x/r0.json", b'{"second": 2}') is False
    got = remote.get("samples/x/r0.json")
    assert got is not None and got.data == b'{"first": 1}'


def test_writers_racing_for_one_key_leave_exactly_one_winner(remote):
    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda n: remote.put_new("runs/s/r.json", b"%d" % n), range(8)))
    assert won.count(True) == 1
    got = remote.get("runs/s/r.json")
    assert got is not None and got.data == b"%d" % won.index(True)


def test_a_pointer_moves_only_from_the_version_read(remote):
    key = "baselines/main/s.json"
    remote.put_over(key, b"one", None)
    with pytest.raises(Moved):
        remote.put_over(key, b"again", None)  # "absent" no longer holds
    read = remote.get(key)
    assert read is not None
    remote.put_over(key, b"two", read.version)
    with pytest.raises(Moved):
        remote.put_over(key, b"stale", read.version)  # another moved it since
    now = remote.get(key)
    assert now is not None and now.data == b"two"
    assert remote.keys("baselines/") == [key]


def test_writers_moving_one_pointer_from_one_version_leave_exactly_one_winner(remote):
    key = "baselines/main/s.json"
    remote.put_over(key, b"start", None)
    read = remote.get(key)
    assert read is not None

    def move(n: int) -> bool:
        try:
            remote.put_over(key, b"moved by %d" % n, read.version)
        except Moved:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(move, range(8)))
    assert won.count(True) == 1
    now = remote.get(key)
    assert now is not None and now.data == b"moved by %d" % won.index(True)


def test_a_bucket_that_does_not_exist_is_named_not_taken_for_an_empty_one(s3, monkeypatch):
    for name, value in s3.env().items():
        monkeypatch.setenv(name, value)
    remote = open_remote("s3://nf-no-such-bucket/p")
    with pytest.raises(RemoteError) as failed:
        remote.get("baselines/main/s.json")
    assert "s3://nf-no-such-bucket/p" in failed.value.message
    assert "no such bucket" in failed.value.message


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://host/x", "not a remote URL"),
        ("s3:///prefix", "no bucket"),
        ("file://relative/x", "absolute path"),
    ],
    ids=["scheme", "bucket", "relative-file"],
)
def test_a_url_that_names_no_remote_is_refused_with_the_forms_it_takes(url, says):
    with pytest.raises(RemoteError) as refused:
        open_remote(url)
    assert says in refused.value.message and refused.value.hint


def _running(pid: int) -> bool:
    """Whether process `pid` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_s3_server_dies_with_a_worker_killed_before_it_could_stop_it():
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from bench.servers.object_store import S3Server\n"
            "server = S3Server().__enter__(); print(server.pid, flush=True); time.sleep(300)",
        ],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
    ) as starter:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline())
        assert _running(pid)
        starter.kill()  # SIGKILL: no `with` block is left, no fixture's teardown runs
    deadline = time.monotonic() + 30
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    orphaned = _running(pid)
    if orphaned:
        os.killpg(pid, signal.SIGKILL)  # this test's failure leaves no server behind either
    assert not orphaned
