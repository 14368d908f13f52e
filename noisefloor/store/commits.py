"""The newest commit of a repository that holds a version's files: its tracked files, for a
version that digests the work tree, or the content of its `fingerprint:` globs' files, for one
narrowed to them.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from noisefloor.store.fingerprint import git_output, labelled, work_tree

__all__ = ["COMMITS_SEARCHED", "commit_holding", "commit_with_content", "glob_matches"]

#: How many of a repository's newest commits are looked through for a version.
COMMITS_SEARCHED = 500
#: The modes of a regular file in a git tree, whose blob is the file's content.
_FILE_MODES = ("100644", "100755")


def _trees(top: str, limit: int) -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    """The newest `limit` commits of every branch, newest first, each with its tree's entries:
    (path from the top, mode, blob id). One git command per commit."""
    listed = git_output(["rev-list", "--all", f"--max-count={limit}"], top)
    for sha in os.fsdecode(listed or b"").split():
        out = git_output(["ls-tree", "-r", "-z", "--full-tree", sha], top)
        if out is None:
            continue
        entries = []
        for entry in os.fsdecode(out).split("\0"):
            meta, _, path = entry.partition("\t")
            if meta:
                mode, _kind, blob = meta.split(" ")
                entries.append((path, mode, blob))
        yield sha, entries


def commit_holding(
    manifest: dict[str, str],
    cwd: Path,
    base_dir: Path,
    exclude: Sequence[Path] = (),
    *,
    limit: int = COMMITS_SEARCHED,
) -> str | None:
    """The newest commit of the repository around `cwd` whose tracked files are exactly
    `manifest` (as `fingerprint.tracked_files` lists them), or None: a version taken from files
    no commit holds as they were, or older than the `limit` newest commits of every branch."""
    tree = work_tree(cwd, exclude)
    if tree is None:
        return None
    top, real_top, skipped = tree
    base = os.path.relpath(os.path.realpath(base_dir), real_top)
    below = tuple(f"{s}/" for s in skipped)
    for sha, entries in _trees(top, limit):
        held = {
            path: f"{mode} {blob}"
            for path, mode, blob in entries
            if path not in skipped and not path.startswith(below)
        }
        if labelled(held, base) == manifest:
            return sha
    return None


def commit_with_content(
    entries: dict[str, str],
    globs: Sequence[str],
    cwd: Path,
    base_dir: Path,
    *,
    limit: int = COMMITS_SEARCHED,
) -> str | None:
    """The newest commit of the repository around `cwd` in which `globs` (relative to
    `base_dir`) match exactly the files `entries` labels, each with the content its sha256
    gives (as `fingerprint.code_fingerprint` digests a narrowed version), or None: outside a
    work tree, or no commit of the newest `limit` holds them so."""
    tree = work_tree(cwd, ())
    if tree is None:
        return None
    top, real_top, _ = tree
    base = Path(os.path.relpath(os.path.realpath(base_dir), real_top)).as_posix()
    prefix = "" if base == "." else f"{base}/"
    digests: dict[str, str | None] = {}
    for sha, listed in _trees(top, limit):
        matched = {
            label: (mode, blob)
            for path, mode, blob in listed
            if path.startswith(prefix)
            and any(glob_matches(g, label := path[len(prefix) :]) for g in globs)
        }
        if matched.keys() != entries.keys():
            continue
        if all(
            mode in _FILE_MODES and _content_digest(top, blob, digests) == entries[label]
            for label, (mode, blob) in matched.items()
        ):
            return sha
    return None


def _content_digest(top: str, blob: str, known: dict[str, str | None]) -> str | None:
    """The sha256 of a blob's content (each blob read once), None when git cannot read it."""
    if blob not in known:
        data = git_output(["cat-file", "blob", blob], top)
        known[blob] = hashlib.sha256(data).hexdigest() if data is not None else None
    return known[blob]


def glob_matches(pattern: str, path: str) -> bool:
    """Whether `glob.glob(pattern, recursive=True)` run where `path` is relative to would list
    it: `**` as a whole part spans any directories, other parts match one name each by
    `fnmatch`, and a name starting with `.` only where its part does too."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    return _matches(parts, path.split("/"))


def _matches(pattern: list[str], names: list[str]) -> bool:
    if not pattern:
        return not names
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        for skipped in range(len(names) + 1):
            if skipped and names[skipped - 1].startswith("."):
                return False
            if _matches(rest, names[skipped:]):
                return True
        return False
    # a part before the last names a directory, so never a path's last name (its file)
    if len(names) <= bool(rest) or not fnmatch.fnmatchcase(names[0], head):
        return False
    if names[0].startswith(".") and not head.startswith("."):
        return False
    return _matches(rest, names[1:])
