"""A remote's baseline pointers as documents: one read (a corrupt one refused with its fix), its
age against a maximum, and the error of a move another runner made first, naming who and when.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from noisefloor.errors import PointerMoved, RemoteError
from noisefloor.model.records import BaselinePointer
from noisefloor.store.remote import Fetched

__all__ = ["age_note", "moved_error", "read_pointer"]


def read_pointer(url: str, key: str, data: bytes) -> BaselinePointer:
    """The pointer at `key` of the remote at `url`.

    Raises:
        RemoteError: It does not read as a pointer (never taken for a missing one).
    """
    try:
        doc = orjson.loads(data)
        return BaselinePointer(suite=doc["suite"], run_id=doc["run_id"], set_at=doc["set_at"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise RemoteError(
            f"remote {url}: the baseline pointer {key} is corrupt",
            hint="move it with `noisefloor baseline set RUN --branch BRANCH`",
        ) from None


def age_note(pointer: BaselinePointer, branch: str, max_age_s: float | None) -> str | None:
    """What a report warns of when the pointer was set longer ago than `max_age_s`."""
    if max_age_s is None:
        return None
    set_at = datetime.strptime(pointer.set_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    age = (datetime.now(UTC) - set_at).total_seconds()
    if age <= max_age_s:
        return None
    return (
        f"the baseline of {pointer.suite!r} on branch {branch!r} ({pointer.run_id}) was "
        f"set {age / 3600:.1f} h ago, longer ago than baseline_max_age: refresh it on "
        f"that branch (`noisefloor baseline deepen SUITE`, or a check there)"
    )


def moved_error(
    url: str, suite: str, branch: str, run_id: str, now: Fetched | None
) -> PointerMoved:
    """The error of a move of `suite`'s pointer on `branch` to `run_id` that found it moved by
    another runner, who left it as `now`."""
    who = "another runner"
    if now is not None:
        try:
            doc = orjson.loads(now.data)
            who = (
                f"{doc.get('set_by', 'another runner')} (to {doc.get('run_id')}, "
                f"at {doc.get('set_at')})"
            )
        except orjson.JSONDecodeError:
            pass
    return PointerMoved(
        f"remote {url}: the baseline of {suite!r} on branch {branch!r} was moved "
        f"by {who} while this command moved it to {run_id}",
        hint=f"nothing is lost: {run_id} and its samples are in the remote; compare again, "
        f"or move the pointer deliberately with `noisefloor baseline set {run_id} "
        f"--branch {branch}`",
    )
