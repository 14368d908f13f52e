"""A check while the world around the target drifted: a case the deep baseline calls regressed
takes repeats of the baseline's own version (its commit checked out beside the candidate) in the
same session, and is regressed only when it is worse than that control too."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from bench.servers.llm import LlmServer
from tests.builders import (
    FAKE,
    answer_case,
    commit_all,
    http_suite,
    isolate_git,
    paris_case,
    worktrees,
    write_suite,
)

#: The world the target answers in, outside its code: every second repeat answers off-topic.
DRIFTED = {"NOISEFLOOR_FAKE_FLAKE_EVERY": "2"}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture
def repo(tmp_path: Path, cli: Any) -> Path:
    """A repository holding the fake target and its suite (versioned by its git tree), with a
    50-repeat baseline adopted while every answer was right, committed."""
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(FAKE, work / "fake_target.py")
    (work / "README.md").write_text("# a question answerer\n")
    suite = {
        "name": "drift",
        "target": {
            "command": [sys.executable, "fake_target.py", "{{input}}", "--repeat", "{{repeat}}"],
            "output": "json",
            "timeout_s": 20,
        },
        "defaults": {"repeats": 5, "baseline_repeats": 50},
        "cases": [answer_case("capital")],
    }
    write_suite(work, suite)
    commit_all(work, "a question answerer")
    adopted = _check(cli, work)
    assert adopted.code == 0 and adopted.json()["adopted"], adopted.err
    commit_all(work, "the baseline")
    return work


def _check(cli: Any, repo: Path, *args: str) -> Any:
    return cli(
        "--root", repo / ".noisefloor", "check", repo / "suite.yaml", "--jobs", "4",
        "--format", "json", *args,
    )  # fmt: skip


def _neutral_commit(repo: Path) -> None:
    """A commit that changes the target's version and nothing it does."""
    readme = repo / "README.md"
    readme.write_text(readme.read_text() + "\nIt answers one question.\n")
    commit_all(repo, "docs")


def _case(report: dict[str, Any]) -> dict[str, Any]:
    (case,) = report["cases"]
    return case


