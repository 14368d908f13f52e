"""Baselines per branch in a remote: the branches a command reads a pointer from and the one it
moves, each with why; the repository's default branch; each pointer's key, and who moved one.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from noisefloor.settings import DEFAULT_BRANCH
from noisefloor.store.layout import check_name

__all__ = [
    "Branch",
    "Branches",
    "branches_of",
    "current_branch",
    "default_branch",
    "mover",
    "pointer_key",
]

#: Branches containing a detached HEAD whose distance from it is counted, at most.
_COUNTED = 32
#: The CI's name of the branch being built, each with what it is.
_BUILT = (
    ("GITHUB_HEAD_REF", "the pull request's branch (GITHUB_HEAD_REF)"),
    ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "the merge request's branch"),
    ("CI_COMMIT_BRANCH", "the branch CI builds (CI_COMMIT_BRANCH)"),
)


@dataclass(frozen=True)
class Branch:
    """A branch, and why a command reads or moves its pointer (as the report says it)."""

    name: str
    why: str


@dataclass(frozen=True)
class Branches:
    """Where a command's baseline pointers are in a remote.

    `read`: the branches whose pointer a check compares with, the first one found wins (the
    branch it merges into; else its own, then the default branch). `write`: the branch whose
    pointer `baseline set`, an adoption or `--set-baseline` moves. `why`: each branch's reason.
    """

    read: tuple[str, ...]
    write: str
    why: Mapping[str, str] = field(default_factory=dict, compare=False)

    def reason(self, branch: str) -> str:
        """Why this command reads or moves `branch`'s pointer."""
        return self.why.get(branch, "named for this command")


def pointer_key(suite: str, branch: str) -> str:
    """The key of a suite's baseline pointer on a branch (any branch name, slashes included)."""
    return f"baselines/{quote(branch, safe='')}/{check_name(suite, 'suite name')}.json"


def _git(cwd: str, *args: str) -> str | None:
    """One git command's stdout, stripped; None when it fails or git is missing."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.decode(errors="replace").strip()
    return out if done.returncode == 0 else None


def current_branch(environ: Mapping[str, str], cwd: str) -> Branch | None:
    """The branch being built: a pull or merge request's source branch as CI names it, else the
    branch git has checked out in `cwd`, else (a detached HEAD outside CI) the branch that
    contains its commit; None outside git, or when no branch contains the commit."""
    for name, what in _BUILT:
        if environ.get(name):
            return Branch(environ[name], what)
    checked_out = _git(cwd, "symbolic-ref", "--short", "-q", "HEAD")
    if checked_out:
        return Branch(checked_out, "the branch checked out")
    if environ.get("CI"):
        return None  # a CI that names no branch builds something else (a tag, a merge commit)
    return _containing(environ, cwd)


def _containing(environ: Mapping[str, str], cwd: str) -> Branch | None:
    """The branch whose tip is nearest the detached HEAD among those that contain it (local
    ones, then the remotes' own); the default branch first among equals."""
    listed = _git(
        cwd,
        "for-each-ref",
        "--contains",
        "HEAD",
        "--format=%(refname)",
        "refs/heads",
        "refs/remotes",
    )
    if not listed:
        return None
    found: dict[str, str] = {}
    for ref in listed.splitlines():
        if ref.startswith("refs/heads/"):
            found.setdefault(ref.removeprefix("refs/heads/"), ref)
        elif not ref.endswith("/HEAD"):
            _, _, name = ref.removeprefix("refs/remotes/").partition("/")
            if name:
                found.setdefault(name, ref)
    if not found:
        return None
    default = default_branch(environ, cwd).name
    # a git call per branch: past a few dozen, the default branch first, then by name
    ahead = dict.fromkeys(found, 0)
    if len(found) <= _COUNTED:
        ahead = {
            name: int(_git(cwd, "rev-list", "--count", f"HEAD..{ref}") or 0)
            for name, ref in found.items()
        }
    name = min(found, key=lambda b: (ahead[b], b != default, b))
    short = found[name].removeprefix("refs/heads/").removeprefix("refs/remotes/")
    commit = _git(cwd, "rev-parse", "--short", "HEAD") or "HEAD"
    return Branch(name, f"the branch containing the detached commit {commit} ({short})")


def default_branch(environ: Mapping[str, str], cwd: str, suite: str | None = None) -> Branch:
    """The default branch: NOISEFLOOR_DEFAULT_BRANCH, else the suite's `defaults.default_branch`,
    else the repository's (its remote's HEAD, else `init.defaultBranch`, else whichever of main
    and master it has), else `main`."""
    if environ.get("NOISEFLOOR_DEFAULT_BRANCH"):
        return Branch(
            environ["NOISEFLOOR_DEFAULT_BRANCH"], "the default branch (NOISEFLOOR_DEFAULT_BRANCH)"
        )
    if suite:
        return Branch(suite, "the default branch (the suite's defaults.default_branch)")
    heads = _git(
        cwd, "for-each-ref", "--format=%(symref)", "refs/remotes/origin/HEAD", "refs/remotes/*/HEAD"
    )
    for ref in (heads or "").splitlines():
        _, _, name = ref.removeprefix("refs/remotes/").partition("/")
        if name:
            return Branch(
                name,
                f"the repository's default branch ({ref.removeprefix('refs/remotes/').split('/')[0]}/HEAD)",
            )
    configured = _git(cwd, "config", "init.defaultBranch")
    if configured:
        return Branch(configured, "the default branch (git's init.defaultBranch)")
    for name in ("main", "master"):
        for ref in (f"refs/heads/{name}", f"refs/remotes/origin/{name}"):
            if _git(cwd, "rev-parse", "-q", "--verify", ref) is not None:
                return Branch(name, f"the default branch (the repository has {name})")
    return Branch(
        DEFAULT_BRANCH, f"the default branch ({DEFAULT_BRANCH}: the repository names none)"
    )


def branches_of(
    environ: Mapping[str, str],
    cwd: str,
    *,
    branch: str | None = None,
    baseline_branch: Branch | None = None,
    suite_default: str | None = None,
) -> Branches:
    """The branches a command reads and moves: `baseline_branch` alone when set, else the
    current branch then the default; it moves `branch`, else the current, else the default."""
    current = current_branch(environ, cwd)
    default = default_branch(environ, cwd, suite_default)
    why: dict[str, str] = {}
    if baseline_branch is not None:
        read: tuple[str, ...] = (baseline_branch.name,)
        why[baseline_branch.name] = baseline_branch.why
    else:
        chosen = [b for b in (current, default) if b is not None]
        read = tuple(dict.fromkeys(b.name for b in chosen))
        for b in reversed(chosen):
            why[b.name] = b.why
    write = branch or (current or default).name
    if branch:
        why.setdefault(branch, "--branch")
    else:
        why.setdefault(write, (current or default).why)
    return Branches(read, write, why)


def mover(environ: Mapping[str, str]) -> str:
    """Who is moving a pointer, as another runner's error names it: the CI job, else the host."""
    if environ.get("GITHUB_RUN_ID"):
        repo = environ.get("GITHUB_REPOSITORY", "")
        return f"GitHub Actions run {environ['GITHUB_RUN_ID']} of {repo}".strip()
    if environ.get("CI_JOB_URL"):
        return f"GitLab job {environ['CI_JOB_URL']}"
    return f"{socket.gethostname()} (process {os.getpid()})"
