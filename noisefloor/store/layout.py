"""What lies where under a store root: safe names, the kind of each file, a sample's presence,
and the mark of repeats the infrastructure lost; no store object needed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from datetime import UTC, datetime
from typing import Any

import orjson

from noisefloor.errors import StoreError
from noisefloor.names import SAFE_NAME

__all__ = [
    "DERIVED",
    "LOST_MARK",
    "check_name",
    "file_kind",
    "has_sample",
    "lost_to_infra",
    "short_hash",
    "utc_now",
]

_SAFE = re.compile(SAFE_NAME)

#: The kinds of derived file: named by their inputs, rebuilt by their task when missing.
DERIVED = ("scores", "bands", "verdicts", "reports")


def utc_now() -> str:
    """The current UTC time as ISO-8601 with microseconds and a Z."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def short_hash(obj: Any, length: int = 16) -> str:
    """A hex digest of the canonical compact JSON of `obj`."""
    raw = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(raw).hexdigest()[:length]


def has_sample(path: str) -> bool:
    """Whether a sample file is on disk with content: an empty one (a write the kernel never
    flushed before the machine went down), or a directory or a symlink loop in its place,
    counts as missing. A string path: this runs over every sample of a run."""
    try:
        found = os.stat(path)
    except OSError:
        return False
    return found.st_size > 0 and stat.S_ISREG(found.st_mode)


#: Beside the samples of a directory, once one of them is an infrastructure error: a run then
#: reads which of its repeats the infrastructure lost (`lost_to_infra`), and reads nothing in
#: the directories without it. A `.done` file: only its existence counts (`store verify`).
LOST_MARK = "infra.done"


def lost_to_infra(file: str) -> bool:
    """Whether a sample file on disk holds an infrastructure error: a repeat that measured
    nothing (a file that does not read is no such error: reading it reports it)."""
    try:
        with open(file, "rb") as handle:
            data = orjson.loads(handle.read())
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(data, dict) and data.get("outcome") == "error:infra"


#: The kind of each file under a store root, by its first path component.
_KINDS = {
    "samples": "sample",
    **{kind: "derived" for kind in DERIVED},
    "runs": "run",
    "baselines": "baseline pointer",
    "labels": "label",
    "epochs": "epochs",
    "manifests": "manifest",
    "locks": "lock",
    ".gitignore": "gitignore",
}


def file_kind(rel: str) -> str:
    """The kind of a store file from its path relative to the root ("sample", "derived", "run",
    "baseline pointer", "label", "epochs", "manifest", "lock", "gitignore", "doit db",
    "ledger"); "other" for anything else."""
    head = rel.split("/", 1)[0]
    if rel.rsplit("/", 1)[-1] == ".gitignore":
        return "gitignore"
    if head.startswith("doit.sqlite"):
        return "doit db"
    if head.startswith("ledger.sqlite"):
        return "ledger"
    return _KINDS.get(head, "other")


def check_name(name: str, what: str) -> str:
    """`name`, refused unless it is a safe file name (`names.SAFE_NAME`)."""
    if not _SAFE.fullmatch(name) or name in (".", ".."):
        raise StoreError(f"{what} {name!r} is not a safe file name")
    return name
