"""Real git repositories for tests: no user or system configuration, a fixed author, and no
repository above the test's temporary directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def isolate_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the machine's git configuration, and any repository around `tmp_path`, out."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def git(repo: Path, *args: str) -> str:
    """Run one git command in `repo`; its stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode()


def commit_all(repo: Path, message: str = "commit") -> str:
    """Commit every file of `repo` (initialising it first when needed); the new commit's id."""
    if not (repo / ".git").exists():
        git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def worktrees(repo: Path) -> list[str]:
    """The work trees git knows of for `repo`, the main one first."""
    listed = git(repo, "worktree", "list", "--porcelain")
    return [
        line.removeprefix("worktree ")
        for line in listed.splitlines()
        if line.startswith("worktree ")
    ]
