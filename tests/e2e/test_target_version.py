"""End-to-end in a real git repository holding the suite, the target and the store: with the
default fingerprint, only the target's tracked content moves its version, and a check whose
version moved names the files that moved it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.builders import FAKE, answer_case, commit_all, fake_suite, git, isolate_git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed repository with the fake target and a suite on the default fingerprint."""
    isolate_git(monkeypatch, tmp_path)
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(FAKE, work / "fake_target.py")
    fake_suite(work, [answer_case("alpha"), answer_case("beta")], repeats=2, fingerprint=None)
    (work / "README.md").write_text("a project whose target is fake_target.py\n")
    commit_all(work, "target and suite")
    return work


def check(cli, repo: Path) -> dict:  # type: ignore[no-untyped-def]
    # a fixed design: the calls these tests count are those of two repeats of two cases
    result = cli("check", repo / "suite.yaml", "--repeats", "2", "--format", "json")
    assert result.code == 0, result.out + result.err
    report: dict = result.json()
    return report


def use_store(repo: Path, where: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The store inside the repository: `.noisefloor` where the check runs, or NOISEFLOOR_ROOT."""
    monkeypatch.chdir(repo)
    if where == "default-root":
        monkeypatch.delenv("NOISEFLOOR_ROOT")
        return repo / ".noisefloor"
    root = repo / "gate" / "store"
    monkeypatch.setenv("NOISEFLOOR_ROOT", str(root))
    return root


@pytest.fixture(params=["default-root", "env-root"])
def store(request: pytest.FixtureRequest, repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_store(repo, request.param, monkeypatch)


def test_untracked_files_and_committing_the_baseline_resample_nothing(cli, repo, store):
    assert check(cli, repo)["calls"] == 4
    (repo / "NOTES.md").write_text("what I tried today\n")
    assert check(cli, repo)["calls"] == 0
    git(repo, "add", str(store))
    git(repo, "commit", "-q", "-m", "the baseline")
    committed = git(repo, "ls-files", str(store))
    assert "/baselines/fake.json" in committed  # the baseline really is in the commit
    report = check(cli, repo)
    assert report["calls"] == 0
    assert "target_change" not in report
    assert not any("version" in w for w in report["warnings"])
    # the suite file is not the target: a new scorer re-scores and samples nothing
    doc = yaml.safe_load((repo / "suite.yaml").read_text())
    doc["cases"][0]["scorers"].append({"type": "contains", "needle": "P"})
    (repo / "suite.yaml").write_text(yaml.safe_dump(doc))
    git(repo, "commit", "-q", "-am", "a scorer more")
    assert check(cli, repo)["calls"] == 0


def test_an_edited_target_resamples_and_the_check_names_it(cli, repo, monkeypatch):
    store = use_store(repo, "default-root", monkeypatch)
    check(cli, repo)
    git(repo, "add", str(store))
    git(repo, "commit", "-q", "-m", "the baseline")
    with open(repo / "fake_target.py", "a", encoding="utf-8") as handle:
        handle.write("# a comment that changes the file\n")
    (repo / "NOTES.md").write_text("untracked, and not the reason\n")
    report = check(cli, repo)
    assert report["calls"] == 4
    change = report["target_change"]
    assert (change["modified"], change["added"], change["removed"]) == (["fake_target.py"], [], [])
    [warning] = [w for w in report["warnings"] if "version" in w]
    assert "modified fake_target.py" in warning
    assert "fingerprint:" not in warning  # the target's own file: nothing to narrow

    # a tracked file the target does not run moves the version too: the check says how not to
    (repo / "README.md").write_text("a project, described better\n")
    result = cli("check", repo / "suite.yaml", "--repeats", "2")
    assert result.code == 0, result.out
    # a note, in a few words; the whole of it, with how to narrow the version, under -v
    assert "note: new target version: modified README.md, fake_target.py" in result.out
    verbose = " ".join(cli("check", repo / "suite.yaml", "--repeats", "2", "-v").out.split())
    assert "2 file(s) changed it: modified README.md, fake_target.py" in verbose
    assert "`target.fingerprint:` in suite.yaml" in verbose
    assert "NOTES.md" not in result.out + verbose

    # committing the edits changes no content: the version stays the edited one
    git(repo, "commit", "-q", "-am", "the edits")
    assert check(cli, repo)["calls"] == 0


def test_a_fresh_clone_reuses_the_committed_baseline_and_names_what_moved(
    cli, repo, tmp_path, monkeypatch
):
    store = use_store(repo, "default-root", monkeypatch)
    check(cli, repo)
    git(repo, "add", str(store))
    git(repo, "commit", "-q", "-m", "the baseline")
    clone = tmp_path / "ci" / "checkout"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    monkeypatch.chdir(clone)
    (clone / "README.md").write_text("edited in CI\n")
    report = check(cli, clone)
    assert report["calls"] == 4
    assert report["target_change"]["modified"] == ["README.md"]  # from the committed manifest
    git(clone, "checkout", "--", "README.md")
    assert check(cli, clone)["calls"] == 0  # another place: the baseline's version and samples
