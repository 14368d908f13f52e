"""A remote's server is probed for conditional writes before its first write: one that ignores
them is refused (exit 3, naming what it lacks), or served in single-writer mode, where two
racing moves never both succeed; a success is kept per remote and server."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from noisefloor.errors import RemoteError
from noisefloor.store import remote_trust
from noisefloor.store.remote import Fetched, Moved, Remote
from noisefloor.store.remote_trust import SINGLE_WRITER, Trusted, probe


class Memory(Remote):
    """An object store in memory; `careless`: it ignores conditional writes, as s3rver does."""

    def __init__(self, careless: bool = False) -> None:
        super().__init__("s3://memory/p")
        self.objects: dict[str, bytes] = {}
        self.careless = careless
        self._lock = threading.Lock()

    def _version(self, key: str) -> str | None:
        data = self.objects.get(key)
        return None if data is None else hashlib.sha256(data).hexdigest()

    def get(self, key: str) -> Fetched | None:
        self.counted("get")
        with self._lock:
            data = self.objects.get(key)
            return None if data is None else Fetched(data, hashlib.sha256(data).hexdigest())

    def put_new(self, key: str, data: bytes) -> bool:
        self.counted("put")
        with self._lock:
            if key in self.objects and not self.careless:
                return False
            self.objects[key] = data
            return True

    def put_over(self, key: str, data: bytes, version: str | None) -> str:
        self.counted("put")
        with self._lock:
            if self._version(key) != version and not self.careless:
                raise Moved(key)
            self.objects[key] = data
            return hashlib.sha256(data).hexdigest()

    def put_any(self, key: str, data: bytes) -> str:
        self.counted("put")
        with self._lock:
            self.objects[key] = data
            return hashlib.sha256(data).hexdigest()

    def delete(self, key: str) -> None:
        self.counted("delete")
        with self._lock:
            self.objects.pop(key, None)

    def keys(self, prefix: str) -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))


def test_the_probe_finds_what_a_server_lacks_and_leaves_nothing_behind():
    assert probe(Memory()) == []
    careless = Memory(careless=True)
    lacks = probe(careless)
    assert len(lacks) == 2
    assert "If-None-Match" in lacks[0] and "If-Match" in lacks[1]
    assert careless.objects == {}


def test_a_server_that_ignores_conditional_writes_is_refused_before_any_write(tmp_path):
    careless = Memory(careless=True)
    trusted = Trusted(careless, tmp_path / "remotes.json", "conditional")
    assert trusted.get("samples/x/r0.json") is None  # reading probes nothing
    assert careless.requests["put"] == 0
    with pytest.raises(RemoteError) as refused:
        trusted.put_new("samples/x/r0.json", b"1")
    assert "does not honour conditional writes" in refused.value.message
    assert "single-writer" in (refused.value.hint or "") and "MinIO" in (refused.value.hint or "")
    assert refused.value.exit_code == 3
    assert careless.objects == {}  # the scratch object is gone, the sample never written
    assert not (tmp_path / "remotes.json").exists()  # a failure is never cached


def test_a_servers_success_is_probed_once_per_store(tmp_path):
    careful = Memory()
    first = Trusted(careful, tmp_path / "remotes.json", "conditional")
    assert first.put_new("a", b"1") and not first.put_new("a", b"2")
    probed = careful.requests["put"]
    again = Trusted(careful, tmp_path / "remotes.json", "conditional")
    assert again.put_new("b", b"1")
    assert careful.requests["put"] == probed + 1  # the write alone
    elsewhere = Trusted(careful, tmp_path / "other.json", "conditional")
    elsewhere.put_new("c", b"1")
    assert careful.requests["put"] > probed + 2  # another store probes for itself


def test_single_writer_mode_reads_back_and_never_lets_two_moves_both_succeed(tmp_path, monkeypatch):
    monkeypatch.setattr(remote_trust, "SETTLE_S", 0.3)
    careless = Memory(careless=True)
    writers = [Trusted(careless, tmp_path / f"w{n}.json", SINGLE_WRITER) for n in range(2)]
    assert writers[0].put_new("samples/r0.json", b"first")
    assert not writers[1].put_new("samples/r0.json", b"second")  # read before written
    assert careless.objects["samples/r0.json"] == b"first"
    key = "baselines/main/s.json"
    version = writers[0].put_over(key, b"start", None)
    with pytest.raises(Moved):
        writers[1].put_over(key, b"stale", "not-the-version")
    ended: list[BaseException | None] = [None, None]

    def move(n: int) -> None:
        try:
            writers[n].put_over(key, b"moved by %d" % n, version)
        except Moved as exc:
            ended[n] = exc

    threads = [threading.Thread(target=move, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(e is None for e in ended) == 1, ended
    assert careless.objects[key] == b"moved by %d" % ended.index(None)


def test_a_claim_in_single_writer_mode_is_settled_as_a_pointer(tmp_path, monkeypatch):
    monkeypatch.setattr(remote_trust, "SETTLE_S", 0.1)
    careless = Memory(careless=True)
    writer = Trusted(careless, tmp_path / "w.json", SINGLE_WRITER)
    assert writer.put_new("claims/x.json", b"mine") is True
    assert writer.put_new("claims/x.json", b"theirs") is False


def test_the_cache_is_read_whatever_became_of_it(tmp_path: Path):
    cache = tmp_path / "remotes.json"
    cache.write_bytes(b"{damaged")
    trusted = Trusted(Memory(), cache, "conditional")
    assert trusted.put_new("a", b"1")
    assert b"honours_conditional_writes" in cache.read_bytes()
