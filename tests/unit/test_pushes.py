"""Pushes in the background: every object lands by `settle` (and a suite's lock is released only
then), no more fly than the pool has connections, a failure is raised by the next put and by
`settle`, and one connection pushes before `put` returns."""

from __future__ import annotations

import threading
import time

import pytest

from noisefloor.errors import RemoteError
from noisefloor.store.branches import Branches
from noisefloor.store.mirrored import MirroredStore
from noisefloor.store.pushes import Pushes
from noisefloor.store.remote import Fetched, Remote


class SlowRemote(Remote):
    """A remote in memory whose writes take a while, counting the most in flight at once; a
    write of a key in `refused` fails as an unreachable remote's would."""

    def __init__(self, refused: frozenset[str] = frozenset()) -> None:
        super().__init__("memory://slow")
        self.objects: dict[str, bytes] = {}
        self.flying = self.most = 0
        self._refused = refused
        self._guard = threading.Lock()

    def get(self, key: str) -> Fetched | None:
        data = self.objects.get(key)
        return Fetched(data, "v") if data is not None else None

    def put_new(self, key: str, data: bytes) -> bool:
        with self._guard:
            self.flying += 1
            self.most = max(self.most, self.flying)
        time.sleep(0.01)
        with self._guard:
            self.flying -= 1
            if key in self._refused:
                raise self.failed(key, "connection refused")
            if key in self.objects:
                return False
            self.objects[key] = data
            return True

    def put_over(self, key: str, data: bytes, version: str | None) -> str:
        raise NotImplementedError("pushes write immutable objects only")

    def put_any(self, key: str, data: bytes) -> str:
        raise NotImplementedError("pushes write immutable objects only")

    def delete(self, key: str) -> None:
        raise NotImplementedError("pushes write immutable objects only")

    def keys(self, prefix: str) -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))


def test_every_object_lands_by_settle_with_no_more_in_flight_than_the_connections():
    remote = SlowRemote()
    pushes = Pushes(remote, 4)
    for n in range(40):
        pushes.put(f"samples/s/r{n}.json", b"%d" % n)
    pushes.settle()
    pushes.close()
    assert remote.objects == {f"samples/s/r{n}.json": b"%d" % n for n in range(40)}
    assert 1 < remote.most <= 4


def test_a_failed_push_is_raised_by_settle_and_by_the_next_put():
    remote = SlowRemote(refused=frozenset({"samples/s/r3.json"}))
    pushes = Pushes(remote, 4)
    for n in range(8):
        pushes.put(f"samples/s/r{n}.json", b"x")
    with pytest.raises(RemoteError, match="connection refused"):
        pushes.settle()
    with pytest.raises(RemoteError, match=r"samples/s/r3\.json"):
        pushes.put("samples/s/r9.json", b"x")
    assert "samples/s/r9.json" not in remote.objects
    with pytest.raises(RemoteError, match="connection refused"):
        pushes.close()


def test_once_a_push_failed_those_queued_are_not_tried():
    """A remote that fails (frozen, gone) would hold each queued push for its own timeouts."""
    remote = SlowRemote(refused=frozenset(f"samples/s/r{n}.json" for n in range(4)))
    tried = []
    put_new = remote.put_new
    remote.put_new = lambda key, data: tried.append(key) or put_new(key, data)  # type: ignore[method-assign]
    pushes = Pushes(remote, 2)
    for n in range(4):  # two in flight, two queued (room for twice the connections)
        pushes.put(f"samples/s/r{n}.json", b"x")
    with pytest.raises(RemoteError, match="connection refused"):
        pushes.close()
    assert len(tried) == 2, tried


def test_one_connection_pushes_each_object_before_put_returns():
    remote = SlowRemote()
    pushes = Pushes(remote, 1)
    pushes.put("samples/s/r0.json", b"x")
    assert remote.objects == {"samples/s/r0.json": b"x"}


def _written(store: MirroredStore, names: range) -> list[str]:
    """Samples of suite `s` written through the store; their keys."""
    keys = [f"samples/s/t/e0/c/k/r{n}.json" for n in names]
    for key in keys:
        store.write_sample(store.root / key, {"output": "x"})
    return keys


def test_a_suites_lock_is_released_once_its_samples_landed(tmp_path):
    remote = SlowRemote()
    store = MirroredStore(tmp_path, remote, Branches(("main",), "main"), pushes=4)
    with store.lock("s"):
        keys = _written(store, range(12))
        assert any(t.name.startswith("noisefloor-push") for t in threading.enumerate())
    assert sorted(remote.objects) == sorted(keys)
    # and the pool's threads are gone with the lock
    assert not any(t.name.startswith("noisefloor-push") for t in threading.enumerate())


def test_a_push_that_failed_under_the_lock_stops_its_release(tmp_path):
    remote = SlowRemote(refused=frozenset({"samples/s/t/e0/c/k/r5.json"}))
    store = MirroredStore(tmp_path, remote, Branches(("main",), "main"), pushes=4)
    with pytest.raises(RemoteError, match="connection refused"), store.lock("s"):
        _written(store, range(6))
    assert (tmp_path / "samples/s/t/e0/c/k/r5.json").is_file()  # kept here all the same


def test_the_next_command_of_the_suite_pushes_what_a_failed_one_left(tmp_path):
    """An outage stops a command before its samples landed: the next command of the suite on
    this runner pushes them, whatever it does, even taking no sample at all."""
    down = SlowRemote(refused=frozenset(f"samples/s/t/e0/c/k/r{n}.json" for n in range(6)))
    failed = MirroredStore(tmp_path, down, Branches(("main",), "main"), pushes=4)
    with pytest.raises(RemoteError), failed.lock("s"):
        keys = _written(failed, range(6))
    assert (tmp_path / "unpushed" / "s.keys").is_file()
    back = SlowRemote()
    later = MirroredStore(tmp_path, back, Branches(("main",), "main"), pushes=4)
    with later.lock("s"):
        pass
    assert sorted(back.objects) == sorted(keys)
    assert not (tmp_path / "unpushed" / "s.keys").exists()
    # a command whose pushes all landed leaves no list behind
    with later.lock("s"):
        _written(later, range(6, 8))
    assert not (tmp_path / "unpushed" / "s.keys").exists()
