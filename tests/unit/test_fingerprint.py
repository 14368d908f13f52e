"""Code fingerprints: globs, argv files and git state, all labelled without absolute paths.

Git repositories are created in temporary directories with an isolated git configuration.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from noisefloor.errors import TargetConfigError
from noisefloor.fingerprint import GIT_LABEL, code_fingerprint, fingerprint_digest

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user or system git configuration, and no repository above the temporary dir."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _auto(repo: Path, argv: list[str] | None = None) -> dict[str, str]:
    return code_fingerprint(base_dir=repo, globs=None, argv=argv or ["python"], cwd=repo)


def test_globs_hash_matching_files_sorted_and_relative(tmp_path: Path) -> None:
    _write(tmp_path / "agent" / "main.py", "print(1)\n")
    _write(tmp_path / "agent" / "sub" / "tool.py", "x = 2\n")
    _write(tmp_path / "agent" / "notes.txt", "skip me\n")
    _write(tmp_path / "prompt.md", "You are helpful.\n")
    (tmp_path / "agent" / "pkg.py").mkdir()  # a directory that matches is skipped
    fp = code_fingerprint(
        base_dir=tmp_path, globs=["agent/**/*.py", "prompt.md"], argv=[], cwd=tmp_path
    )
    assert fp == {
        "agent/main.py": _sha(b"print(1)\n"),
        "agent/sub/tool.py": _sha(b"x = 2\n"),
        "prompt.md": _sha(b"You are helpful.\n"),
    }
    assert list(fp) == sorted(fp)


def test_glob_that_matches_nothing_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path / "a.py", "")
    with pytest.raises(TargetConfigError) as info:
        code_fingerprint(base_dir=tmp_path, globs=["a.py", "src/*.py"], argv=[], cwd=tmp_path)
    assert "src/*.py" in info.value.message
    assert info.value.where is not None and str(tmp_path) in info.value.where


def test_argv_files_are_detected_relative_to_cwd(tmp_path: Path) -> None:
    _write(tmp_path / "bin" / "agent.py", "A\n")
    _write(tmp_path / "conf.yaml", "c: 1\n")
    argv = ["python", "agent.py", "--config", "../conf.yaml", "{{input}}", "missing.py", "."]
    fp = code_fingerprint(base_dir=tmp_path, globs=None, argv=argv, cwd=tmp_path / "bin")
    assert fp == {"bin/agent.py": _sha(b"A\n"), "conf.yaml": _sha(b"c: 1\n")}


def test_argv_file_outside_base_dir_keeps_the_element_as_written(tmp_path: Path) -> None:
    _write(tmp_path / "shared" / "lib.py", "L\n")
    base = tmp_path / "suite"
    base.mkdir()
    fp = code_fingerprint(base_dir=base, globs=None, argv=["../shared/lib.py"], cwd=base)
    assert fp == {"../shared/lib.py": _sha(b"L\n")}


def test_no_git_entry_outside_a_repository_or_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "agent.py", "A\n")
    assert GIT_LABEL not in _auto(tmp_path, ["python", "agent.py"])
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert _auto(tmp_path, ["python", "agent.py"]) == {"agent.py": _sha(b"A\n")}


@needs_git
def test_git_tree_uncommitted_change_and_untracked_file_change_the_digest(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _write(repo / "agent.py", "v1\n")
    _write(repo / ".gitignore", "ignored/\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    first = _auto(repo)
    assert set(first) == {GIT_LABEL}
    assert _auto(repo) == first  # stable

    _write(repo / "agent.py", "v2\n")
    uncommitted = _auto(repo)
    assert uncommitted != first

    _git(repo, "commit", "-q", "-am", "two")
    committed = _auto(repo)
    assert committed not in (first, uncommitted)

    _write(repo / "helper.py", "new\n")
    untracked = _auto(repo)
    assert untracked != committed
    _write(repo / "helper.py", "newer\n")
    assert _auto(repo) != untracked  # untracked content counts, not just the name

    before_ignored = _auto(repo)
    _write(repo / "ignored" / "cache.bin", "noise\n")
    assert _auto(repo) == before_ignored


@needs_git
def test_git_state_covers_the_whole_work_tree_from_a_subdirectory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(repo / "sub" / "run.py", "r\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    before = code_fingerprint(base_dir=repo, globs=None, argv=["run.py"], cwd=repo / "sub")
    assert set(before) == {"sub/run.py", GIT_LABEL}
    _write(repo / "other" / "untracked.py", "u\n")
    after = code_fingerprint(base_dir=repo, globs=None, argv=["run.py"], cwd=repo / "sub")
    assert after[GIT_LABEL] != before[GIT_LABEL]


@needs_git
def test_excluded_directories_do_not_count_as_untracked(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(repo / "agent.py", "a\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    store = repo / ".noisefloor"
    args = {"base_dir": repo, "globs": None, "argv": [], "cwd": repo, "exclude_dirs": [store]}
    before = code_fingerprint(**args)  # type: ignore[arg-type]
    _write(store / "runs" / "r1.json", "{}")
    assert code_fingerprint(**args) == before  # type: ignore[arg-type]


@needs_git
def test_fingerprint_is_machine_independent(tmp_path: Path) -> None:
    prints = []
    for name in ("machine-a", "elsewhere/machine-b"):
        repo = tmp_path / name
        _write(repo / "agent.py", "same\n")
        _write(repo / "lib" / "util.py", "u\n")
        _git(repo, "init", "-q")
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", f"from {name}")
        _write(repo / "wip.py", "w\n")
        auto = _auto(repo, ["python", "agent.py", str(repo / "lib" / "util.py")])
        globbed = code_fingerprint(base_dir=repo, globs=["**/*.py"], argv=[], cwd=repo)
        for fp in (auto, globbed):
            for label in fp:
                assert not os.path.isabs(label)
                assert str(tmp_path) not in label and "\\" not in label
        prints.append((auto, globbed))
    assert set(prints[0][0]) == {"agent.py", "lib/util.py", GIT_LABEL}
    # Same content, different location and commit: the same fingerprint.
    assert prints[0] == prints[1]


def test_digest_is_order_independent_and_full_length() -> None:
    a = fingerprint_digest({"b": "2", "a": "1"})
    assert a == fingerprint_digest({"a": "1", "b": "2"})
    assert len(a) == 64 and a != fingerprint_digest({"a": "1", "b": "3"})
