"""Checking a git ref out in a temporary worktree under the store root: what it holds, that it
goes away however the block ends (a kill included, at the next start), and the errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from noisefloor.errors import ExitCode, NoisefloorError, UsageError
from noisefloor.operations.worktree import WORKTREES, checked_out
from tests.builders import commit_all, isolate_git, worktrees


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit of `app/code.txt`, then an uncommitted edit of it."""
    work = tmp_path / "repo"
    (work / "app").mkdir(parents=True)
    (work / "app" / "code.txt").write_text("committed\n")
    commit_all(work)
    (work / "app" / "code.txt").write_text("edited\n")
    return work


def _left(root: Path) -> list[str]:
    base = root / WORKTREES
    return sorted(p.name for p in base.iterdir()) if base.exists() else []


def test_the_checkout_holds_the_ref_and_goes_away_afterwards(repo: Path, tmp_path: Path) -> None:
    root = repo / ".noisefloor"
    with checked_out(repo / "app", "HEAD", root) as tree:
        assert tree.path.parent == root / WORKTREES
        assert tree.path.name.startswith(tree.sha[:12])
        assert tree.mirror(repo / "app" / "code.txt").read_text() == "committed\n"
        assert tree.mirror(tmp_path / "elsewhere") == tmp_path / "elsewhere"
        assert len(worktrees(repo)) == 2
    assert worktrees(repo) == [str(repo.resolve())]
    assert _left(root) == [".claims"]
    assert (repo / "app" / "code.txt").read_text() == "edited\n"


@pytest.mark.parametrize("raised", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_block_still_removes_the_checkout(
    repo: Path, raised: type[BaseException]
) -> None:
    root = repo / ".noisefloor"
    with pytest.raises(raised), checked_out(repo, "HEAD", root):
        raise raised
    assert worktrees(repo) == [str(repo.resolve())]
    assert _left(root) == [".claims"]


_KILLED = """
import os, signal, sys
from pathlib import Path
from noisefloor.operations.worktree import checked_out
with checked_out(Path(sys.argv[1]), "HEAD", Path(sys.argv[2])) as tree:
    print(tree.path, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_checkout_left_by_a_killed_process_goes_at_the_next_start(repo: Path) -> None:
    root = repo / ".noisefloor"
    done = subprocess.run(
        [sys.executable, "-c", _KILLED, str(repo), str(root)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = Path(done.stdout.strip())
    assert left.is_dir() and len(worktrees(repo)) == 2
    with checked_out(repo, "HEAD", root) as tree:
        assert not left.exists()
        assert worktrees(repo) == [str(repo.resolve()), str(tree.path)]
    assert worktrees(repo) == [str(repo.resolve())]
    assert _left(root) == [".claims"]


def test_a_live_checkout_of_another_process_is_left_alone(repo: Path) -> None:
    root = repo / ".noisefloor"
    with checked_out(repo, "HEAD", root) as first, checked_out(repo, "HEAD", root) as second:
        assert first.path != second.path
        assert first.path.is_dir() and second.path.is_dir()
    assert worktrees(repo) == [str(repo.resolve())]


def test_outside_a_repository_is_a_usage_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(UsageError) as caught, checked_out(plain, "HEAD", tmp_path / "store"):
        pass
    assert caught.value.exit_code == ExitCode.HARNESS
    assert caught.value.where == str(plain)
    assert "not inside a git work tree" in caught.value.message
    assert "git init" in (caught.value.hint or "")
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("ref", ["no-such-branch", "-v", "HEAD~5"])
def test_a_ref_that_names_no_commit_is_a_usage_error(repo: Path, ref: str) -> None:
    with pytest.raises(UsageError) as caught, checked_out(repo, ref, repo / ".noisefloor"):
        pass
    assert repr(ref) in caught.value.message
    assert "git log --oneline" in (caught.value.hint or "")
    assert not (repo / ".noisefloor").exists()


def test_without_git_the_error_says_so(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(NoisefloorError) as caught, checked_out(repo, "HEAD", tmp_path / "s"):
        pass
    assert "git is not installed" in caught.value.message
    assert caught.value.hint
    assert os.environ["PATH"] == str(tmp_path / "empty-bin")
