"""Code fingerprints: globs, argv files and a git work tree's tracked files, all labelled without
absolute paths.

Git repositories are created in temporary directories with an isolated git configuration.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from noisefloor.errors import TargetConfigError
from noisefloor.store.commits import commit_holding
from noisefloor.store.fingerprint import (
    GIT_LABEL,
    code_fingerprint,
    fingerprint_digest,
    tracked_files,
)
from tests.builders import commit_all, git, git_repo, isolate_git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _auto(repo: Path, argv: list[str] | None = None, **kw: Any) -> dict[str, str]:
    fp = code_fingerprint(base_dir=repo, globs=None, argv=argv or ["python"], cwd=repo, **kw)
    return fp.entries


def test_globs_hash_matching_files_sorted_and_relative(tmp_path: Path) -> None:
    _write(tmp_path / "agent" / "main.py", "print(1)\n")
    _write(tmp_path / "agent" / "sub" / "tool.py", "x = 2\n")
    _write(tmp_path / "agent" / "notes.txt", "skip me\n")
    _write(tmp_path / "prompt.md", "You are helpful.\n")
    (tmp_path / "agent" / "pkg.py").mkdir()  # a directory that matches is skipped
    fp = code_fingerprint(
        base_dir=tmp_path, globs=["agent/**/*.py", "prompt.md"], argv=[], cwd=tmp_path
    ).entries
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
    fp = code_fingerprint(base_dir=tmp_path, globs=None, argv=argv, cwd=tmp_path / "bin").entries
    assert fp == {"bin/agent.py": _sha(b"A\n"), "conf.yaml": _sha(b"c: 1\n")}


def test_argv_file_outside_base_dir_keeps_the_element_as_written(tmp_path: Path) -> None:
    _write(tmp_path / "shared" / "lib.py", "L\n")
    base = tmp_path / "suite"
    base.mkdir()
    fp = code_fingerprint(base_dir=base, globs=None, argv=["../shared/lib.py"], cwd=base)
    assert fp.entries == {"../shared/lib.py": _sha(b"L\n")}


def test_no_git_entry_outside_a_repository_or_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "agent.py", "A\n")
    assert GIT_LABEL not in _auto(tmp_path, ["python", "agent.py"])
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert _auto(tmp_path, ["python", "agent.py"]) == {"agent.py": _sha(b"A\n")}


@needs_git
def test_tracked_content_counts_whether_committed_staged_or_not(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"agent.py": "v1\n", "lib/a b.py": "x\n", "-dash.py": "d\n"})
    first = _auto(repo)
    assert set(first) == {GIT_LABEL}
    assert _auto(repo) == first  # stable

    _write(repo / "agent.py", "v2\n")
    _write(repo / "lib" / "a b.py", "y\n")
    _write(repo / "-dash.py", "e\n")
    edited = _auto(repo)
    assert edited != first
    git(repo, "add", "agent.py")
    assert _auto(repo) == edited  # staged or not, the same content
    git(repo, "commit", "-q", "-am", "two")
    assert _auto(repo) == edited  # a commit of what is in the work tree changes nothing

    for name, text in (("agent.py", "v1\n"), ("lib/a b.py", "x\n"), ("-dash.py", "d\n")):
        _write(repo / name, text)
    git(repo, "commit", "-q", "-am", "three")
    assert _auto(repo) == first  # content, not commit ids


@needs_git
def test_untracked_and_ignored_files_count_only_when_argv_names_them(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"agent.py": "a\n", ".gitignore": "ignored/\n"})
    before = _auto(repo, ["python", "agent.py", "helper.py"])
    _write(repo / "NOTES.md", "what I tried\n")
    _write(repo / "ignored" / "cache.bin", "noise\n")
    assert _auto(repo, ["python", "agent.py", "helper.py"]) == before
    _write(repo / "helper.py", "h\n")
    named = _auto(repo, ["python", "agent.py", "helper.py"])
    assert named == {**before, "helper.py": _sha(b"h\n")}


@needs_git
def test_a_deleted_tracked_file_or_a_new_mode_counts(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"agent.py": "a\n", "old.py": "o\n"})
    first = _auto(repo)
    (repo / "old.py").unlink()
    deleted = _auto(repo)
    assert deleted != first
    git(repo, "rm", "-q", "old.py")
    assert _auto(repo) == deleted
    (repo / "agent.py").chmod(0o755)
    assert _auto(repo) not in (first, deleted)


@needs_git
def test_a_stale_index_does_not_change_the_version(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"agent.py": "a\n"})
    first = _auto(repo)
    later = (repo / "agent.py").stat().st_mtime + 100
    os.utime(repo / "agent.py", (later, later))  # git sees it as possibly modified
    assert "agent.py" in git(repo, "diff-files", "--name-only")
    assert _auto(repo) == first


@needs_git
def test_tracked_files_are_blob_ids_labelled_from_the_suite_directory(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"suite/agent.py": "a\n", "lib/util.py": "u\n"})
    (repo / "suite" / "link.py").symlink_to("agent.py")
    git(repo, "add", ".")
    _write(repo / "lib" / "util.py", "edited\n")
    (repo / "suite" / "link.py").unlink()
    (repo / "suite" / "link.py").symlink_to("../lib/util.py")

    def blob(*args: str, data: bytes | None = None) -> str:
        done = subprocess.run(
            ["git", "hash-object", *args], cwd=repo, input=data, check=True, capture_output=True
        )
        return done.stdout.decode().strip()

    files = tracked_files(repo / "suite", repo / "suite")
    assert files == {
        "../lib/util.py": f"100644 {blob('lib/util.py')}",
        "agent.py": f"100644 {blob('suite/agent.py')}",
        "link.py": f"120000 {blob('--stdin', data=b'../lib/util.py')}",
    }
    code = code_fingerprint(base_dir=repo / "suite", globs=None, argv=[], cwd=repo / "suite")
    assert code.tracked == files
    assert code.entries == {GIT_LABEL: fingerprint_digest(files)}


@needs_git
def test_the_store_and_the_suite_file_do_not_count_even_when_committed(tmp_path: Path) -> None:
    repo = git_repo(
        tmp_path / "repo",
        {"agent.py": "a\n", "suite.yaml": "name: s\n", ".noisefloor/baselines/s.json": "{}"},
    )
    exclude = [repo / ".noisefloor", repo / "suite.yaml"]
    before = _auto(repo, exclude=exclude)
    _write(repo / ".noisefloor" / "baselines" / "s.json", '{"moved": 1}')
    _write(repo / ".noisefloor" / "runs" / "r1.json", "{}")
    _write(repo / "suite.yaml", "name: s\ncases: []\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the baseline")
    assert _auto(repo, exclude=exclude) == before
    assert _auto(repo) != before
    _write(repo / "suite.yaml.orig", "a file beside the suite, tracked\n")
    git(repo, "add", ".")
    assert _auto(repo, exclude=exclude) != before


@needs_git
def test_a_file_name_that_is_not_utf8_gets_a_readable_label(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"agent.py": "a\n"})
    odd = os.path.join(os.fsencode(repo), b"caf\xe9.py")
    with open(odd, "wb") as handle:
        handle.write(b"v1\n")
    git(repo, "add", ".")
    files = tracked_files(repo, repo)
    assert files is not None and set(files) == {"agent.py", "caf\\xe9.py"}
    before = _auto(repo)
    with open(odd, "wb") as handle:
        handle.write(b"v2\n")
    assert _auto(repo) != before


@needs_git
def test_the_whole_work_tree_counts_from_a_subdirectory(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", {"sub/run.py": "r\n", "other/lib.py": "l\n"})
    before = code_fingerprint(base_dir=repo, globs=None, argv=["run.py"], cwd=repo / "sub")
    assert set(before.entries) == {"sub/run.py", GIT_LABEL}
    _write(repo / "other" / "lib.py", "changed\n")
    after = code_fingerprint(base_dir=repo, globs=None, argv=["run.py"], cwd=repo / "sub")
    assert after.entries[GIT_LABEL] != before.entries[GIT_LABEL]


@needs_git
def test_fingerprint_is_machine_independent(tmp_path: Path) -> None:
    prints = []
    for name in ("machine-a", "elsewhere/machine-b"):
        repo = tmp_path / name
        _write(repo / "agent.py", "same\n")
        _write(repo / "lib" / "util.py", "u\n")
        commit_all(repo, f"from {name}")
        _write(repo / "wip.py", "w\n")
        auto = _auto(repo, ["python", "agent.py", str(repo / "lib" / "util.py")])
        globbed = code_fingerprint(base_dir=repo, globs=["**/*.py"], argv=[], cwd=repo).entries
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


def test_digest_keeps_the_bytes_of_earlier_versions() -> None:
    """Stores made before keep their target versions: the digest of the sorted, compact JSON."""
    fp = {"z.py": "1", "café/ü.py": "2", 'q"\\\n\x7f.py': "3", "\U0001f600.py": "4"}
    data = json.dumps(fp, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert fingerprint_digest(fp) == hashlib.sha256(data.encode("utf-8")).hexdigest()


@needs_git
def test_the_commit_holding_a_version_is_found_newest_first_and_only_for_its_files(
    tmp_path: Path,
) -> None:
    repo = git_repo(tmp_path / "repo", {"app/target.py": "v1\n", "app/suite.yaml": "a\n"})
    app, store = repo / "app", repo / "app" / ".noisefloor"
    excluded = [store, app / "suite.yaml"]
    first = tracked_files(app, app, excluded)
    assert first is not None
    _write(app / "target.py", "v2\n")
    second = tracked_files(app, app, excluded)
    assert second is not None
    # not committed yet: no commit holds the work tree's version
    assert commit_holding(second, app, app, excluded) is None
    two = commit_all(repo, "v2")
    # a commit that changes only what is not the target's (the store, the suite) holds it too:
    # the newest such commit is the one found
    _write(store / "baselines" / "s.json", "{}\n")
    _write(app / "suite.yaml", "b\n")
    three = commit_all(repo, "the baseline")
    assert commit_holding(second, app, app, excluded) == three != two
    one = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert commit_holding(first, app, app, excluded) == one
    # older than the commits looked through: not found
    assert commit_holding(first, app, app, excluded, limit=2) is None
    # labels are relative to the suite's directory, whatever the repository's top
    assert commit_holding({"app/" + k: v for k, v in first.items()}, app, app, excluded) is None
