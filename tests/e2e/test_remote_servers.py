"""The remote store against other servers than moto: s3rver (which ignores conditional writes:
refused, or written in single-writer mode), Azurite (`az://` as the docs write it) and a GCS
stand-in speaking the XML API (a pointer moved by its generation), each on loopback."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson
import pytest

from bench.servers.gcs_xml import GcsXmlServer
from noisefloor.errors import PointerMoved, RemoteError
from noisefloor.store.branches import Branches
from noisefloor.store.mirrored import MirroredStore
from noisefloor.store.remote import Moved
from noisefloor.store.remote_trust import SINGLE_WRITER, Trusted
from noisefloor.store.remote_url import open_remote
from tests.remote_runners import (
    adopted,
    change,
    check,
    clone,
    noisefloor,
    remote_keys,
    remote_object,
    sample_keys,
)


def test_s3rver_is_refused_before_a_write_naming_what_it_lacks(origin, tmp_path, on_s3rver):
    done = noisefloor(clone(origin, tmp_path / "runner"), on_s3rver, "check", "suite.yaml")
    assert done.returncode == 3, done.stderr
    said = done.stderr
    assert "does not honour conditional writes" in said and on_s3rver[0] in said
    assert "If-None-Match" in said and "If-Match" in said
    assert "MinIO" in said and "NOISEFLOOR_REMOTE_WRITES=single-writer" in said
    assert "Traceback" not in said
    # the probe's scratch object is gone, and nothing else was written
    assert remote_keys(on_s3rver) == []


def _racers(tmp_path: Path, remote: tuple[str, dict[str, str]], mode: str) -> list[MirroredStore]:
    """Two runners' stores on `remote`, each through its own trusted view of the server."""
    return [
        MirroredStore(
            tmp_path / f"racer{n}",
            Trusted(open_remote(remote[0]), tmp_path / f"racer{n}" / "remotes.json", mode),
            Branches(("main",), "main"),
        )
        for n in range(2)
    ]


