"""A check while the world around the target drifted: a case the deep baseline calls regressed
takes repeats of the baseline's own version (its commit checked out beside the candidate) in the
same session, and is regressed only when it is worse than that control too; unless no drift the
store has seen reaches its drop, when it takes none."""

from __future__ import annotations

import shutil
import sqlite3
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

#: The fake target's world, outside its code: every second repeat answers off-topic (r0, r2...).
HALF_OFF = ("NOISEFLOOR_FAKE_FLAKE_EVERY", "2")
#: Every repeat answers off-topic.
ALL_OFF = ("NOISEFLOOR_FAKE_FLAKE_EVERY", "1")
#: Every third repeat answers off-topic (r0, r3...).
THIRD_OFF = ("NOISEFLOOR_FAKE_FLAKE_EVERY", "3")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


def _adopted(
    cli: Any, work: Path, monkeypatch: pytest.MonkeyPatch, world: tuple[str, str] | None
) -> Path:
    """A repository holding the fake target and its suite (versioned by its git tree), with a
    50-repeat baseline adopted in `world` (None: every answer right), committed."""
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
    with monkeypatch.context() as adoption:
        if world is not None:
            adoption.setenv(*world)
        adopted = _check(cli, work)
    assert adopted.code == 0 and adopted.json()["adopted"], adopted.err
    commit_all(work, "the baseline")
    return work


