"""Baselines per branch in a remote: the branches a command reads a pointer from and the one it
moves, each pointer's key, and who moved one (a CI job, else the host and process).
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from noisefloor.store.layout import check_name

__all__ = ["Branches", "current_branch", "mover", "pointer_key"]


@dataclass(frozen=True)
class Branches:
    """Where a command's baseline pointers are in a remote.

    `read`: the branches whose pointer a check compares with, the first one found wins (the
    branch it merges into; else its own, then the default branch). `write`: the branch whose
    pointer `baseline set`, an adoption or `--set-baseline` moves.
    """

    read: tuple[str, ...]
    write: str


def pointer_key(suite: str, branch: str) -> str:
    """The key of a suite's baseline pointer on a branch (any branch name, slashes included)."""
    return f"baselines/{quote(branch, safe='')}/{check_name(suite, 'suite name')}.json"


def current_branch(environ: Mapping[str, str], cwd: str) -> str | None:
    """The branch being built: a pull or merge request's source branch as CI names it, else the
    branch git has checked out in `cwd`; None on a detached HEAD outside CI, or outside git."""
    for name in ("GITHUB_HEAD_REF", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_BRANCH"):
        if environ.get(name):
            return environ[name]
    try:
        done = subprocess.run(
            ["git", "symbolic-ref", "--short", "-q", "HEAD"],
            cwd=cwd,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    name = done.stdout.decode(errors="replace").strip()
    return name if done.returncode == 0 and name else None


def mover(environ: Mapping[str, str]) -> str:
    """Who is moving a pointer, as another runner's error names it: the CI job, else the host."""
    if environ.get("GITHUB_RUN_ID"):
        repo = environ.get("GITHUB_REPOSITORY", "")
        return f"GitHub Actions run {environ['GITHUB_RUN_ID']} of {repo}".strip()
    if environ.get("CI_JOB_URL"):
        return f"GitLab job {environ['CI_JOB_URL']}"
    return f"{socket.gethostname()} (process {os.getpid()})"