def _race(stores: list[MirroredStore], runs: list[str]) -> list[BaseException | None]:
    """Both stores move the pointer at once, from the version each read; what each raised."""
    assert stores[0].baseline("fake") == stores[1].baseline("fake")
    ended: list[BaseException | None] = [None, None]

    def move(n: int) -> None:
        try:
            stores[n].set_baseline("fake", runs[n])
        except Exception as exc:
            ended[n] = exc

    threads = [threading.Thread(target=move, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return ended


def _two_runs(origin: Path, tmp_path: Path, remote: tuple[str, dict[str, str]]) -> list[str]:
    runs = []
    for n in range(2):
        runner = clone(origin, tmp_path / f"maker{n}", change(origin, f"run {n}"))
        done = noisefloor(runner, remote, "run", "suite.yaml", "--format", "json")
        assert done.returncode == 0, done.stderr
        runs.append(orjson.loads(done.stdout)["run"]["run_id"])
    return runs


@pytest.mark.quality  # (40 s: each move waits for its read-back)
def test_s3rver_in_single_writer_mode_never_lets_two_moves_both_succeed(
    origin, tmp_path, on_s3rver, monkeypatch
):
    remote = (on_s3rver[0], {**on_s3rver[1], "NOISEFLOOR_REMOTE_WRITES": SINGLE_WRITER})
    first = adopted(origin, tmp_path, remote)
    fresh = check(clone(origin, tmp_path / "fresh"), remote)
    assert (fresh["calls"], fresh["baseline"]) == (0, first["candidate"])
    runs = _two_runs(origin, tmp_path, remote)
    for name, value in remote[1].items():
        monkeypatch.setenv(name, value)
    for _ in range(2):  # racing moves from one version read: one wins, the other is told
        ended = _race(_racers(tmp_path / f"round{_}", remote, SINGLE_WRITER), runs)
        lost = [e for e in ended if e is not None]
        assert len(lost) == 1 and isinstance(lost[0], PointerMoved), ended
        winner = runs[ended.index(None)]
        pointer = orjson.loads(remote_object(remote, "baselines/main/fake.json") or b"")
        assert pointer["run_id"] == winner
    # a move from a version read before another's landed is refused too
    late = _racers(tmp_path / "late", remote, SINGLE_WRITER)
    late[0].baseline("fake"), late[1].baseline("fake")
    late[0].set_baseline("fake", runs[0])
    with pytest.raises(PointerMoved):
        late[1].set_baseline("fake", runs[1])


@pytest.mark.quality  # (15 s of runners in subprocesses)
def test_azurite_adopts_serves_a_fresh_clone_and_one_of_two_racing_moves_loses(
    origin, tmp_path, on_azurite, monkeypatch
):
    assert on_azurite[0].startswith("az://") and on_azurite[0].count("/") == 3
    first = adopted(origin, tmp_path, on_azurite)
    fresh = check(clone(origin, tmp_path / "fresh"), on_azurite)
    assert (fresh["exit_code"], fresh["calls"], fresh["baseline"]) == (0, 0, first["candidate"])
    assert len(sample_keys(on_azurite)) == 8
    runs = _two_runs(origin, tmp_path, on_azurite)
    for name, value in on_azurite[1].items():
        monkeypatch.setenv(name, value)
    ended = _race(_racers(tmp_path, on_azurite, "conditional"), runs)
    lost = [e for e in ended if e is not None]
    assert len(lost) == 1 and isinstance(lost[0], PointerMoved), ended
    assert "was moved by" in lost[0].message
    # a container that does not exist is named, not taken for an empty remote
    missing = ("az://nf-no-such-container/team", on_azurite[1])
    done = noisefloor(clone(origin, tmp_path / "lost"), missing, "check", "suite.yaml")
    assert done.returncode == 3
    assert "no such container 'nf-no-such-container'" in done.stderr


@pytest.mark.quality  # (runners in subprocesses; the write path itself is tested by default)
def test_a_gcs_pointer_moves_by_its_generation(origin, tmp_path, monkeypatch):
    with GcsXmlServer() as gcs:
        remote = (f"gs://{gcs.bucket('nf-gcs')}/team", gcs.env())
        first = adopted(origin, tmp_path, remote)
        runs = _two_runs(origin, tmp_path, remote)
        before = len(gcs.writes)
        runner = tmp_path / "maker0"
        moved = noisefloor(runner, remote, "baseline", "set", runs[0], "--branch", "main")
        assert moved.returncode == 0, moved.stderr
        # the pointer's write named the generation the command read, never an ETag alone
        pointer = "team/baselines/main/fake.json"
        [(_, generation)] = [w for w in gcs.writes[before:] if w[0] == pointer]
        assert generation is not None and int(generation) > 0
        assert (
            orjson.loads(remote_object(remote, "baselines/main/fake.json") or b"")["run_id"]
            == runs[0]
            != first["candidate"]
        )
        for name, value in remote[1].items():
            monkeypatch.setenv(name, value)
        ended = _race(_racers(tmp_path, remote, "conditional"), runs)
        assert sum(isinstance(e, PointerMoved) for e in ended) == 1, ended
        # the probe ran once per store root and server: a second command there probes no more
        probes = [w for w in gcs.writes if w[0].startswith("team/probes/")]
        again = noisefloor(tmp_path / "maker1", remote, "baseline", "set", runs[1])
        assert again.returncode == 0, again.stderr
        assert [w for w in gcs.writes if w[0].startswith("team/probes/")] == probes


def test_a_plain_http_endpoint_is_used_for_each_cloud(monkeypatch, azurite):
    """Azurite's endpoint and a GCS stand-in are plain HTTP: the client is let use it."""
    container = azurite.container(f"nf-http-{os.getpid()}")
    for name, value in azurite.env().items():
        monkeypatch.setenv(name, value)
    assert open_remote(f"az://{container}/p").put_new("k", b"1") is True
    with GcsXmlServer() as gcs:
        for name, value in gcs.env().items():
            monkeypatch.setenv(name, value)
        bucket = open_remote(f"gs://{gcs.bucket('nf-http')}/p")
        assert bucket.put_new("k", b"1") is True
        # a pointer moves from the generation read, and a stale generation is refused
        bucket.put_over("pointer", b"one", None)
        read = bucket.get("pointer")
        assert read is not None and read.version.isdigit()
        bucket.put_over("pointer", b"two", read.version)
        with pytest.raises(Moved):
            bucket.put_over("pointer", b"stale", read.version)
        assert gcs.writes[-2:] == [("p/pointer", read.version), ("p/pointer", read.version)]
        with pytest.raises(RemoteError) as missing:
            open_remote("gs://nf-no-bucket/p").get("k")
        assert "no such bucket 'nf-no-bucket'" in missing.value.message


def test_an_unknown_access_key_reads_as_its_cause(origin, tmp_path, on_s3rver):
    """s3rver's own answer to a key id it does not know (InvalidAccessKeyId, a 403)."""
    wrong = (on_s3rver[0], {**on_s3rver[1], "AWS_ACCESS_KEY_ID": "NF-NO-SUCH-KEY"})
    done = noisefloor(clone(origin, tmp_path / "runner"), wrong, "check", "suite.yaml")
    assert done.returncode == 3
    assert f"remote {on_s3rver[0]}: unknown access key" in done.stderr
    assert "Traceback" not in done.stderr
