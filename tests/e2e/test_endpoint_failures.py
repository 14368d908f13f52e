"""End-to-end through the real CLI, as a real process, against a loopback endpoint: what the gate
says when the endpoint fails (down, rate-limited for too long) or the model fails (answers cut
at `max_tokens`): never green when nothing was measured, never `broken` for a model's failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import yaml

from bench.servers.llm import LlmServer
from tests.builders import CAPITAL, commit_all, http_suite, isolate_git, paris_case


def nf(*args: str | Path, root: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m noisefloor ARGS...` as a real process, so the exit status is the process's."""
    return subprocess.run(
        [sys.executable, "-m", "noisefloor", *map(str, args)],
        env={**os.environ, "NOISEFLOOR_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def endpoint_suite(
    directory: Path,
    base_url: str,
    prompts: dict[str, str],
    *,
    max_retries: int | None = None,
    **http: Any,
) -> Path:
    """A suite of one Paris case per prompt against the endpoint at `base_url`; retries are the
    tool's defaults unless given."""
    cases = [paris_case(case_id, prompt, json_valid=False) for case_id, prompt in prompts.items()]
    return http_suite(
        directory,
        base_url,
        cases,
        name="endpoint",
        max_retries=max_retries,
        retry_budget=None,
        **http,
    )


def by_case(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["case_id"]: case for case in report["cases"]}


def test_answers_cut_at_max_tokens_regress_the_case_and_quote_the_finish_reason(
    tmp_path, _isolated_root
):
    # the first five answers are whole, every later one is cut at max_tokens
    prompts = {"cut": f"{CAPITAL} [length:5]", "steady": CAPITAL}
    with LlmServer() as server:
        suite = endpoint_suite(tmp_path, server.base_url, prompts)
        first = nf("check", suite, "--repeats", "5", root=_isolated_root)
        assert first.returncode == 0, first.stderr
        swapped = nf(
            "check", suite, "--repeats", "5", "--fresh", "--format", "json", root=_isolated_root
        )
        terminal = nf("diff", root=_isolated_root)

    # the model failed, not the target: regressed (exit 1), never broken (exit 2)
    assert swapped.returncode == 1, swapped.stdout + swapped.stderr
    report = orjson.loads(swapped.stdout)
    cut = by_case(report)["cut"]
    assert cut["verdict"] == "regressed", cut
    (scorer,) = cut["scorers"]
    assert (scorer["baseline"]["k"], scorer["baseline"]["n"]) == (5, 5)
    assert (scorer["candidate"]["k"], scorer["candidate"]["n"]) == (0, 5)
    assert scorer["candidate"]["infra_errors"] == 0
    assert any("finish:length" in detail for detail in scorer["candidate"]["details"])
    assert by_case(report)["steady"]["verdict"] == "unchanged"
    assert terminal.returncode == 1
    assert "REGRESSED  cut" in terminal.stdout
    assert "finish:length" in terminal.stdout


def test_a_check_or_record_against_a_dead_endpoint_exits_3_and_keeps_what_it_took(
    tmp_path, _isolated_root
):
    prompts = {"first": CAPITAL, "second": f"{CAPITAL} again: Paris"}
    with LlmServer() as server:
        suite = endpoint_suite(tmp_path, server.base_url, prompts, max_retries=1)
        baseline = nf("check", suite, root=_isolated_root)
        assert baseline.returncode == 0, baseline.stderr
        host = server.base_url.split("/")[2]
    # the endpoint is gone: every call is refused
    down = nf("check", suite, "--fresh", "--format", "json", root=_isolated_root)
    record = nf("record", suite, "--label", "down", "--fresh", root=_isolated_root)

    assert down.returncode == 3, down.stdout + down.stderr
    report = orjson.loads(down.stdout)
    line = report["unmeasured"]
    assert report["exit_code"] == 3 and "\n" not in line
    assert "6 of 6 repeats failed on the infrastructure" in line
    assert host in line and "after 2 attempts" in line
    assert "fewer valid repeats than 3: first, second" in line
    for case in report["cases"]:
        assert case["verdict"] == "inconclusive"
        assert case["sequential"]["stopped"] == "unmeasured"  # never `clear`
    # nothing is lost: the run and each sample it took are stored
    runs = [orjson.loads(p.read_bytes()) for p in (_isolated_root / "runs").rglob("*.json")]
    assert report["candidate"] in {run["run_id"] for run in runs}
    outcomes = [
        orjson.loads(p.read_bytes())["outcome"]
        for p in (_isolated_root / "samples").rglob("r*.json")
    ]
    assert outcomes.count("error:infra") == 6 * 2 and outcomes.count("ok") == 6

    assert record.returncode == 3, record.stdout + record.stderr
    assert f"error: {line}" in " ".join(record.stdout.split())  # wrapped at the width
    assert "Traceback" not in down.stderr + record.stderr

    # the endpoint is back: the next check takes only the repeats the outage lost, in new files
    with LlmServer(port=int(host.rsplit(":", 1)[1])) as server:
        back = nf("check", suite, "--format", "json", root=_isolated_root)
        assert len(server.requests) == 6
    assert back.returncode == 0, back.stdout + back.stderr
    report = orjson.loads(back.stdout)
    assert report["calls"] == 6
    for case in report["cases"]:
        assert case["verdict"] == "unchanged", case
        (scorer,) = case["scorers"]
        # the lost repeats are counted, never judged
        assert (scorer["candidate"]["k"], scorer["candidate"]["n"]) == (3, 3)
        assert scorer["candidate"]["infra_errors"] == 3
    after = [orjson.loads(p.read_bytes()) for p in (_isolated_root / "samples").rglob("r*.json")]
    assert len(after) == len(outcomes) + 6  # every earlier sample is still there


def test_repeats_lost_to_the_infrastructure_are_taken_again_and_counted(tmp_path, _isolated_root):
    # the prompt's first two requests fail; without retries, two repeats are lost
    with LlmServer() as server:
        suite = endpoint_suite(
            tmp_path, server.base_url, {"flaky": f"{CAPITAL} [500:2]"}, max_retries=0
        )
        result = nf(
            "run", suite, "--jobs", "1", "--format", "json", "--set-baseline", root=_isolated_root
        )
        assert len(server.requests) == 5
    assert result.returncode == 0, result.stdout + result.stderr
    summary = orjson.loads(result.stdout)
    assert summary["calls"] == 5
    ((case,),) = [summary["run"]["cases"]]
    assert case["repeats"] == 5  # three valid repeats, after the two the outage lost
    (scorer,) = summary["cases"][0]["scorers"]
    assert (scorer["side"]["k"], scorer["side"]["n"], scorer["side"]["infra_errors"]) == (3, 3, 2)


def test_a_retry_after_past_the_limit_ends_the_call_as_an_infrastructure_error(
    tmp_path, _isolated_root
):
    # a daily quota: waiting it out would stall the run for an hour
    with LlmServer(retry_after="3600") as server:
        suite = endpoint_suite(tmp_path, server.base_url, {"quota": f"{CAPITAL} [429:1000]"})
        result = nf(
            "run", suite, "--repeats", "1", "--format", "json", root=_isolated_root, timeout=60
        )
        assert len(server.requests) == 1

    samples = [orjson.loads(p.read_bytes()) for p in (_isolated_root / "samples").rglob("r*.json")]
    assert [s["outcome"] for s in samples] == ["error:infra"]
    assert "Retry-After of 3600 s is too long to wait" in samples[0]["error"]
    assert result.returncode == 3, result.stdout
    assert "Retry-After of 3600 s is too long to wait" in orjson.loads(result.stdout)["unmeasured"]


def test_a_scorer_whose_path_matches_nothing_is_called_out_on_adoption_and_every_check(
    tmp_path, _isolated_root
):
    with LlmServer() as server:
        suite = endpoint_suite(tmp_path, server.base_url, {"capital": CAPITAL})
        doc = yaml.safe_load(suite.read_text(encoding="utf-8"))
        # the same typo fails one scorer and passes the other, whatever the answers
        doc["cases"][0]["scorers"] = [
            {"type": "contains", "needle": "Paris", "path": "anwser"},
            {"type": "not_contains", "needle": "London", "path": "anwser"},
        ]
        suite.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        adopted = nf("check", suite, "--format", "json", root=_isolated_root)
        again = nf("check", suite, root=_isolated_root)
        strict = nf("check", suite, "--strict", root=_isolated_root)
        explained = nf("explain", "capital", root=_isolated_root)

    said = (
        "case capital, scorer {}: path 'anwser' matched nothing in any of the 3 outputs of {}: "
        "it passes or fails whatever the answers"
    )
    assert adopted.returncode == 0, adopted.stderr
    for scorer in ("contains", "not_contains"):
        assert said.format(scorer, "the run adopted as the baseline") in adopted.stderr
        assert said.format(scorer, "the baseline") in " ".join(again.stdout.split())
    assert again.returncode == 0, again.stdout + again.stderr
    # under --strict, a scorer that can never pass is an error of the configuration
    assert strict.returncode == 3, strict.stdout + strict.stderr
    # explain does not word it as a wrong answer
    assert "path 'anwser' matched nothing" in explained.stdout
    assert "not found at anwser" not in explained.stdout


def test_ab_against_a_dead_endpoint_exits_3_as_a_check_does(tmp_path, monkeypatch, _isolated_root):
    isolate_git(monkeypatch, tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    with LlmServer() as server:
        base_url = server.base_url
    # the port was the server's a moment ago: now every call is refused
    suite = endpoint_suite(repo, base_url, {"only": CAPITAL}, max_retries=1)
    commit_all(repo)
    result = nf("ab", suite, "--baseline-ref", "HEAD", "--format", "json", root=_isolated_root)

    assert result.returncode == 3, result.stdout + result.stderr
    line = orjson.loads(result.stdout)["unmeasured"]
    assert "failed on the infrastructure" in line and base_url.split("/")[2] in line
    assert "Traceback" not in result.stderr


def test_deepening_against_a_dead_endpoint_exits_3_and_leaves_the_baseline(
    tmp_path, _isolated_root
):
    with LlmServer() as server:
        suite = endpoint_suite(tmp_path, server.base_url, {"only": CAPITAL}, max_retries=1)
        assert nf("check", suite, root=_isolated_root).returncode == 0
        port = int(server.base_url.split("/")[2].rsplit(":", 1)[1])
    before = nf("baseline", "show", root=_isolated_root).stdout
    down = nf("baseline", "deepen", suite, "--repeats", "6", root=_isolated_root)
    assert down.returncode == 3, down.stdout + down.stderr
    assert "failed on the infrastructure" in down.stderr and "baseline was not moved" in down.stderr
    assert nf("baseline", "show", root=_isolated_root).stdout == before

    # the endpoint is back: the next deepen takes only what it lacks, past the lost repeats
    with LlmServer(port=port) as server:
        back = nf("baseline", "deepen", suite, "--repeats", "6", root=_isolated_root)
        assert len(server.requests) == 3
    assert back.returncode == 0, back.stdout + back.stderr
