"""Which remote a command uses and which branches' pointers it reads and moves: a flag over its
variable over the suite's defaults, the CI's branches, git's, then the default branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from noisefloor.cli.inputs import open_store
from noisefloor.errors import UsageError
from noisefloor.settings.resolved import resolve
from noisefloor.store.branches import current_branch, mover, pointer_key
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
    assert resolve(remote, {"NOISEFLOOR_DEFAULT_BRANCH": "trunk"}).store.default_branch == "trunk"


def test_a_pointer_key_holds_any_branch_name_as_one_path_part():
    assert pointer_key("fake", "main") == "baselines/main/fake.json"
    assert pointer_key("fake", "feature/x y") == "baselines/feature%2Fx%20y/fake.json"


def test_the_current_branch_is_the_requests_source_then_gits(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path)
    repo = git_repo(tmp_path / "repo", {"a.txt": "a"})
    git(repo, "checkout", "-q", "-b", "feature/remote")
    assert current_branch({}, str(repo)) == "feature/remote"
    assert current_branch({"GITHUB_HEAD_REF": "pr-branch"}, str(repo)) == "pr-branch"
    git(repo, "checkout", "-q", "--detach")
    assert current_branch({}, str(repo)) is None
    assert current_branch({}, str(tmp_path)) is None  # outside git


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
    assert (store.branches.read, store.branches.write) == (("feature", "main"), "feature")
    merging = open_store(resolve(shared, {"GITHUB_BASE_REF": "main"}).store)
    assert isinstance(merging, MirroredStore)
    assert (merging.branches.read, merging.branches.write) == (("main",), "feature")
    moving = open_store(resolve({**shared, "branch": "release"}, {}).store)
    assert isinstance(moving, MirroredStore) and moving.branches.write == "release"