def test_drift_after_the_adoption_is_not_a_regression(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _neutral_commit(repo)
    monkeypatch.setenv(*next(iter(DRIFTED.items())))
    log = tmp_path / "calls.log"
    monkeypatch.setenv("NOISEFLOOR_FAKE_LOG_CALLS", str(log))
    result = _check(cli, repo)
    report = result.json()
    case = _case(report)
    assert result.code == 0, case["reason"]
    assert case["verdict"] in ("unchanged", "inconclusive")
    control = case["sequential"]["control"]
    # the control's looks of 5, 10, 20, 40 and 80 repeats of the baseline's commit, each beside as many
    # fresh ones of the candidate's (judged against them, not the 5 that made the deep baseline
    # call it regressed): half right on both, so no look stops it before the last
    assert (control["repeats"], control["candidate_repeats"]) == (80, 80)
    assert case["sequential"]["candidate_repeats"] == 85
    assert control["verdict"] != "regressed"
    assert "(drift), not a regression" in case["reason"]
    assert "50/50" in case["reason"]  # the deep baseline's evidence stays in view
    assert report["calls"] == 5 + 80 + 80
    # the control's checkout is gone, and nothing of it is left for git
    assert worktrees(repo) == [str(repo.resolve())]
    assert [p.name for p in (repo / ".noisefloor" / "worktrees").iterdir()] == [".claims"]
    # the control's repeats joined the baseline's own sample directory, r50 up
    run = orjson.loads(
        (repo / ".noisefloor" / "runs" / "drift" / f"{report['candidate']}.json").read_bytes()
    )
    assert run["sequential"]["controls"] == {"capital": [5, 85, 50, 130]}
    assert run["sequential"]["control_looks"] == [5, 10, 20, 40, 80]
    # the control's calls (r50 up) and the candidate's (r5 up) went out interleaved, one of each
    # in every block of the schedule: neither side took its repeats in one stretch; and each
    # look of the control took both sides to its size before the next began
    repeats = [int(line.split()[1]) for line in log.read_text().splitlines()]
    assert sorted(repeats[:5]) == [0, 1, 2, 3, 4]
    looks = [repeats[5:15], repeats[15:25], repeats[25:45], repeats[45:85], repeats[85:]]
    # the candidate's fresh repeats from r5, the control's from r50 (past the baseline's own)
    assert [sorted(look) for look in looks] == [
        sorted([*range(5, 10), *range(50, 55)]),
        sorted([*range(10, 15), *range(55, 60)]),
        sorted([*range(15, 25), *range(60, 70)]),
        sorted([*range(25, 45), *range(70, 90)]),
        sorted([*range(45, 85), *range(90, 130)]),
    ]
    assert 7 <= sum(r >= 90 for r in looks[4][:20]) <= 13, looks[4]
    # diff judges the stored run again the same way, its control included
    again = cli("--root", repo / ".noisefloor", "diff", "--format", "json")
    assert again.code == 0, again.out
    assert _case(again.json())["verdict"] == case["verdict"]
    assert _case(again.json())["sequential"]["control"] == control


def test_a_real_break_under_the_same_drift_is_still_regressed(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = repo / "fake_target.py"
    program.write_text(
        program.read_text().replace(
            'default=_env("answer", "Paris")', 'default=_env("answer", "Lyon")'
        )
    )
    commit_all(repo, "a break")
    monkeypatch.setenv(*next(iter(DRIFTED.items())))
    result = _check(cli, repo)
    case = _case(result.json())
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    control = case["sequential"]["control"]
    assert control["verdict"] == "regressed"
    # confirmed at the control's look of 20 beside 20 (at 10, 5/10 -> 0/10 has p = 0.016,
    # above that look's share of alpha, 0.05 * 10/80)
    assert control["repeats"] == 20
    assert "10/20 -> 0/20" in control["reason"]
    assert result.json()["calls"] == 5 + 20 + 20


def test_without_a_runnable_baseline_version_the_deep_verdict_stands_and_says_why(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the baseline's commit is gone from every branch: rewritten history
    _neutral_commit(repo)
    suite = repo / "suite.yaml"
    text = suite.read_text()
    suite.write_text(text.replace("timeout_s: 20", "timeout_s: 21"))
    commit_all(repo, "a longer timeout")
    monkeypatch.setenv(*next(iter(DRIFTED.items())))
    result = _check(cli, repo)
    case = _case(result.json())
    assert result.code == 1
    assert case["verdict"] == "regressed"
    reason = case["sequential"]["control"]["reason"]
    assert reason.startswith("no concurrent control: commit ")
    assert "the suite's target settings changed" in reason


def test_a_budget_without_room_for_the_control_keeps_the_deep_verdict_and_says_so(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _neutral_commit(repo)
    monkeypatch.setenv(*next(iter(DRIFTED.items())))
    result = _check(cli, repo, "--max-calls", "10")
    report = result.json()
    case = _case(report)
    assert result.code == 1
    assert case["sequential"]["control"] == {
        "reason": "no concurrent control: --max-calls 10 leaves no room for its 160 calls"
    }
    assert report["calls"] == 5


def test_an_endpoint_whose_settings_changed_is_controlled_by_the_baselines_settings(
    cli: Any, tmp_path: Path
) -> None:
    """A new temperature checked after the server's answers drifted: the control is the
    baseline's settings, sent to the same server in the same session."""
    with LlmServer() as server:
        suite = http_suite(tmp_path, server.base_url, [paris_case("capital")], repeats=5)
        doc = yaml.safe_load(suite.read_text())
        doc["defaults"]["baseline_repeats"] = 30
        write_suite(tmp_path, doc)
        adopted = cli("check", suite, "--adopt", "--format", "json")
        assert adopted.code == 0 and adopted.json()["adopted"], adopted.err
        doc["target"]["http"]["temperature"] = 0.7
        write_suite(tmp_path, doc)
        # every answer off from now on, to both versions alike: an answer off by the order of
        # arrival (every second one) would fall to one version or the other as the random
        # schedule orders them, and make the two arms differ by chance
        server.drift(1)
        before = len(server.requests)
        result = cli("check", suite, "--jobs", "4", "--format", "json")
        sent = [r["body"].get("temperature") for r in server.requests[before:]]
    report = result.json()
    case = _case(report)
    assert result.code == 0, case["reason"]
    control = case["sequential"]["control"]
    assert control["repeats"] == 80 and control["verdict"] != "regressed"
    assert "(drift), not a regression" in case["reason"]
    # the control asked with the baseline's settings, the candidate with its own
    assert sent.count(None) == 80
    assert sent.count(0.7) == case["sequential"]["candidate_repeats"]


def test_an_endpoints_settings_are_kept_for_a_control_unless_a_secret_stands_among_them(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "nf_secret_in_settings_42"
    monkeypatch.setenv("TEST_KEY", key)
    # a variable not named like a secret that holds the key's value anyway (a suite refuses
    # one named like a secret at load)
    monkeypatch.setenv("USER_TAG", key)
    for name in ("plain", "holding"):
        (tmp_path / name).mkdir()
    with LlmServer() as server:
        plain = http_suite(tmp_path / "plain", server.base_url, [paris_case("a")], temperature=0.2)
        holding = http_suite(
            tmp_path / "holding",
            server.base_url,
            [paris_case("a")],
            name="holding",
            api_key_env="TEST_KEY",
            extra_body={"user": "${USER_TAG}"},
        )
        done = [cli("run", suite, "--format", "json") for suite in (plain, holding)]
    assert [d.code for d in done] == [0, 0], [d.err for d in done]
    kept = [d.json()["run"]["run_id"] for d in done]
    root = tmp_path / "store" / "runs"
    settings = orjson.loads((root / "http" / f"{kept[0]}.json").read_bytes())["target"]["settings"]
    assert settings["http"]["temperature"] == 0.2
    record = (root / "holding" / f"{kept[1]}.json").read_bytes()
    assert orjson.loads(record)["target"]["settings"] is None
    assert key.encode() not in record
