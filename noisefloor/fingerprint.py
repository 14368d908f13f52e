"""The code part of a target's version: content hashes of the files the target runs.

Labels are paths relative to the suite's base directory (or labels like `git:`), never absolute.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from noisefloor.errors import TargetConfigError

__all__ = ["GIT_LABEL", "code_fingerprint", "fingerprint_digest", "hash_file"]

#: The label of the entry that stands for the state of the enclosing git work tree.
GIT_LABEL = "git:"

_CHUNK = 1 << 20


def hash_file(path: Path | str) -> str:
    """The sha256 hex digest of a file's content, read in 1 MiB chunks.

    Args:
        path: The file to hash.

    Returns:
        The hex digest.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _is_within(path: str, directory: str) -> bool:
    try:
        return os.path.commonpath([path, directory]) == directory
    except ValueError:
        return False


def _relative_label(path: str, base_dir: Path) -> str | None:
    """`path` relative to `base_dir` with forward slashes, or None when it lies outside."""
    base = os.path.abspath(base_dir)
    candidates = [(os.path.abspath(path), base)]
    candidates.append((os.path.realpath(path), os.path.realpath(base)))
    for file_path, directory in candidates:
        if _is_within(file_path, directory):
            return Path(os.path.relpath(file_path, directory)).as_posix()
    return None


def _glob_fingerprint(base_dir: Path, globs: Sequence[str]) -> dict[str, str]:
    base = os.path.abspath(base_dir)
    result: dict[str, str] = {}
    for pattern in globs:
        matches = glob.glob(pattern, root_dir=base, recursive=True)
        files = [m for m in matches if os.path.isfile(os.path.join(base, m))]
        if not files:
            raise TargetConfigError(
                f"code glob {pattern!r} matches no file",
                where=f"relative to {base_dir}",
                hint="fix the pattern or remove it from the target's code globs",
            )
        for match in files:
            full = os.path.normpath(os.path.join(base, match))
            label = _relative_label(full, base_dir)
            if label is None:
                label = Path(os.path.relpath(full, base)).as_posix()
            result[label] = hash_file(full)
    return result


def _argv_files(base_dir: Path, argv: Sequence[str], cwd: Path) -> dict[str, str]:
    result: dict[str, str] = {}
    for element in argv:
        if not element or "{{" in element:
            continue
        full = element if os.path.isabs(element) else os.path.join(os.path.abspath(cwd), element)
        try:
            if not os.path.isfile(full):
                continue
            digest = hash_file(full)
        except (OSError, ValueError):
            continue
        label = _relative_label(os.path.normpath(full), base_dir)
        result[label if label is not None else element] = digest
    return result


def _git(args: list[str], cwd: str) -> bytes | None:
    """Output of one git command, or None when git is missing or the command fails."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(cwd: Path, exclude_dirs: Sequence[Path] = ()) -> str | None:
    """A digest of the committed tree, uncommitted changes and untracked files around `cwd`.

    Args:
        cwd: A directory, possibly inside a git work tree.
        exclude_dirs: Directories whose untracked files are left out (e.g. a store root).

    Returns:
        The sha256 hex digest, or None when git is missing or `cwd` is not in a work tree.
    """
    top_out = _git(["rev-parse", "--show-toplevel"], str(cwd))
    if top_out is None:
        return None
    top = os.fsdecode(top_out.rstrip(b"\n"))
    if not top or not os.path.isdir(top):
        return None
    digest = hashlib.sha256()
    tree = _git(["rev-parse", "--verify", "--quiet", "HEAD^{tree}"], top)
    digest.update(b"tree\0" + (tree.strip() if tree is not None else b"(no commit)") + b"\0")
    if tree is not None:
        diff = _git(
            ["diff", "HEAD", "--binary", "--no-color", "--no-ext-diff", "--no-textconv"], top
        )
        digest.update(b"diff\0" + (diff if diff is not None else b"(diff failed)") + b"\0")
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z"], top) or b""
    excluded = [os.path.realpath(d) for d in exclude_dirs]
    digest.update(b"untracked\0")
    for name in sorted(n for n in untracked.split(b"\0") if n):
        full = os.path.join(top, os.fsdecode(name))
        if any(_is_within(os.path.realpath(full), d) for d in excluded):
            continue
        try:
            content = hash_file(full) if os.path.isfile(full) else "(not a file)"
        except OSError:
            content = "(unreadable)"
        digest.update(name + b"\0" + content.encode("ascii") + b"\0")
    return digest.hexdigest()


def code_fingerprint(
    *,
    base_dir: Path,
    globs: Sequence[str] | None,
    argv: Sequence[str],
    cwd: Path,
    exclude_dirs: Sequence[Path] = (),
) -> dict[str, str]:
    """Content hashes of the code a target runs, independent of the machine it runs on.

    With `globs`, exactly the matching files count. Without, the files named by the argument
    vector count, plus the state of the git work tree around `cwd` when there is one.

    Args:
        base_dir: The directory labels are relative to (the suite's directory).
        globs: Glob patterns relative to `base_dir` (`**` allowed); None or empty for automatic.
        argv: The unrendered argument vector template; elements with placeholders are skipped.
        cwd: The directory the target runs in; relative argv elements are resolved against it.
        exclude_dirs: Directories whose untracked files the git entry ignores (e.g. a store root
            inside the work tree, which would otherwise change the version on every run).

    Returns:
        A dict from label (relative path with forward slashes, or `git:`) to sha256 hex digest,
        sorted by label.

    Raises:
        TargetConfigError: A glob matches no file.
    """
    if globs:
        result = _glob_fingerprint(base_dir, globs)
    else:
        result = _argv_files(base_dir, argv, cwd)
        state = git_state(cwd, exclude_dirs)
        if state is not None:
            result[GIT_LABEL] = state
    return dict(sorted(result.items()))


def fingerprint_digest(fp: dict[str, str]) -> str:
    """One sha256 hex digest for a whole fingerprint.

    Args:
        fp: A fingerprint from `code_fingerprint`.

    Returns:
        The full-length hex digest of its sorted, compact JSON.
    """
    data = json.dumps(fp, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()
