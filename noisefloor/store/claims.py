"""Which runner takes which missing samples when several need the same ones at once (runners of
one commit adopting together): a claim per sample directory in the remote, written only if absent.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import orjson

from noisefloor.store.layout import utc_now
from noisefloor.store.remote import Moved, Remote

__all__ = ["Claim", "Claims", "claim_key"]


def claim_key(sample_key: str) -> str:
    """The key of the claim on a sample directory's repeats from this sample's on."""
    path = PurePosixPath(sample_key)
    return f"claims/{path.parent}/{path.stem}.json"


def _repeat(sample_key: str) -> int:
    return int(PurePosixPath(sample_key).stem.removeprefix("r"))


@dataclass(frozen=True)
class Claim:
    """Another runner's claim on some samples: its key, and the version read (to take it over)."""

    key: str
    version: str


class Claims:
    """Claims on missing samples, made by one command (`token`) as `who`.

    A command claims the repeats of a sample directory it lacks, from the first one on; a claim
    there already covers the repeats it names, which the command then waits for, and claims the
    rest from the first one left. Claims are never deleted: one whose samples all came is
    never read again, since a command claims only samples it lacks.
    """

    def __init__(
        self,
        remote: Remote,
        who: str,
        parallel: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]],
    ) -> None:
        self._remote = remote
        self._who = who
        self._token = uuid.uuid4().hex
        self._parallel = parallel

    def _body(self, repeats: list[int]) -> bytes:
        doc = {"repeats": repeats, "by": self._who, "token": self._token, "at": utc_now()}
        return orjson.dumps(doc)

    def split(self, keys: Sequence[str]) -> dict[str, Claim]:
        """Claim the samples at `keys` (all missing here and in the remote); those another
        command claimed first, each with its claim (this command takes the others)."""
        by_dir: dict[str, list[str]] = {}
        for key in keys:
            by_dir.setdefault(str(PurePosixPath(key).parent), []).append(key)
        theirs: dict[str, Claim] = {}
        for found in self._parallel(self._claim_dir, list(by_dir.values())):
            theirs.update(found)
        return theirs

    def _claim_dir(self, keys: list[str]) -> dict[str, Claim]:
        todo = sorted(keys, key=_repeat)
        theirs: dict[str, Claim] = {}
        while todo:
            key = claim_key(todo[0])
            if self._remote.put_new(key, self._body([_repeat(k) for k in todo])):
                return theirs
            held = self._remote.get(key)
            doc = _doc(held.data) if held is not None else {}
            if doc.get("token") == self._token:
                return theirs  # a retried write of this command's own claim
            covered = set(doc.get("repeats") or []) | {_repeat(todo[0])}
            claim = Claim(key, held.version if held is not None else "")
            theirs.update((k, claim) for k in todo if _repeat(k) in covered)
            todo = [k for k in todo if _repeat(k) not in covered]
        return theirs

    def take_over(self, claim: Claim, keys: Sequence[str]) -> bool:
        """Claim the samples at `keys` whose claimant stopped delivering them, from the version
        of its claim read; False when another command took it over first."""
        try:
            self._remote.put_over(
                claim.key, self._body(sorted(_repeat(k) for k in keys)), claim.version or None
            )
        except Moved:
            return False
        return True


def _doc(data: bytes) -> dict[str, Any]:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}
