"""A git ref checked out in a temporary worktree under the store root, for the baseline arm of `ab`
and a check's concurrent control: removed on the way out (Ctrl-C and SIGTERM included), and at
the next start when a kill left one; the suite's target built there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from noisefloor.errors import NoisefloorError, StoreError, UsageError
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import build_target
from noisefloor.targets.source import BuiltTarget

__all__ = ["WORKTREES", "Checkout", "built_at", "checked_out"]

#: The directory under the store root that holds the checkouts, each beside its lock file.
WORKTREES = "worktrees"
#: The lock taken while checkouts are claimed or cleaned, in `WORKTREES`.
_CLAIMS = ".claims"


@dataclass(frozen=True)
class Checkout:
    """A commit checked out beside the work tree that holds the suite."""

    ref: str
    """The ref as the user named it."""
    sha: str
    """The commit it named when the checkout was made."""
    top: Path
    """The top of the work tree the suite lies in, symlinks resolved."""
    path: Path
    """The checkout."""

    def mirror(self, path: Path) -> Path:
        """The place in the checkout that `path` has in the work tree; a path outside the work
        tree stays as it is."""
        try:
            inside = Path(os.path.realpath(path)).relative_to(self.top)
        except ValueError:
            return path
        return self.path / inside


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """One git command, never through a shell."""
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, errors="replace", check=False
        )
    except FileNotFoundError:
        raise NoisefloorError(
            "git is not installed (or not on PATH): `ab` checks the baseline ref out with git",
            hint="install git, or compare against a stored run with `noisefloor check`",
        ) from None


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """git's own words on a failure: its last line on stderr."""
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else f"git exited {done.returncode}"


def _toplevel(directory: Path) -> Path:
    done = _git(["rev-parse", "--show-toplevel"], directory)
    if done.returncode != 0 or not done.stdout.strip():
        raise UsageError(
            f"not inside a git work tree ({_said(done)})",
            where=str(directory),
            hint="`ab` compares the working tree with a git ref: keep the suite and its target in "
            "a git repository (`git init`, then commit), or use `noisefloor check` against a "
            "stored baseline",
        )
    return Path(os.path.realpath(done.stdout.strip()))


def _commit(top: Path, ref: str) -> str:
    done = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], top)
    if done.returncode != 0:
        raise UsageError(
            f"--baseline-ref {ref!r} names no commit in the repository at {top}",
            hint="give a branch, a tag, a commit id or e.g. HEAD~1 (`git log --oneline` lists "
            "commits; a new repository needs a first commit)",
        )
    return done.stdout.strip()


def _remove(top: Path, path: Path) -> None:
    """Remove a checkout and git's record of it, whatever state a kill left them in."""
    if os.path.lexists(path) and _git(["worktree", "remove", "--force", str(path)], top).returncode:
        try:  # not (or no longer) a worktree git knows, or one it refuses to remove
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(
                f"could not remove the temporary checkout {path}: {exc}",
                hint=f"delete it by hand, then run `git worktree prune` in {top}",
            ) from None
    _git(["worktree", "prune"], top)


def _lock(handle: IO[bytes], *, wait: bool) -> bool:
    """Lock an open file exclusively; False when `wait` is False and another process holds it.
    The lock dies with its process, a SIGKILLed one included."""
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _clean_stale(top: Path, base: Path) -> None:
    """Remove the checkouts whose lock no live process holds: those a kill left behind."""
    names = {p.name.removesuffix(".lock") for p in base.iterdir() if p.name != _CLAIMS}
    for name in sorted(names):
        lock = base / f"{name}.lock"
        with open(lock, "a+b") as handle:
            if _lock(handle, wait=False):
                _remove(top, base / name)
                lock.unlink(missing_ok=True)


@contextlib.contextmanager
def _claimed(top: Path, base: Path, sha: str) -> Iterator[Path]:
    """A new checkout's path, locked for this process; its lock file goes when the block ends."""
    base.mkdir(parents=True, exist_ok=True)
    with open(base / _CLAIMS, "a+b") as claims:
        _lock(claims, wait=True)
        _clean_stale(top, base)
        path = base / f"{sha[:12]}-{secrets.token_hex(4)}"
        lock = base / f"{path.name}.lock"
        handle = open(lock, "a+b")  # noqa: SIM115 (held past this block, closed below)
        _lock(handle, wait=True)
    try:
        yield path
    finally:
        lock.unlink(missing_ok=True)
        handle.close()


@contextlib.contextmanager
def checked_out(directory: Path, ref: str, store_root: Path) -> Iterator[Checkout]:
    """Check `ref` out in a temporary git worktree under `store_root`, for the block's length.

    The checkout is detached at the commit `ref` names and removed afterwards, also when the
    block raises (KeyboardInterrupt included; the command line turns SIGTERM into one). One
    left by a killed process is removed when the next checkout is made. Outside the store root
    only git's own record of the worktree is written, and removed with it.

    Args:
        directory: A directory inside the work tree whose repository holds `ref`.
        ref: A branch, tag, commit id or other revision naming a commit.
        store_root: The store root; checkouts go to its `worktrees/`.

    Raises:
        UsageError: `directory` is not in a git work tree, or `ref` names no commit.
        NoisefloorError: git is missing, or cannot make the checkout.
    """
    top = _toplevel(directory)
    sha = _commit(top, ref)
    base = Path(os.path.abspath(store_root)) / WORKTREES
    with _claimed(top, base, sha) as path:
        try:
            done = _git(["worktree", "add", "--detach", str(path), sha], top)
            if done.returncode != 0:
                raise NoisefloorError(
                    f"git could not check {ref!r} ({sha[:12]}) out in {path}: {_said(done)}",
                    hint="fix what git reports, then run `ab` again",
                )
            yield Checkout(ref=ref, sha=sha, top=top, path=path)
        finally:
            _remove(top, path)


def built_at(tree: Checkout, suite: Suite, store: Store) -> BuiltTarget:
    """The suite's target as if the suite file lay at its place in the checkout: its cwd, the
    files its version digests and its git tree are the checkout's."""
    there = dataclasses.replace(
        suite,
        path=tree.mirror(suite.base_dir) / suite.path.name,
        cases_path=tree.mirror(suite.cases_path) if suite.cases_path else None,
    )
    try:
        return build_target(there, tree.mirror(store.root))
    except NoisefloorError as exc:
        raise type(exc)(
            f"the baseline's version at {tree.ref} ({tree.sha[:12]}): {exc.message}",
            where=exc.where,
            hint=exc.hint,
            details=exc.details,
        ) from None
