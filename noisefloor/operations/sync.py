"""`store push` and `store pull`: a store's runs and baselines moved to the remote a team shares
(a committed `.noisefloor/` adopted into it), and baselines, or everything, brought back here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import orjson

from noisefloor.model.records import BaselinePointer
from noisefloor.store.mirrored import MirroredStore
from noisefloor.store.store import Store

__all__ = ["Pulled", "Pushed", "RemotePointer", "pull_store", "push_store", "remote_pointers"]


@dataclass
class Pushed:
    """What `push_store` wrote: runs whose record was new to the remote, objects written, and
    the pointers moved (suite, run id)."""

    runs: int = 0
    objects: int = 0
    pointers: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Pulled:
    """What `pull_store` brought here: each suite's baseline, and the objects copied."""

    baselines: list[BaselinePointer] = field(default_factory=list)
    objects: int = 0


@dataclass(frozen=True)
class RemotePointer:
    """A baseline pointer of the remote: its branch, suite and run, when and by whom it moved."""

    branch: str
    suite: str
    run_id: str
    set_at: str
    set_by: str


def remote_pointers(store: MirroredStore) -> list[RemotePointer]:
    """Every baseline pointer of the remote, by branch and suite (a listing, for `baseline show`;
    one that does not read is shown as such)."""
    keys = [k for k in store.remote.keys("baselines/") if k.count("/") == 2]
    found = []
    for key, fetched in zip(keys, store.parallel(store.remote.get, keys), strict=True):
        if fetched is None:
            continue
        try:
            doc = orjson.loads(fetched.data)
            run_id, set_at, set_by = doc["run_id"], doc["set_at"], doc.get("set_by", "")
        except (orjson.JSONDecodeError, KeyError, TypeError):
            run_id, set_at, set_by = "(corrupt)", "", ""
        _, branch, name = key.split("/")
        found.append(RemotePointer(unquote(branch), Path(name).stem, run_id, set_at, set_by))
    return found


def push_store(store: MirroredStore, suites: list[str] | None = None) -> Pushed:
    """Push every run of the local store (of `suites` only, when named: its samples, manifest
    and record, each only if the remote lacks it), then point the write branch's pointers at
    the local baselines."""
    done = Pushed()
    for suite, run_id in store.runs():
        if suites and suite not in suites:
            continue
        written = store.push_run(store.load_run(suite, run_id))
        done.runs += written > 0
        done.objects += written
    for pointer in store.baselines():
        if suites and pointer.suite not in suites:
            continue
        if store.move_pointer(pointer.suite, pointer.run_id):
            done.pointers.append((pointer.suite, pointer.run_id))
    return done


def pull_store(store: MirroredStore, suites: list[str], everything: bool = False) -> Pulled:
    """Fetch the baseline of each suite named (of the read branches), with its run and samples;
    `everything`: first copy every object of the remote that is missing here (a listing: for
    an audit, `store verify` of the copy, or a move off the remote), and pull every suite with
    a pointer on the read branches."""
    done = Pulled()
    copied = store.copied
    if everything:
        keys = store.remote.keys("")
        # a branch's pointer is no local file, and a pack holds samples copied on their own
        shared = ("baselines/", "packs/")
        wanted = [k for k in keys if not k.startswith(shared) and not _here(store, k)]
        for key, fetched in zip(wanted, store.parallel(store.remote.get, wanted), strict=True):
            if fetched is not None:
                store.write_bytes(store.root / key, fetched.data)
                done.objects += 1
        found = {
            Path(key).stem
            for key in keys
            if key.startswith("baselines/") and unquote(key.split("/")[1]) in store.branches.read
        }
        suites = sorted({*suites, *found})
    for suite in suites:
        pointer = store.baseline(suite)
        if pointer is not None:
            done.baselines.append(pointer)
    done.objects += store.copied - copied
    return done


def _here(store: Store, key: str) -> bool:
    return os.path.lexists(store.root / key)
