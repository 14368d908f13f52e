"""A derived file found corrupt is built again from its inputs: the next check recomputes it and
decides as a check that never saw it broken, with no target call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import answer_case, fake_suite

KINDS = ("scores", "bands", "verdicts", "reports")
DAMAGE = {
    "emptied": lambda data: b"",
    "garbage": lambda data: b"\x00\xff not json at all",
    "cut in half": lambda data: data[: len(data) // 2],
    "another record": lambda data: b'{"version": 1, "something": "else"}',
}


def derived(root: Path, kind: str) -> list[Path]:
    return sorted(p for p in (root / kind).rglob("*.json"))


def damage_all(root: Path, kind: str, how: str) -> int:
    files = derived(root, kind)
    for path in files:
        path.write_bytes(DAMAGE[how](path.read_bytes()))
    return len(files)


@pytest.fixture
def checked(cli: Any, project: Path) -> tuple[Path, dict[str, Any]]:
    log = project / "calls.log"
    suite = fake_suite(
        project,
        [answer_case("alpha"), answer_case("beta")],
        env={"NOISEFLOOR_FAKE_LOG_CALLS": str(log)},
    )
    assert cli("check", suite).code == 0
    first = cli("check", suite, "--format", "json")
    assert first.code == 0
    return suite, first.json()


#: What makes a check read each kind of file again: the files downstream of it are gone
#: (scores, verdicts), a threshold changed (bands: the verdicts read them), or nothing (the report).
DOWNSTREAM = {"scores": ("bands", "reports"), "bands": (), "verdicts": ("reports",), "reports": ()}
#: The task that rebuilds each kind.
TASK = {"scores": "score", "bands": "band", "verdicts": "verdict", "reports": "report"}


@pytest.mark.parametrize("how", sorted(DAMAGE))
@pytest.mark.parametrize("kind", KINDS)
def test_a_corrupt_derived_file_is_rebuilt(cli, project, checked, kind: str, how: str) -> None:
    suite, first = checked
    root = project.parent / "store"
    calls = (project / "calls.log").read_text().count("\n")
    assert damage_all(root, kind, how) > 0
    for downstream in DOWNSTREAM[kind]:
        for path in (root / downstream).rglob("*"):
            if path.is_file():
                path.unlink()
    if kind == "bands":
        doc = yaml.safe_load(suite.read_text())
        doc["cases"][0]["scorers"][1]["min_effect"] = 0.3
        suite.write_text(yaml.safe_dump(doc))
    again = cli("check", suite, "--format", "json")
    assert again.code == 0, again.err
    report = again.json()
    assert report["counts"] == first["counts"]
    assert report["calls"] == 0
    assert (project / "calls.log").read_text().count("\n") == calls
    # the corrupt files were built again by their own tasks, and read back whole
    assert report["work"]["executed"].get(TASK[kind], 0) >= 1, report["work"]
    for path in derived(root, kind):
        assert path.read_bytes()[:1] in (b"{", b"["), path
