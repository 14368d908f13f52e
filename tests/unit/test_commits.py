"""The commit that holds a narrowed version: the files its `fingerprint:` globs match, found in a
commit's tree as `glob.glob` finds them on disk, with the content the version digested."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noisefloor.store.commits import commit_with_content, glob_matches
from noisefloor.store.fingerprint import code_fingerprint
from tests.builders import commit_all, git, git_repo, isolate_git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

#: The files of the tree the globs are matched against: nested, hidden and alike names.
TREE = [
    "a.py",
    "b.txt",
    ".hidden.py",
    "src/a.py",
    "src/.cache/x.py",
    "src/deep/er/c.py",
    "src/deep/d.txt",
    ".git2/e.py",
    "docs/index.md",
    "docs/a.py.bak",
]
PARTS = ["*", "**", "*.py", "a.py", "src", "deep", ".*", "?.py", "[ab].*", "er", "docs", ".cache"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    for name in TREE:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    return root


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PARTS), min_size=1, max_size=4))
def test_a_glob_matches_the_files_glob_finds(tree: Path, parts: list[str]) -> None:
    pattern = "/".join(parts)
    found = {
        Path(m).as_posix()
        for m in glob.glob(pattern, root_dir=tree, recursive=True)
        # as the fingerprint filters them: `a.py/**` lists `a.py/`, which is not a file
        if os.path.isfile(os.path.join(tree, m))
    }
    assert {name for name in TREE if glob_matches(pattern, name)} == found, pattern


@pytest.fixture
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@needs_git
@pytest.mark.usefixtures("_isolated")
def test_the_newest_commit_whose_globbed_files_hold_the_version_is_found(tmp_path: Path) -> None:
    repo = git_repo(
        tmp_path / "repo",
        {"app/answer.py": "v1\n", "app/lib/util.py": "u1\n", "app/README.md": "r1\n"},
    )
    app = repo / "app"
    globs = ["*.py", "lib/**/*.py"]
    v1 = code_fingerprint(base_dir=app, globs=globs, argv=[], cwd=app).entries
    assert set(v1) == {"answer.py", "lib/util.py"}
    first = git(repo, "rev-parse", "HEAD").strip()
    # a commit of what the globs do not match holds the version too, and is the newest
    (app / "README.md").write_text("r2\n")
    docs = commit_all(repo, "docs")
    assert commit_with_content(v1, globs, app, app) == docs != first
    # a new file the globs match: the version is no longer held at the top of the history
    (app / "lib" / "more.py").write_text("m\n")
    added = commit_all(repo, "a module")
    assert commit_with_content(v1, globs, app, app) == docs
    v2 = code_fingerprint(base_dir=app, globs=globs, argv=[], cwd=app).entries
    assert commit_with_content(v2, globs, app, app) == added
    # an edit of a matched file's content, not committed: no commit holds it
    (app / "answer.py").write_text("v3\n")
    v3 = code_fingerprint(base_dir=app, globs=globs, argv=[], cwd=app).entries
    assert commit_with_content(v3, globs, app, app) is None
    # only the newest commits are looked through
    assert commit_with_content(v1, globs, app, app, limit=1) is None
    # outside a work tree
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "answer.py").write_text("v1\n")
    plain = code_fingerprint(base_dir=outside, globs=["*.py"], argv=[], cwd=outside).entries
    assert commit_with_content(plain, ["*.py"], outside, outside) is None
