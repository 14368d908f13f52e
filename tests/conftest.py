"""Shared fixtures: every test gets its own store root and no network settings of the machine;
`cli` runs the real CLI in-process with stdout and stderr apart, `project` copies the fake target."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# numpy refuses to be imported twice in one process, and the `pytester` fixture takes back every
# module a test imported: imported before any test, it stays for every test of the process
import numpy  # noqa: F401
import orjson
import pytest

from noisefloor.cli.main import main
from tests.builders import FAKE


@pytest.fixture(autouse=True)
def _isolated_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_environment(monkeypatch, tmp_path / "store")


def isolated_environment(monkeypatch: pytest.MonkeyPatch, root: Path) -> Path:
    """The store root at `root`, and none of the machine's settings that change what a command
    does; returns `root`."""
    monkeypatch.setenv("NOISEFLOOR_ROOT", str(root))
    monkeypatch.delenv("NOISEFLOOR_JOBS", raising=False)
    # CI systems set CI=true, which makes a check without a baseline exit 3: tests that mean
    # to test that set it themselves
    monkeypatch.delenv("CI", raising=False)
    # under GitHub Actions every check would append its report to the job's summary
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for name in list(__import__("os").environ):
        if name.startswith("NOISEFLOOR_FAKE_"):
            monkeypatch.delenv(name)
    return root


@pytest.fixture(autouse=True)
def _no_network_settings_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's proxy or CA bundle must not route or refuse the tests' loopback traffic;
    tests that want them set them."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return orjson.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run `noisefloor ARGS...` in-process; returns the exit code, stdout and stderr."""

    def run(*args: str | Path) -> Result:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A directory holding a copy of the fake target, so its code can be edited."""
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(FAKE, work / "fake_target.py")
    return work
