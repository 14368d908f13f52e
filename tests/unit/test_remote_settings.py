"""Which remote a command uses and which branches' pointers it reads and moves: a flag over its
variable over the suite's defaults, the CI's branches, git's, then the default branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from noisefloor.cli.inputs import open_store
from noisefloor.errors import UsageError
from noisefloor.settings.resolved import resolve
from noisefloor.store.branches import Branch, current_branch, default_branch, mover, pointer_key
from noisefloor.store.mirrored import MirroredStore
from noisefloor.suite.model import Defaults
from tests.builders import git, git_repo, isolate_git

SUITE_REMOTE = Defaults(remote="s3://suite-bucket/p")


@pytest.mark.parametrize(
    ("flags", "environ", "defaults", "remote"),
    [
        (
            {"remote": "gs://flag/p"},
            {"NOISEFLOOR_REMOTE": "s3://env/p"},
            SUITE_REMOTE,
            "gs://flag/p",
        ),
        ({}, {"NOISEFLOOR_REMOTE": "s3://env/p"}, SUITE_REMOTE, "s3://env/p"),
        ({}, {}, SUITE_REMOTE, "s3://suite-bucket/p"),
        ({}, {"NOISEFLOOR_REMOTE": ""}, None, None),
        ({"offline": True, "remote": "gs://flag/p"}, {}, SUITE_REMOTE, None),
    ],
    ids=["flag", "variable", "suite", "none", "offline"],
)
def test_the_remote_is_a_flag_over_its_variable_over_the_suite(flags, environ, defaults, remote):
    assert resolve(flags, environ, defaults).store.remote == remote


@pytest.mark.parametrize("flag", ["branch", "baseline_branch"])
def test_a_branch_without_a_remote_is_refused(flag):
    with pytest.raises(UsageError) as refused:
        resolve({flag: "main"}, {})
    assert "no remote is set" in refused.value.message
    with pytest.raises(UsageError) as offline:
        resolve({flag: "main", "offline": True, "remote": "s3://b/p"}, {})
    assert "--offline" in offline.value.message


def test_a_check_compares_with_the_branch_its_request_merges_into():
    remote = {"remote": "s3://b/p"}
    assert resolve(remote, {"GITHUB_BASE_REF": "main"}).store.baseline_branch == "main"
    gitlab = {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "develop"}
    assert resolve(remote, gitlab).store.baseline_branch == "develop"
    flagged = {**remote, "baseline_branch": "release"}
    assert resolve(flagged, {"GITHUB_BASE_REF": "main"}).store.baseline_branch == "release"
    assert resolve(remote, {}).store.baseline_branch is None
    assert (
        "GITHUB_BASE_REF" in resolve(remote, {"GITHUB_BASE_REF": "main"}).store.baseline_branch_why
    )


def test_a_pointer_key_holds_any_branch_name_as_one_path_part():
    assert pointer_key("fake", "main") == "baselines/main/fake.json"
    assert pointer_key("fake", "feature/x y") == "baselines/feature%2Fx%20y/fake.json"


def test_the_current_branch_is_the_requests_source_then_gits(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path)
    repo = git_repo(tmp_path / "repo", {"a.txt": "a"})
    git(repo, "checkout", "-q", "-b", "feature/remote")
    assert current_branch({}, str(repo)) == Branch("feature/remote", "the branch checked out")
    assert current_branch({"GITHUB_HEAD_REF": "pr-branch"}, str(repo)).name == "pr-branch"
    git(repo, "checkout", "-q", "--detach")
    # a detached HEAD outside CI reads the branch that contains its commit (both do: the
    # default branch first among equals)
    detached = current_branch({}, str(repo))
    assert detached is not None and detached.name == "master"
    assert "detached commit" in detached.why
    assert current_branch({"CI": "true"}, str(repo)) is None  # CI builds something else
    git(repo, "commit", "-q", "--allow-empty", "-m", "on no branch")
    assert current_branch({}, str(repo)) is None  # no branch contains this commit
    assert current_branch({}, str(tmp_path)) is None  # outside git


def test_a_detached_commit_reads_the_nearest_branch_that_contains_it(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path)
    repo = git_repo(tmp_path / "repo", {"a.txt": "a"})
    git(repo, "branch", "-M", "master")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "commit", "-q", "--allow-empty", "-m", "feature work")
    git(repo, "checkout", "-q", "master")
    git(repo, "commit", "-q", "--allow-empty", "-m", "master moves on")
    git(repo, "checkout", "-q", base)  # in both: the default branch first among equals
    # master's tip is 1 commit ahead, feature's too: a tie, which the default branch wins
    assert current_branch({}, str(repo)).name == "master"
    git(repo, "checkout", "-q", "feature~0")
    assert current_branch({}, str(repo)).name == "feature"


@pytest.mark.parametrize(
    ("setup", "environ", "suite", "expected", "says"),
    [
        ("origin-head", {}, None, "trunk", "origin/HEAD"),
        ("init-default", {}, None, "develop", "init.defaultBranch"),
        ("master-only", {}, None, "master", "the repository has master"),
        ("master-only", {"NOISEFLOOR_DEFAULT_BRANCH": "prod"}, "stable", "prod", "NOISEFLOOR"),
        ("master-only", {}, "stable", "stable", "defaults.default_branch"),
        ("outside", {}, None, "main", "names none"),
    ],
    ids=["origin-head", "init-default", "master", "variable", "suite", "outside-git"],
)
def test_the_default_branch_is_the_repositorys(
    tmp_path, monkeypatch, setup, environ, suite, expected, says
):
    isolate_git(monkeypatch, tmp_path)
    where = tmp_path / "work"
    if setup == "outside":
        where.mkdir()
    else:
        origin = git_repo(tmp_path / "origin", {"a.txt": "a"})
        git(origin, "branch", "-M", "trunk" if setup == "origin-head" else "master")
        git(tmp_path, "clone", "-q", str(origin), str(where))
        if setup != "origin-head":
            git(where, "remote", "set-head", "origin", "--delete")
        if setup == "init-default":
            git(where, "config", "init.defaultBranch", "develop")
    found = default_branch(environ, str(where), suite)
    assert found.name == expected and says in found.why


def test_who_moved_a_pointer_is_the_ci_job_else_the_host():
    job = {"GITHUB_RUN_ID": "42", "GITHUB_REPOSITORY": "team/app"}
    assert mover(job) == "GitHub Actions run 42 of team/app"
    assert mover({"CI_JOB_URL": "https://gitlab/job/7"}) == "GitLab job https://gitlab/job/7"
    assert "process" in mover({})


def test_a_check_reads_its_own_branch_then_the_default_and_moves_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    isolate_git(monkeypatch, tmp_path)
    for name in ("GITHUB_HEAD_REF", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_BRANCH"):
        monkeypatch.delenv(name, raising=False)
    repo = git_repo(tmp_path / "repo", {"a.txt": "a"})
    git(repo, "checkout", "-q", "-b", "feature")
    monkeypatch.chdir(repo)
    shared = {"remote": f"file://{tmp_path / 'shared'}"}
    store = open_store(resolve(shared, {}).store)
    assert isinstance(store, MirroredStore)
    # the repository's default branch: git's own, master (no origin, no init.defaultBranch)
    assert (store.branches.read, store.branches.write) == (("feature", "master"), "feature")
    merging = open_store(resolve(shared, {"GITHUB_BASE_REF": "main"}).store)
    assert isinstance(merging, MirroredStore)
    assert (merging.branches.read, merging.branches.write) == (("main",), "feature")
    moving = open_store(resolve({**shared, "branch": "release"}, {}).store)
    assert isinstance(moving, MirroredStore) and moving.branches.write == "release"
