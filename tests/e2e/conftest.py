"""The fixtures of the remote store's end-to-end tests: moto's S3 server (one per module), s3rver
and Azurite from npm (one per worker, skipped with the reason when node or the package is
absent), a fresh remote per test (a bucket of it, or a shared directory), and the team's
repository."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.servers.node_servers import Azurite, S3rver, missing
from bench.servers.object_store import S3Server
from tests.builders import FAKE, answer_case, commit_all, fake_suite, git, isolate_git

_buckets = itertools.count()


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


@pytest.fixture(scope="session")
def s3rver() -> Iterator[S3rver]:
    """s3rver, the S3 server that ignores conditional writes."""
    why = missing("s3rver")
    if why is not None:
        pytest.skip(why)
    with S3rver() as server:
        yield server


@pytest.fixture(scope="session")
def azurite() -> Iterator[Azurite]:
    """Azurite's Blob service, the Azure Storage emulator."""
    why = missing("azurite-blob")
    if why is not None:
        pytest.skip(why)
    with Azurite() as server:
        yield server


@pytest.fixture
def on_azurite(azurite: Azurite) -> tuple[str, dict[str, str]]:
    """A fresh container of the worker's Azurite, as the docs write its URL."""
    container = azurite.container(f"nf-{os.getpid()}-{next(_buckets)}")
    return f"az://{container}/team", azurite.env()


@pytest.fixture
def on_s3rver(s3rver: S3rver) -> tuple[str, dict[str, str]]:
    """A fresh bucket of the worker's s3rver."""
    return f"s3://{s3rver.bucket(f'nf-{os.getpid()}-{next(_buckets)}')}/team", s3rver.env()


@pytest.fixture(params=["s3", "file"])
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A fresh remote (its URL, and the environment that reaches it): a bucket of the module's
    S3 server, or a shared directory."""
    if request.param == "file":
        shared = tmp_path / "shared"
        shared.mkdir()
        return f"file://{shared}", {}
    server: S3Server = request.getfixturevalue("s3")
    bucket = server.bucket(f"nf-{os.getpid()}-{next(_buckets)}")
    return f"s3://{bucket}/team", server.env()


@pytest.fixture
def origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The team's repository: the fake target and a two-case suite, `.noisefloor/` ignored."""
    isolate_git(monkeypatch, tmp_path)
    repo = tmp_path / "origin"
    repo.mkdir()
    (repo / "fake_target.py").write_bytes(FAKE.read_bytes())
    fake_suite(repo, [answer_case("a"), answer_case("b")], repeats=3, baseline_repeats=4)
    (repo / ".gitignore").write_text(".noisefloor/\n")
    commit_all(repo, "the suite")
    git(repo, "branch", "-M", "main")
    return repo
