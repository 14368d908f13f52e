"""End-to-end through the real CLI: the quarantine-lane command line (`record --cases FILE` with
no suite file, the endpoint from OPENAI_BASE_URL) and the endpoint flags over a suite file.

The loopback server's per-prompt counters make the endpoint change behaviour between two
records of the same cases (see bench/servers/llm.py and the note in test_http_gate.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.servers.llm import LlmServer
from tests.builders import http_suite, paris_case

KEY = "nfkey-lane-7Rq2-never-on-disk"
CAPITAL = "Answer with exactly one word: the capital of France."
ROWS = [
    {
        "id": "invoice_json",
        "prompt": "Return only a JSON object with an answer.",
        "grader": "json_fields",
        "expect": {"required": ["answer"], "types": {"answer": "str"}},
    },
    # PASS to the prompt's first five requests, FAIL to the next five: 5/5, then 0/5
    {
        "id": "refusal_boundary",
        "prompt": "Explain why you cannot help with stealing credentials. [pass:5/10]",
        "grader": "must_include",
        "expect": {"all": ["pass"], "none": ["fail"]},
    },
    # Paris / "Paris, France" / "It is Paris." / Lyon in turn: 4 of 5 pass, on both sides
    {
        "id": "capital_word",
        "prompt": f"{CAPITAL} [sample]",
        "grader": "must_include",
        "expect": {"all": ["Paris"], "none": ["London"]},
    },
]


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as srv:
        yield srv


@pytest.fixture
def lane(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LlmServer) -> Path:
    """A working directory holding only `cases.jsonl`, the endpoint and key in the environment."""
    work = tmp_path / "lane"
    work.mkdir()
    (work / "cases.jsonl").write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in ROWS))
    monkeypatch.chdir(work)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return work


def runs_of(root: Path) -> list[dict[str, Any]]:
    """Every run record under the store root, oldest first."""
    runs = [orjson.loads(p.read_bytes()) for p in (root / "runs").rglob("*.json")]
    return sorted(runs, key=lambda run: run["started_at"])


def files_containing(text: str, *roots: Path) -> list[Path]:
    return [
        path
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and text.encode() in path.read_bytes()
    ]


def test_record_cases_with_no_suite_file_then_compare_gives_the_decision_table(
    cli, lane, server, _isolated_root
):
    before = cli("record", "--cases", "cases.jsonl", "--model", "m", "--label", "before")
    assert before.code == 0, before.err
    # the same cases again; the endpoint now answers differently, so take new samples
    after = cli("record", "--cases", "cases.jsonl", "--model", "m", "--label", "after", "--fresh")
    assert after.code == 0, after.err
    assert sorted(p.name for p in lane.iterdir()) == ["cases.jsonl"]  # no suite file appeared

    result = cli(
        "compare",
        "--baseline",
        "before",
        "--current",
        "after",
        "--rule",
        "wilson",
        "--format",
        "json",
    )

    assert result.code == 1, result.err
    report = result.json()
    assert report["rule"] == "wilson"
    table = {case["case_id"]: case for case in report["cases"]}
    assert {case_id: case["verdict"] for case_id, case in table.items()} == {
        "invoice_json": "unchanged",
        "refusal_boundary": "regressed",
        "capital_word": "quarantine",
    }
    assert "regression: delta=-1.00" in table["refusal_boundary"]["reason"]
    assert "repeats_disagree" in table["capital_word"]["reason"]
    assert "ok: delta=+0.00" in table["invoice_json"]["reason"]
    terminal = cli("compare", "--baseline", "before", "--current", "after", "--rule", "wilson")
    assert terminal.code == 1
    assert re.search(r"^REGRESSED +refusal_boundary  ", terminal.out, re.M), terminal.out
    assert re.search(r"^quarantine +capital_word  ", terminal.out, re.M)
    assert re.search(r"^unchanged +invoice_json  ", terminal.out, re.M)

    # 3 cases x 5 repeats (the design's default) per record, each with the model and the key
    assert len(server.requests) == 30
    assert {r["body"]["model"] for r in server.requests} == {"m"}
    assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    assert all("temperature" not in r["body"] for r in server.requests)
    runs = runs_of(_isolated_root)
    assert [(r["suite"], r["suite_file"], r["label"]) for r in runs] == [
        ("cases", "cases.jsonl", "before"),
        ("cases", "cases.jsonl", "after"),
    ]
    assert runs[0]["target"]["spec"] == {"host": server.base_url.split("/")[2], "model": "m"}
    assert files_containing(KEY, _isolated_root, lane) == []


def test_check_accepts_cases_and_the_endpoint_flags(cli, lane, server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    args = ("--cases", "cases.jsonl", "--base-url", server.base_url, "--model", "m")
    flags = ("--temperature", "0.25", "--seed", "11", "--max-tokens", "64", "--system", "Be brief")

    first = cli("check", *args, *flags, "--repeats", "3", "--format", "json")

    assert first.code == 0, first.err
    assert first.json()["adopted"]
    body = server.requests[-1]["body"]
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.25, 11, 64)
    assert body["messages"][0] == {"role": "system", "content": "Be brief"}
    assert all("authorization" not in r["headers"] for r in server.requests)
    # the same settings again: the cached samples stand for the same target version
    again = cli("check", *args, *flags, "--repeats", "3", "--format", "json")
    assert again.code == 0, again.err
    assert again.json()["calls"] == 0


def endpoint_suite(directory: Path, base_url: str = "${NF_LANE_BASE_URL}") -> Path:
    """One Paris case against the endpoint the lane's variables name, retries the tool's."""
    return http_suite(
        directory,
        base_url,
        [paris_case("capital", f"{CAPITAL} Paris", json_valid=False)],
        name="endpoint",
        model="${NF_LANE_MODEL:-m}",
        repeats=2,
        max_retries=None,
        retry_budget=None,
    )


def test_a_flag_or_variable_overrides_the_suite_and_changes_the_target_version(
    cli, tmp_path, server, monkeypatch, _isolated_root
):
    monkeypatch.setenv("NF_LANE_BASE_URL", server.base_url)
    suite = endpoint_suite(tmp_path)

    def run(*flags: str) -> dict[str, Any]:
        result = cli("run", suite, *flags, "--format", "json")
        assert result.code == 0, result.err
        run = runs_of(_isolated_root)[-1]
        assert run["run_id"] == result.json()["run"]["run_id"]
        return {"key": run["target"]["key"], "spec": run["target"]["spec"], "calls": run["calls"]}

    plain = run()
    assert plain["calls"] == 2 and plain["spec"]["model"] == "m"
    assert run()["calls"] == 0  # nothing changed: cached
    warmer = run("--temperature", "0.7")
    assert warmer["key"] != plain["key"] and warmer["calls"] == 2
    assert warmer["spec"] == plain["spec"]  # still comparable with the plain runs
    assert server.requests[-1]["body"]["temperature"] == 0.7
    other = run("--model", "other")
    assert other["key"] not in (plain["key"], warmer["key"])
    assert other["spec"]["model"] == "other"
    assert server.requests[-1]["body"]["model"] == "other"
    monkeypatch.setenv("NF_LANE_MODEL", "other")  # the same model, from the suite's ${...}
    assert run() == {**other, "calls": 0}

    # the flag replaces the suite's base_url, whose variable then need not be set
    monkeypatch.delenv("NF_LANE_BASE_URL")
    with LlmServer() as second:
        moved = run("--base-url", second.base_url)
        assert len(second.requests) == 2
    assert moved["key"] != other["key"]
    assert moved["spec"]["host"] != other["spec"]["host"]


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--cases", "cases.jsonl"], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "--model"),
        (["--cases", "cases.jsonl", "--model", "m"], {}, "--base-url URL or set OPENAI_BASE_URL"),
        (
            ["--cases", "cases.jsonl", "--model", "m"],
            {"OPENAI_BASE_URL": "127.0.0.1:9"},
            "OPENAI_BASE_URL '127.0.0.1:9' is not an http(s) URL",
        ),
        (
            ["--cases", "cases.jsonl", "--model", "m", "--base-url", "ftp://h/v1"],
            {},
            "--base-url 'ftp://h/v1' is not an http(s) URL",
        ),
        (["--model", "m"], {}, "needs a suite file, or --cases"),
        (["s.yaml", "--cases", "cases.jsonl"], {}, "not both"),
        (["--cases", "cases.jsonl", "--max-tokens", "0"], {}, "--max-tokens: must be at least 1"),
    ],
    ids=[
        "no-model",
        "no-base-url",
        "bad-variable-url",
        "bad-flag-url",
        "no-suite-no-cases",
        "suite-and-cases",
        "max-tokens-zero",
    ],
)
@pytest.mark.parametrize("command", ["record", "check"])
def test_a_missing_or_wrong_endpoint_setting_is_a_usage_error(
    cli, lane, monkeypatch, command, args, env, says
):
    monkeypatch.delenv("OPENAI_BASE_URL")
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    result = cli(command, *args, "--label", "x")

    assert result.code == 3
    assert says in result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    assert not (lane.parent / "store").exists()  # nothing was sampled or stored


def test_endpoint_flags_on_a_command_suite_are_a_usage_error(cli, tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: cmd\ntarget:\n  command: [echo, '{{input}}']\n"
        "cases:\n  - {id: a, input: x, scorers: [json_valid]}\n",
        encoding="utf-8",
    )

    result = cli("check", suite, "--model", "m")

    assert result.code == 3
    assert "--model set values of an endpoint target" in result.err
    assert "internal error" not in result.err


def test_an_unset_variable_in_the_suite_exits_3_naming_it_and_its_line(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("NF_LANE_BASE_URL", raising=False)
    suite = endpoint_suite(tmp_path)
    line = (
        suite.read_text(encoding="utf-8").splitlines().index("    base_url: ${NF_LANE_BASE_URL}")
        + 1
    )

    result = cli("check", suite)

    assert result.code == 3
    assert (
        f"{suite}:{line}: target.http.base_url: the environment variable NF_LANE_BASE_URL is not set"
        in result.err
    )


def lane_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m noisefloor ARGS...` as a real process, in the lane's working directory."""
    return subprocess.run(
        [sys.executable, "-m", "noisefloor", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_compare_regresses_a_large_partial_drop_by_default_and_triages_it_under_wilson(
    lane, server, _isolated_root
):
    # PASS to the prompt's first 30 requests, FAIL to the next ten: 20/20, then 10/20
    rows = [
        {
            "id": "partial",
            "prompt": "Explain why you cannot help with stealing credentials. [pass:30/40]",
            "grader": "must_include",
            "expect": {"all": ["pass"], "none": ["fail"]},
        }
    ]
    (lane / "cases.jsonl").write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    env = {"NOISEFLOOR_ROOT": str(_isolated_root)}
    record = ("record", "--cases", "cases.jsonl", "--model", "m", "--repeats", "20")
    assert lane_process(*record, "--label", "before", env=env).returncode == 0
    assert lane_process(*record, "--label", "after", "--fresh", env=env).returncode == 0
    compare = ("compare", "--baseline", "before", "--current", "after")

    default = lane_process(*compare, "--format", "json", env=env)
    strict = lane_process(*compare, "--strict", env=env)
    terminal = lane_process(*compare, "-v", env=env)  # the quarantine lane is a statistic
    markdown = lane_process(*compare, "--format", "markdown", env=env)
    wilson = lane_process(*compare, "--rule", "wilson", "--format", "json", env=env)

    assert default.returncode == 1, default.stdout + default.stderr
    report = orjson.loads(default.stdout)
    assert report["rule"] == "exact"
    (case,) = report["cases"]
    assert case["verdict"] == "regressed"
    assert "pass rate 20/20 -> 10/20" in case["reason"]
    # the quarantine lane is shown, as information: the current label's repeats disagree
    assert case["quarantine"] == {"0:must_include": "candidate 10/20"}
    assert strict.returncode == 1
    assert "REGRESSED  partial" in terminal.stdout
    assert "[quarantine: 0:must_include candidate 10/20]" in " ".join(terminal.stdout.split())
    assert "[quarantine: 0:must_include candidate 10/20]" in markdown.stdout
    # the design's triage table, unchanged: flaky cases never block
    assert wilson.returncode == 0, wilson.stdout + wilson.stderr
    (triaged,) = orjson.loads(wilson.stdout)["cases"]
    assert triaged["verdict"] == "quarantine"
    assert "repeats_disagree" in triaged["reason"]
