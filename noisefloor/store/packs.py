"""A baseline case's samples as one object of a remote, so that a fresh runner fetches a case's
deep pool in one request: its files' bytes, unchanged, behind a JSON line of names and lengths.
"""

from __future__ import annotations

import orjson

from noisefloor.store.layout import check_name

__all__ = ["pack", "pack_key", "unpack"]

#: The first line's format: bumped whenever the layout of a pack changes meaning.
PACK_VERSION = 1


def pack_key(suite: str, run_id: str, case_id: str) -> str:
    """The key of one case's pack of one run: immutable, as the run and its samples are."""
    parts = (check_name(suite, "suite name"), check_name(run_id, "run id"))
    return f"packs/{parts[0]}/{parts[1]}/{check_name(case_id, 'case id')}.pack"


def pack(files: list[tuple[str, bytes]]) -> bytes:
    """The files (a name in the case's sample directory, its bytes) as one pack."""
    head = {"version": PACK_VERSION, "files": [[name, len(data)] for name, data in files]}
    return orjson.dumps(head) + b"\n" + b"".join(data for _, data in files)


def unpack(data: bytes) -> list[tuple[str, bytes]] | None:
    """The files of a pack, each as it was; None when `data` is no pack of this version, or is
    cut short (it is then fetched sample by sample)."""
    line, _, body = data.partition(b"\n")
    try:
        head = orjson.loads(line)
        if head["version"] != PACK_VERSION:
            return None
        names = [(str(name), int(size)) for name, size in head["files"]]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    if sum(size for _, size in names) != len(body):
        return None
    files, at = [], 0
    for name, size in names:
        if "/" in name or name in (".", ".."):
            return None
        files.append((name, body[at : at + size]))
        at += size
    return files
