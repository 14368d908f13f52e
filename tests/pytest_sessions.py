"""pytest sessions of a project as the plugin's end-to-end and quality tests drive them: through
`pytester` in a git repository, in a subprocess or in process, each test's JUnit outcome and
noisefloor properties read back."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from noisefloor.targets import kinds
from tests.builders import isolate_git

#: Plugins the sessions leave off: the cache writes into the repository, and hypothesis's plugin
#: imports hypothesis at the end of every session (a second each).
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

#: One session: its result and, per test name, the JUnit XML's outcome and properties.
Session = Callable[..., tuple[pytest.RunResult, dict[str, dict[str, Any]]]]


def junit_tests(xml: Path) -> dict[str, dict[str, Any]]:
    """Each test case of a JUnit XML file by name: its properties, its failure's message and
    text (None when it did not fail), and whether it was skipped."""
    tests: dict[str, dict[str, Any]] = {}
    for case in ET.parse(xml).iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        failed = case.find("failure")
        tests[case.get("name", "")] = {
            **props,
            "failed": failed.get("message", "") + "\n" + (failed.text or "")
            if failed is not None
            else None,
            "skipped": case.find("skipped") is not None,
        }
    return tests


def session_runner(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    ini: str,
    *,
    in_process: bool = False,
) -> Session:
    """Sessions of the project in `pytester.path`, a git repository once committed, whose ini is
    `ini`: `run(*args, salt=...)` runs one with SALT set (each session's luck) and returns its
    result and tests."""
    isolate_git(monkeypatch, tmp_path)
    if in_process:
        # a session registers the `pytest` target kind in its process: this test's alone
        monkeypatch.setattr(kinds, "_kinds", dict(kinds._load()))
        monkeypatch.setattr(kinds, "_spec", None)
    pytester.makeini(ini)
    # what pytester and the sessions leave in the repository is not the tests' code
    (pytester.path / ".gitignore").write_text("runpytest-*\nstdout\nstderr\n__pycache__/\n")
    reports = tmp_path / "junit"
    reports.mkdir()

    def run(*args: str, salt: str = "s0") -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
        monkeypatch.setenv("SALT", salt)
        xml = reports / f"{len(list(reports.iterdir()))}.xml"
        how = pytester.runpytest_inprocess if in_process else pytester.runpytest_subprocess
        result = how(*QUIET, f"--junitxml={xml}", *args)
        return result, junit_tests(xml)

    return run
