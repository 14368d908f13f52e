"""A case the looks leave in doubt at the cap takes a concurrent control too: the baseline's own
version beside it decides whether the doubt was drift or a drop the deep baseline half saw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import adopted_world, commit_all, isolate_git, world_check, worse_world


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture
def repo(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose one case passed 63 of its 100 adopted repeats, in a world at 0.7."""
    return adopted_world(cli, tmp_path / "repo", monkeypatch, ["mid"], 0.7)


def _mid(result: Any) -> dict[str, Any]:
    (case,) = result.json()["cases"]
    return case


def test_doubt_the_world_caused_is_cleared_by_the_control_and_named_drift(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "README.md").write_text("# an answerer, documented\n")
    commit_all(repo, "docs")
    # the world moved from 0.7 to 0.55: 28 of 60 against the deep baseline's 63 of 100 is in
    # doubt at the cap, neither regressed nor clear
    monkeypatch.setenv("WORLD", "w23")
    monkeypatch.setenv("WORLD_RATE", "0.55")
    result = world_check(cli, repo)
    case = _mid(result)
    assert result.code == 0, case["reason"]
    assert case["verdict"] == "unchanged"
    assert case["sequential"]["stopped"] == "cap"
    control = case["sequential"]["control"]
    assert control["verdict"] == "unchanged" and control["repeats"] == 20
    assert (
        "where the deep baseline left it in doubt (0:contains: pass rate 63/100 -> 28/60"
        in (case["reason"])
    )
    assert case["reason"].endswith(
        "drift: 0:contains 0.63 in the deep baseline's sessions (63/100), 0.50 in this check's "
        "(10/20)"
    )
    again = cli("--root", repo / ".noisefloor", "diff", "--format", "json")
    assert again.code == 0, again.out
    assert _mid(again)["reason"] == case["reason"]
    assert _mid(again)["sequential"] == case["sequential"]


def test_doubt_the_code_caused_is_confirmed_by_the_control(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worse_world(repo, 0.25)
    monkeypatch.setenv("WORLD", "v65")
    result = world_check(cli, repo)
    case = _mid(result)
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    assert case["sequential"]["stopped"] == "cap"
    control = case["sequential"]["control"]
    assert control["verdict"] == "regressed"
    assert case["reason"].startswith("worse than the baseline's own version taken beside it")
    assert "in doubt against the deep baseline (0:contains: pass rate 63/100 -> " in case["reason"]
