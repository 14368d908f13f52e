"""A case the looks leave in doubt at the cap takes a concurrent control too: the baseline's own
version beside it confirms a drop the deep baseline half saw, and clears the doubt only where the
interval of change against it excludes a drop that matters."""

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


def test_doubt_a_short_control_cannot_clear_stays_inconclusive_and_says_what_would(
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
    assert case["sequential"]["stopped"] == "cap"
    control = case["sequential"]["control"]
    # 10 of 20 beside 10 of 20 shows no drop, but its interval of change still reaches one of
    # 0.2: the doubt stays, with what would decide it
    assert control["repeats"] == 20
    assert case["verdict"] == control["verdict"] == "inconclusive"
    assert "pass rate 10/20 -> 10/20: the 95% interval of change [" in control["reason"]
    assert "still reaches a drop of 0.2; about " in control["reason"]
    assert "repeats of each version beside the other would decide it" in control["reason"]
    assert case["reason"].startswith("in doubt against the baseline's own version taken beside")
    assert "against the deep baseline: 0:contains: pass rate 63/100 -> 28/60" in case["reason"]
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
