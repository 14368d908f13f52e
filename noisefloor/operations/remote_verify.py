"""`store verify --remote`: every object of a remote read where it lies, never copied into the
working copy: each parses, each run's samples are there, packs match them, pointers name runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

import orjson
from pydantic import ValidationError

from noisefloor.model.records import BaselinePointer, RunRecord
from noisefloor.model.verification import Problem, Verified
from noisefloor.store.layout import LOST_MARK
from noisefloor.store.mirrored import MirroredStore
from noisefloor.store.packs import unpack
from noisefloor.targets.base import RawSample

__all__ = ["verify_remote"]

#: Objects read at once, at most, so that a large remote is never held in memory whole.
_BATCH = 256

#: What fixes a wrong object, by kind.
_FIX = {
    "sample": "delete the object: a runner that needs it takes the sample again and pushes it",
    "run": "delete the object, then push the run again from the runner that made it "
    "(`noisefloor store push --remote URL`)",
    "manifest": "delete the object: the next run of that version pushes it again",
    "pack": "delete the object: a fresh runner then fetches that case's samples one by one",
    "baseline pointer": "move it: `noisefloor baseline set RUN --branch BRANCH --remote URL`",
    "claim": "delete the object: a claim only says which runner takes samples needed at once",
}


@dataclass
class _Seen:
    """What the objects read so far say about the others."""

    keys: set[str]
    samples: dict[str, bytes] = field(default_factory=dict)  # key -> sha256 of its bytes
    runs: dict[str, RunRecord] = field(default_factory=dict)  # key -> its record
    problems: list[Problem] = field(default_factory=list)

    def wrong(self, key: str, kind: str, what: str) -> None:
        self.problems.append(Problem(key, kind, what, _FIX[kind]))


def _kind(key: str) -> str | None:
    """The kind of a remote's object from its key; None for a key no command writes."""
    parts = key.split("/")
    if parts[0] == "samples" and parts[-1].startswith("r") and key.endswith(".json"):
        return "sample"
    if parts[0] == "claims" and key.endswith(".json"):
        return "claim"
    shapes = {
        "runs": (3, ".json", "run"),
        "manifests": (2, ".json", "manifest"),
        "packs": (4, ".pack", "pack"),
        "baselines": (3, ".json", "baseline pointer"),
    }
    shape = shapes.get(parts[0])
    if shape is None or len(parts) != shape[0] or not key.endswith(shape[1]):
        return None
    return shape[2]


def _batches(store: MirroredStore, keys: list[str]) -> Iterator[tuple[str, bytes | None]]:
    """Each key with its object's bytes (None: gone since the listing), `_BATCH` at a time."""
    for at in range(0, len(keys), _BATCH):
        chunk = keys[at : at + _BATCH]
        for key, fetched in zip(chunk, store.parallel(store.remote.get, chunk), strict=True):
            yield key, fetched.data if fetched is not None else None


def _read(seen: _Seen, key: str, kind: str, data: bytes) -> None:
    """Read one sample, run record, manifest or pointer as the commands read it."""
    try:
        if kind == "sample":
            RawSample.model_validate(orjson.loads(data))
            seen.samples[key] = hashlib.sha256(data).digest()
        elif kind == "run":
            seen.runs[key] = RunRecord.model_validate_json(data)
        elif kind == "claim":
            doc = orjson.loads(data)
            if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
                seen.wrong(key, kind, "not an object with a list of claims")
        elif kind == "manifest":
            doc = orjson.loads(data)
            if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
                seen.wrong(key, kind, "not an object of file name to digest")
        else:
            doc = orjson.loads(data)
            if not isinstance(doc, dict) or not {"suite", "run_id", "set_at"} <= doc.keys():
                seen.wrong(key, kind, "not an object with suite, run_id and set_at")
                return
            pointer = BaselinePointer(
                suite=doc["suite"], run_id=doc["run_id"], set_at=doc["set_at"]
            )
            _pointer(seen, key, pointer)
    except orjson.JSONDecodeError as exc:
        seen.wrong(key, kind, f"not JSON: {exc}" if data else "empty")
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        seen.wrong(key, kind, f"{where}: {first['msg']}" if where else first["msg"])


def _pointer(seen: _Seen, key: str, pointer: BaselinePointer) -> None:
    suite = key.rsplit("/", 1)[-1].removesuffix(".json")
    run = f"runs/{pointer.suite}/{pointer.run_id}.json"
    if pointer.suite != suite:
        seen.wrong(key, "baseline pointer", f"it names suite {pointer.suite!r}, not {suite!r}")
    elif run not in seen.keys:
        branch = unquote(key.split("/")[1])
        seen.wrong(
            key, "baseline pointer", f"branch {branch!r} names {run}, which the remote lacks"
        )


def _runs_samples(store: MirroredStore, seen: _Seen) -> None:
    """Every sample a run record names is in the remote."""
    for key, run in seen.runs.items():
        lacking = [
            store.key(f)
            for case in run.cases
            for f in store.sample_files(case)
            if store.key(f) not in seen.keys
        ]
        if lacking:
            more = f" and {len(lacking) - 1} more" if len(lacking) > 1 else ""
            seen.wrong(key, "run", f"it names {lacking[0]}{more}, which the remote lacks")


def _pack(store: MirroredStore, seen: _Seen, key: str, data: bytes) -> None:
    """A pack's files are its run's samples of that case, byte for byte."""
    _, suite, run_id, name = key.split("/")
    files = unpack(data)
    if files is None:
        seen.wrong(key, "pack", "not a pack of this version, or cut short")
        return
    run = seen.runs.get(f"runs/{suite}/{run_id}.json")
    case = next((c for c in run.cases if c.case_id == name[: -len(".pack")]), None) if run else None
    if case is None:
        seen.wrong(key, "pack", f"no run record of the remote has its case ({run_id})")
        return
    for file, body in files:
        if file == LOST_MARK:
            continue
        sample = f"{case.sample_dir}/{file}"
        held = seen.samples.get(sample)  # (one missing or unreadable is reported on its own)
        if held is not None and held != hashlib.sha256(body).digest():
            seen.wrong(key, "pack", f"its {file} differs from {sample}")
            return


def verify_remote(store: MirroredStore) -> Verified:
    """Read every object of the store's remote (a listing, then each object by key, in batches;
    nothing is written here): each sample, run record, manifest and pointer parses, each run's
    samples are there, each pack agrees with its run's samples, each pointer names a run there."""
    keys = store.remote.keys("")
    kinds = {key: kind for key in keys if (kind := _kind(key)) is not None}
    seen = _Seen(set(kinds))
    wanted = [k for k, kind in kinds.items() if kind != "pack"]
    for key, data in _batches(store, wanted):
        if data is not None:
            _read(seen, key, kinds[key], data)
    _runs_samples(store, seen)
    for key, data in _batches(store, [k for k, kind in kinds.items() if kind == "pack"]):
        if data is not None:
            _pack(store, seen, key, data)
    return Verified(len(kinds), sorted(seen.problems, key=lambda p: p.rel))
