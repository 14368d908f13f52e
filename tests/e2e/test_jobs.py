"""Through the real CLI: how many target calls run at once when `--jobs` is not given. An endpoint
takes 8 at once, a command one at a time; `--jobs auto` takes one per core."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from bench.servers.llm import LlmServer
from tests.builders import answer_case, fake_suite, http_suite, paris_case


def _jobs(root: Path) -> list[int]:
    """The `jobs` of every run saved under the store root, oldest first."""
    runs = sorted((root / "runs").rglob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    return [orjson.loads(p.read_bytes())["jobs"] for p in runs if p.parent.name != "labels"]


@pytest.fixture(scope="module")
def server():
    with LlmServer() as srv:
        yield srv


@pytest.mark.parametrize(
    ("flags", "env", "jobs"),
    [
        ([], None, 8),
        (["--jobs", "2"], None, 2),
        ([], "3", 3),
        (["--jobs", "1"], "3", 1),
        (["--jobs", "auto"], None, len(os.sched_getaffinity(0))),
        ([], "auto", len(os.sched_getaffinity(0))),
    ],
)
def test_an_endpoint_takes_eight_calls_at_once_unless_told(
    cli, server, tmp_path, _isolated_root, monkeypatch, flags, env, jobs
):
    if env is not None:
        monkeypatch.setenv("NOISEFLOOR_JOBS", env)
    suite = http_suite(tmp_path, server.base_url, [paris_case("c1")], repeats=2)
    result = cli("run", suite, *flags)
    assert result.code == 0, result.err
    assert _jobs(_isolated_root) == [jobs]


def test_a_command_takes_one_call_at_a_time_unless_told(cli, project, _isolated_root):
    suite = fake_suite(project, [answer_case("c1")], repeats=2)
    assert cli("run", suite).code == 0
    assert cli("run", suite, "--jobs", "auto", "--fresh").code == 0
    assert _jobs(_isolated_root) == [1, len(os.sched_getaffinity(0))]


def test_a_bad_jobs_variable_says_where_it_came_from(cli, project, monkeypatch):
    suite = fake_suite(project, [answer_case("c1")], repeats=2)
    monkeypatch.setenv("NOISEFLOOR_JOBS", "many")
    result = cli("run", suite)
    assert result.code == 3
    assert "NOISEFLOOR_JOBS" in result.err and "'many'" in result.err
    assert "internal error" not in result.err


def test_latency_at_an_endpoints_default_is_marked_not_comparable(cli, server, tmp_path):
    """Eight calls at once are no measure of latency, and the report says so, as with --jobs 8."""
    case = paris_case("c1")
    case["scorers"] = [*case["scorers"], "latency"]
    suite = http_suite(tmp_path, server.base_url, [case], repeats=3)
    assert cli("check", suite, "--repeats", "3").code == 0
    report = cli("check", suite, "--repeats", "3", "--fresh", "--format", "json").json()
    latency = next(s for s in report["cases"][0]["scorers"] if s["key"].endswith(":latency"))
    assert latency["verdict"] == "unmeasured"
    assert "timing not comparable" in latency["reason"]
