"""Which runner takes which missing samples when several need the same ones at once (runners of
one commit adopting together): one claim object per sample directory, moved from the version read.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import orjson

from noisefloor.store.layout import utc_now
from noisefloor.store.remote import Moved, Remote

__all__ = ["Claim", "Claims", "claim_key"]


def claim_key(sample_key: str) -> str:
    """The key of the claims on a sample's directory."""
    return f"claims/{PurePosixPath(sample_key).parent}.json"


def _repeat(sample_key: str) -> int:
    return int(PurePosixPath(sample_key).stem.removeprefix("r"))


@dataclass(frozen=True)
class Claim:
    """Another command's claim on some samples: its object's key, and the claimant's token."""

    key: str
    token: str


def _gone(entry: dict[str, Any]) -> bool:
    """Whether a claim's command ran on this host and runs no more (killed, or stopped by an
    outage): its samples are free to take at once."""
    if entry.get("host") != socket.gethostname() or not isinstance(entry.get("pid"), int):
        return False
    try:
        os.kill(entry["pid"], 0)
    except ProcessLookupError:
        return True
    except OSError:  # it runs, as another user
        return False
    return False


class Claims:
    """Claims on missing samples by one command (`token`), as `who`.

    A sample directory's object lists each command's claim on some of its repeats. A command
    claims the repeats it lacks that no live claim holds, moving the object from the version it
    read (again when another moved it first), and waits for the others. A claim is live until
    its command is known gone (`_gone`), or another command takes it over (`split` with
    `expired`). Objects are never deleted: a claim whose samples all came is never read again,
    since a command claims only samples it lacks.
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

    def split(self, keys: Sequence[str], expired: Collection[str] = ()) -> dict[str, Claim]:
        """Claim the samples at `keys` (all missing here and in the remote), taking over the
        claims of the commands whose tokens are `expired`; those another command holds, each
        with its claim (this command takes the others)."""
        by_dir: dict[str, list[str]] = {}
        for key in keys:
            by_dir.setdefault(claim_key(key), []).append(key)
        theirs: dict[str, Claim] = {}
        for found in self._parallel(
            lambda item: self._claim(item[0], item[1], expired), list(by_dir.items())
        ):
            theirs.update(found)
        return theirs

    def _claim(self, key: str, keys: list[str], expired: Collection[str]) -> dict[str, Claim]:
        while True:
            held = self._remote.get(key)
            entries = _entries(held.data) if held is not None else []
            live = [
                e
                for e in entries
                if e.get("token") not in expired and e.get("token") != self._token and not _gone(e)
            ]
            owner = {r: str(e.get("token")) for e in live for r in e.get("repeats") or []}
            theirs = {k: Claim(key, owner[_repeat(k)]) for k in keys if _repeat(k) in owner}
            mine = sorted(_repeat(k) for k in keys if k not in theirs)
            if not mine:
                return theirs
            own = [e for e in entries if e.get("token") == self._token]
            held_here = {r for e in own for r in e.get("repeats") or []}
            entry = {
                "repeats": sorted(held_here | set(mine)),
                "token": self._token,
                "by": self._who,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "at": utc_now(),
            }
            body = orjson.dumps({"claims": [*live, entry]})
            try:
                self._remote.put_over(key, body, held.version if held is not None else None)
            except Moved:
                now = self._remote.get(key)
                if now is not None and now.data == body:
                    return theirs  # a retried write whose first attempt landed
                continue  # another command claimed at the same moment: read its claim
            return theirs


def _entries(data: bytes) -> list[dict[str, Any]]:
    """The claims of a directory's object (a damaged one holds none: its samples are free)."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return []
    claims = doc.get("claims") if isinstance(doc, dict) else None
    return [e for e in claims if isinstance(e, dict)] if isinstance(claims, list) else []
