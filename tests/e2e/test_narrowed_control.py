"""A command target whose version is narrowed to its `fingerprint:` globs keeps its concurrent
control: the baseline's version runs from the newest commit whose matched files have the
content it had, checked out beside the candidate; outside git, the deep verdict says why not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.builders import commit_all, isolate_git, narrowed_world, reworded, world_check


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


def _mid(result: Any) -> dict[str, Any]:
    (case,) = [c for c in result.json()["cases"] if c["case_id"] == "mid"]
    return case


def test_a_narrowed_version_is_controlled_by_the_commit_that_held_its_files(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = narrowed_world(cli, tmp_path / "repo", monkeypatch, ["mid"], 0.7, depth=50)
    # commits of other files since: the newest commit holding the program as it was is the
    # baseline's own, the one before the program was reworded
    (repo / "README.md").write_text("# an answerer, documented\n")
    commit_all(repo, "docs")
    reworded(repo, 1)
    monkeypatch.setenv("WORLD", "drifted")
    monkeypatch.setenv("WORLD_RATE", "0.3")
    result = world_check(cli, repo)
    case = _mid(result)
    assert result.code == 0, case["reason"]
    control = case["sequential"]["control"]
    assert control["repeats"] >= 5, control["reason"]
    assert control["drift"]["beyond"] is False
    assert case["verdict"] in ("unchanged", "inconclusive")
    assert "(drift), not a regression" in case["reason"]
    # the control's repeats joined the baseline's own sample directory, past its 50
    run = orjson.loads(
        (
            repo / ".noisefloor" / "runs" / "world" / f"{result.json()['candidate']}.json"
        ).read_bytes()
    )
    assert run["sequential"]["controls"]["mid"][2] == 50
    assert [p.name for p in (repo / ".noisefloor" / "worktrees").iterdir()] == [".claims"]


def test_a_narrowed_version_outside_git_keeps_the_deep_verdict_and_says_why(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = narrowed_world(cli, tmp_path / "plain", monkeypatch, ["mid"], 0.7, depth=50, git=False)
    reworded(repo, 1, git=False)
    monkeypatch.setenv("WORLD", "drifted")
    monkeypatch.setenv("WORLD_RATE", "0.3")
    result = world_check(cli, repo)
    case = _mid(result)
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    control = case["sequential"]["control"]
    assert control["drift"]["beyond"] is False
    assert control["reason"].startswith(
        "no concurrent control: the baseline's command target ("
    ) and control["reason"].endswith(
        ") cannot be built again here: only a command target "
        "versioned by git, an endpoint whose settings the baseline's run kept, or the baseline's "
        "own version can be run beside the candidate"
    )