@pytest.fixture
def repo(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A baseline whose case passed 25 of its 50 repeats: room for a session to drift."""
    return _adopted(cli, tmp_path / "repo", monkeypatch, HALF_OFF)


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


def _break(repo: Path) -> None:
    program = repo / "fake_target.py"
    program.write_text(
        program.read_text().replace(
            'default=_env("answer", "Paris")', 'default=_env("answer", "Lyon")'
        )
    )
    commit_all(repo, "a break")


def _case(report: dict[str, Any]) -> dict[str, Any]:
    (case,) = report["cases"]
    return case


def _statuses(root: Path, run_id: str) -> dict[str, int]:
    """The ledger's rows of a run, counted by status."""
    with sqlite3.connect(root / "ledger.sqlite") as db:
        rows = db.execute(
            "SELECT status, count(*) FROM run_samples WHERE run_id = ? GROUP BY status", (run_id,)
        ).fetchall()
    return dict(rows)


def test_drift_after_the_adoption_is_not_a_regression(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _neutral_commit(repo)
    monkeypatch.setenv(*ALL_OFF)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("NOISEFLOOR_FAKE_LOG_CALLS", str(log))
    result = _check(cli, repo)
    report = result.json()
    case = _case(report)
    assert result.code == 0, case["reason"]
    # 25/50 -> 0/10 is regressed at the second look; drift of the prior's size reaches it
    control = case["sequential"]["control"]
    assert control["drift"]["beyond"] is False
    assert control["drift"]["candidate"] == [0, 10]
    assert control["drift"]["p"] > control["drift"]["threshold"]
    # the control's looks of 5, 10, 20, 40 and 80 repeats of the baseline's commit, each beside
    # as many fresh ones of the candidate's (judged against them, not the 10 that made the deep
    # baseline call it regressed): no answer right on either side, so no look stops it
    assert (control["repeats"], control["candidate_repeats"]) == (80, 80)
    assert case["sequential"]["candidate_repeats"] == 90
    assert control["verdict"] == "unchanged"
    # 0/80 beside 0/80: an interval of change that excludes a drop of 0.2, so unchanged
    assert case["verdict"] == "unchanged"
    assert "(drift), not a regression" in case["reason"]
    assert (
        "0.50 in the deep baseline's sessions (25/50), 0.00 in this check's (0/80)"
        in (case["reason"])
    )
    assert report["calls"] == 10 + 80 + 80
    # the control's checkout is gone, and nothing of it is left for git
    assert worktrees(repo) == [str(repo.resolve())]
    assert [p.name for p in (repo / ".noisefloor" / "worktrees").iterdir()] == [".claims"]
    # the control's repeats joined the baseline's own sample directory, r50 up
    run = orjson.loads(
        (repo / ".noisefloor" / "runs" / "drift" / f"{report['candidate']}.json").read_bytes()
    )
    assert run["sequential"]["controls"] == {"capital": [10, 90, 50, 130]}
    assert run["sequential"]["control_looks"] == [5, 10, 20, 40, 80]
    # the control's calls (r50 up) and the candidate's (r10 up) went out interleaved, one of
    # each in every block of the schedule: neither side took its repeats in one stretch; and
    # each look of the control took both sides to its size before the next began
    repeats = [int(line.split()[1]) for line in log.read_text().splitlines()]
    assert sorted(repeats[:10]) == list(range(10))
    looks = [repeats[10:20], repeats[20:30], repeats[30:50], repeats[50:90], repeats[90:]]
    assert [sorted(look) for look in looks] == [
        sorted([*range(10, 15), *range(50, 55)]),
        sorted([*range(15, 20), *range(55, 60)]),
        sorted([*range(20, 30), *range(60, 70)]),
        sorted([*range(30, 50), *range(70, 90)]),
        sorted([*range(50, 90), *range(90, 130)]),
    ]
    assert 7 <= sum(r >= 90 for r in looks[4][:20]) <= 13, looks[4]
    # every repeat the check took of its own version is a pass or a fail in the ledger, the
    # 80 taken beside the control included
    assert _statuses(repo / ".noisefloor", report["candidate"]) == {"fail": 90}
    # diff judges the stored run again the same way, its control included
    again = cli("--root", repo / ".noisefloor", "diff", "--format", "json")
    assert again.code == 0, again.out
    assert _case(again.json())["verdict"] == case["verdict"]
    assert _case(again.json())["sequential"]["control"] == control


def test_a_break_no_drift_reaches_takes_no_control(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50/50 -> 0/5: a rate the store has only seen at 1 has no room to drift, so the drop is
    confirmed at the first look, without a call of the baseline's version."""
    repo = _adopted(cli, tmp_path / "repo", monkeypatch, None)
    _break(repo)
    result = _check(cli, repo)
    case = _case(result.json())
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    control = case["sequential"]["control"]
    assert set(control) == {"reason", "drift"}
    assert control["reason"].startswith(
        "no concurrent control: none needed: 1:contains 50/50 -> 0/5"
    )
    assert (
        "no drift this store has seen of the baseline's version reaches the drop"
        in (control["reason"])
    )
    drift = control["drift"]
    assert drift["beyond"] is True and drift["p"] <= drift["threshold"]
    assert (drift["baseline"], drift["candidate"]) == ([50, 50], [0, 5])
    # the store holds one session of the baseline's version: the prior decides
    assert drift["rho"] == drift["prior"] == 0.05 and drift["sessions"] == 0
    assert result.json()["calls"] == 5
    assert not (repo / ".noisefloor" / "worktrees").exists()


def test_a_drop_the_stores_sessions_put_beyond_drift_takes_no_control(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drop of the first test, 25 of 50 -> 0 of 10, once the store holds the baseline's
    version over five sessions of 50 (the adoption and four `baseline deepen`s), each passing
    exactly half: the learned drift is a quarter of the prior's, and no longer reaches it."""
    repo = tmp_path / "repo"
    with monkeypatch.context() as deep:
        deep.setenv(*HALF_OFF)
        _adopted(cli, repo, deep, None)
        suite = repo / "suite.yaml"
        doc = yaml.safe_load(suite.read_text())
        doc["defaults"]["baseline_repeats"] = 250
        write_suite(repo, doc)
        commit_all(repo, "a deeper baseline")
        for depth in (100, 150, 200, 250):
            done = cli(
                "--root", repo / ".noisefloor", "baseline", "deepen", suite, "--repeats", depth
            )
            assert done.code == 0, done.err
        commit_all(repo, "the baseline, deepened")
    _neutral_commit(repo)
    monkeypatch.setenv(*ALL_OFF)
    result = _check(cli, repo)
    case = _case(result.json())
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    drift = case["sequential"]["control"]["drift"]
    assert (drift["baseline"], drift["candidate"]) == ([125, 250], [0, 10])
    assert drift["sessions"] == 5 and drift["rho"] < drift["prior"] / 3
    assert drift["beyond"] is True
    assert case["sequential"]["control"]["reason"].startswith("no concurrent control: none needed")
    assert result.json()["calls"] == 10


def test_a_real_break_under_drift_within_reach_is_regressed_by_its_control(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _break(repo)
    monkeypatch.setenv(*THIRD_OFF)
    result = _check(cli, repo)
    case = _case(result.json())
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    control = case["sequential"]["control"]
    assert control["drift"]["beyond"] is False
    assert control["verdict"] == "regressed"
    # confirmed at the control's look of 10 beside 10: the baseline's commit answers right two
    # times in three in this world (r51, r52, r53, r55, r56...), the break never
    assert control["repeats"] == 10
    assert "7/10 -> 0/10" in control["reason"]
    assert result.json()["calls"] == 10 + 10 + 10


def test_without_a_runnable_baseline_version_the_deep_verdict_stands_and_says_why(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the baseline's commit is gone from every branch: rewritten history
    _neutral_commit(repo)
    suite = repo / "suite.yaml"
    text = suite.read_text()
    suite.write_text(text.replace("timeout_s: 20", "timeout_s: 21"))
    commit_all(repo, "a longer timeout")
    monkeypatch.setenv(*ALL_OFF)
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
    monkeypatch.setenv(*ALL_OFF)
    result = _check(cli, repo, "--max-calls", "12")
    report = result.json()
    case = _case(report)
    assert result.code == 1
    control = case["sequential"]["control"]
    assert (
        control["reason"]
        == "no concurrent control: --max-calls 12 leaves no room for its 160 calls"
    )
    assert report["calls"] == 10


@pytest.mark.parametrize(("budget", "taken"), [(169, False), (170, True)])
def test_a_budget_counts_the_calls_already_taken_before_a_control(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch, budget: int, taken: bool
) -> None:
    """The looks took 10 calls and the control asks for 160 more: a budget of 169 covers the
    control's calls alone, not with those already taken, and refuses it; 170 takes it."""
    _neutral_commit(repo)
    monkeypatch.setenv(*ALL_OFF)
    result = _check(cli, repo, "--max-calls", str(budget))
    report = result.json()
    control = _case(report)["sequential"]["control"]
    if taken:
        assert control["repeats"] == 80
        assert report["calls"] == 170
    else:
        assert control["reason"] == (
            f"no concurrent control: --max-calls {budget} leaves no room for its 160 calls"
        )
        assert report["calls"] == 10


def test_a_regressed_case_whose_input_was_edited_takes_no_control_and_says_why(
    cli: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = repo / "suite.yaml"
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][0]["input"] = "question capital, asked again"
    write_suite(repo, doc)
    commit_all(repo, "the question reworded")
    monkeypatch.setenv(*ALL_OFF)
    result = _check(cli, repo)
    case = _case(result.json())
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    assert case["sequential"]["control"] == {
        "reason": "no concurrent control: its input changed since the baseline: the baseline's "
        "input is not run again"
    }
    assert result.json()["calls"] == 10
    assert not (repo / ".noisefloor" / "worktrees").exists()


def _mid_range_endpoint(cli: Any, tmp_path: Path, server: LlmServer) -> tuple[Path, dict[str, Any]]:
    """A suite of one case at `server`, adopted 30 deep while every second answer was off."""
    suite = http_suite(tmp_path, server.base_url, [paris_case("capital")], repeats=5)
    doc = yaml.safe_load(suite.read_text())
    doc["defaults"]["baseline_repeats"] = 30
    write_suite(tmp_path, doc)
    server.drift(2)
    adopted = cli("check", suite, "--adopt", "--format", "json")
    assert adopted.code == 0 and adopted.json()["adopted"], adopted.err
    return suite, doc


def test_an_endpoint_whose_settings_changed_is_controlled_by_the_baselines_settings(
    cli: Any, tmp_path: Path
) -> None:
    """A new temperature checked after the server's answers drifted: the control is the
    baseline's settings, sent to the same server in the same session."""
    with LlmServer() as server:
        suite, doc = _mid_range_endpoint(cli, tmp_path, server)
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
    assert control["repeats"] == 80 and control["verdict"] == "unchanged"
    assert "(drift), not a regression" in case["reason"]
    # the control asked with the baseline's settings, the candidate with its own
    assert sent.count(None) == 80
    assert sent.count(0.7) == case["sequential"]["candidate_repeats"]


def test_an_endpoint_that_does_not_answer_is_called_once_and_named(
    cli: Any, tmp_path: Path
) -> None:
    """The suite moved to another server, and the baseline's no longer answers: its control
    stops at the first connection refused (one call, no retry), the deep verdict stands and
    says so, and the check's own answers stay passes and fails in the ledger."""
    with LlmServer() as old:
        suite, doc = _mid_range_endpoint(cli, tmp_path, old)
        gone = old.base_url
    with LlmServer() as new:
        new.drift(1)
        doc["target"]["http"]["base_url"] = new.base_url
        write_suite(tmp_path, doc)
        result = cli("check", suite, "--allow-target-change", "--format", "json")
    report = result.json()
    case = _case(report)
    assert result.code == 1, case["reason"]
    assert case["verdict"] == "regressed"
    reason = case["sequential"]["control"]["reason"]
    assert reason.startswith(
        f"no concurrent control: the baseline's endpoint {gone} did not answer"
    )
    root = tmp_path / "store"
    probes = [
        orjson.loads(path.read_bytes())
        for path in (root / "samples" / "http").glob("*/e*/capital/*/r*.json")
        if int(path.stem[1:]) >= 30
    ]
    assert len(probes) == 1
    assert probes[0]["outcome"] == "error:infra" and probes[0]["attempts"] == 1
    assert report["calls"] == case["sequential"]["candidate_repeats"] + 1
    assert set(_statuses(root, report["candidate"])) == {"fail"}


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
