"""Shared fixtures: every test gets its own store root, and helpers to write suites for the fake
target and to run the real CLI in-process with stdout and stderr apart."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from noisefloor.cli.main import main

FAKE = Path(__file__).resolve().parents[1] / "bench" / "fake_target.py"


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


def fake_suite(
    directory: Path,
    cases: list[dict[str, Any]],
    *,
    name: str = "fake",
    env: dict[str, str] | None = None,
    repeats: int = 5,
    baseline_repeats: int | None = None,
    extra_argv: list[str] | None = None,
    **target: Any,
) -> Path:
    """Write a suite whose target is the fake program in `directory`; return its path.

    Its baseline is `baseline_repeats` deep (default: `repeats`), so that a first check adopts
    no more than a test asks for."""
    suite = {
        "name": name,
        "target": {
            "command": [
                sys.executable,
                "fake_target.py",
                "{{input}}",
                "--repeat",
                "{{repeat}}",
                *(extra_argv or []),
            ],
            "output": "json",
            "timeout_s": 20,
            "env": env or {},
            "fingerprint": ["fake_target.py"],
            **target,
        },
        "defaults": {"repeats": repeats, "baseline_repeats": baseline_repeats or repeats},
        "cases": cases,
    }
    path = directory / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


def answer_case(case_id: str, needle: str = "Paris", **extra: Any) -> dict[str, Any]:
    """A case that passes when the answer contains `needle`."""
    return {
        "id": case_id,
        "input": f"question {case_id}",
        "scorers": ["json_valid", {"type": "contains", "needle": needle, "path": "answer"}],
        **extra,
    }
