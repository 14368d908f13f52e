"""CI runners of a remote store as the end-to-end tests drive them: fresh clones of the team's
repository, the real command line in a subprocess with the remote set, and the test's own view of
the remote (a listing, an object)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from noisefloor.store.remote import Remote
from noisefloor.store.remote_url import open_remote
from tests.builders import commit_all, git


def change(origin: Path, tag: str) -> str:
    """Commit a change to the target's code that leaves its answers as they were; the commit."""
    with (origin / "fake_target.py").open("a") as handle:
        handle.write(f"\n# {tag}\n")
    return commit_all(origin, f"change {tag}")


def clone(origin: Path, where: Path, commit: str | None = None) -> Path:
    """A fresh runner: a clone of `origin` (at `commit`), with no store of its own."""
    git(origin.parent, "clone", "-q", str(origin), str(where))
    if commit is not None:
        git(where, "checkout", "-q", commit)
    assert not (where / ".noisefloor").exists()
    return where


def command(runner: Path, remote: tuple[str, dict[str, str]], *args: str, **env: str) -> list[Any]:
    """The argv and environment of `noisefloor ARGS` run in `runner` with the remote set."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("NOISEFLOOR_", "AWS_", "AZURE_", "GOOGLE_"))
    }
    environ.update({**remote[1], "NOISEFLOOR_REMOTE": remote[0], **env})
    return [[sys.executable, "-m", "noisefloor", *args], environ]


def noisefloor(
    runner: Path, remote: tuple[str, dict[str, str]], *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    argv, environ = command(runner, remote, *args, **env)
    return subprocess.run(
        argv, cwd=runner, env=environ, capture_output=True, text=True, timeout=300
    )


def check(runner: Path, remote: tuple[str, dict[str, str]], *args: str) -> dict[str, Any]:
    """`check suite.yaml` in `runner`: its JSON report, with its exit code."""
    done = noisefloor(runner, remote, "check", "suite.yaml", "--format", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    report: dict[str, Any] = orjson.loads(done.stdout)
    assert report["exit_code"] == done.returncode
    return report


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {case["case_id"]: case["verdict"] for case in report["cases"]}


@contextlib.contextmanager
def reached(remote: tuple[str, dict[str, str]]) -> Iterator[Remote]:
    """The remote, opened in this process with its environment (the test's own view of it)."""
    saved = dict(os.environ)
    os.environ.update(remote[1])
    try:
        yield open_remote(remote[0])
    finally:
        os.environ.clear()
        os.environ.update(saved)


def remote_keys(remote: tuple[str, dict[str, str]]) -> list[str]:
    """Every key the remote holds (a listing: the test's view, never a command's)."""
    with reached(remote) as opened:
        return opened.keys("")


def remote_object(remote: tuple[str, dict[str, str]], key: str) -> bytes | None:
    """The bytes of one object of the remote, or None."""
    with reached(remote) as opened:
        fetched = opened.get(key)
    return fetched.data if fetched is not None else None


def adopted(origin: Path, tmp_path: Path, remote: tuple[str, dict[str, str]]) -> dict[str, Any]:
    """The default branch's first check, on a runner of its own: adopts into the remote."""
    report = check(clone(origin, tmp_path / "adopter"), remote)
    assert report["adopted"] is True
    return report


def sample_keys(remote: tuple[str, dict[str, str]]) -> list[str]:
    return [k for k in remote_keys(remote) if k.startswith("samples/") and k.endswith(".json")]
