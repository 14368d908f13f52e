"""Stored runs the infrastructure left short of valid repeats, judged again by `diff`, `report`,
`compare` and `explain` through the real CLI: exit 3 with the sampling command's one-line cause.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from bench.servers.llm import LlmServer
from tests.builders import CAPITAL, http_suite, paris_case


def error_lines(text: str) -> list[str]:
    """The `error:` lines of a report, each with the rows it was wrapped onto joined back."""
    found: list[str] = []
    within = False
    for line in text.splitlines():
        if line.startswith("error: "):
            found.append(line)
            within = True
        elif within and line.startswith(" "):
            found[-1] += " " + line.strip()
        else:
            within = False
    return found


def test_a_run_the_endpoint_refused_throughout_exits_3_however_it_is_judged_again(
    cli: Any, tmp_path: Path
) -> None:
    cases = [paris_case("first"), paris_case("second", f"{CAPITAL} again: Paris")]
    with LlmServer() as server:
        suite = http_suite(tmp_path, server.base_url, cases, max_retries=1)
        up = cli("run", suite, "--label", "up", "--set-baseline")
        assert up.code == 0, up.out + up.err
        host = server.base_url.split("/")[2]
    # the endpoint is gone: every call is refused
    down = cli("run", suite, "--label", "down", "--fresh", "--format", "json")
    assert down.code == 3, down.out + down.err
    line = down.json()["unmeasured"]
    assert "6 of 6 repeats failed on the infrastructure" in line and host in line
    assert "fewer valid repeats than 3: first, second" in line

    terminal = cli("diff")
    assert terminal.code == 3, terminal.out + terminal.err
    assert error_lines(terminal.out) == [f"error: {line}"]
    assert " · exit 3 · " in terminal.out.splitlines()[0]

    diff = cli("diff", "--format", "json")
    assert diff.code == 3, diff.out + diff.err
    assert (diff.json()["unmeasured"], diff.json()["exit_code"]) == (line, 3)
    assert error_lines(diff.err) == [f"error: {line}"]

    page = tmp_path / "report.html"
    report = cli("report", "--html", page)
    assert report.code == 3, report.out + report.err
    assert error_lines(report.err) == [f"error: {line}"]
    assert "failed on the infrastructure" in page.read_text(encoding="utf-8")

    for rule in ("exact", "wilson", "band"):
        compared = cli(
            "compare", "--baseline", "up", "--current", "down", "--rule", rule, "--format", "json"
        )
        assert compared.code == 3, (rule, compared.out + compared.err)
        assert compared.json()["unmeasured"] == line, rule
        assert error_lines(compared.err) == [f"error: {line}"], rule

    explained = cli("explain", "first")
    assert explained.code == 3, explained.out + explained.err
    (cause,) = error_lines(explained.err)
    assert "3 of 3 repeats failed on the infrastructure" in cause and host in cause
    assert "fewer valid repeats than 3: first;" in cause
    # what the target said is still shown: the calls' errors, repeat by repeat
    assert "[error:infra: " in explained.out
    as_json = cli("explain", "first", "--format", "json")
    assert as_json.code == 3
    assert f"error: {as_json.json()['unmeasured']}" == cause


def test_a_sequential_check_against_a_dead_endpoint_is_judged_again_by_its_looks(
    cli: Any, tmp_path: Path, _isolated_root: Path
) -> None:
    with LlmServer() as server:
        suite = http_suite(tmp_path, server.base_url, [paris_case("only")], max_retries=1)
        assert cli("check", suite).code == 0
    checked = cli("check", suite, "--fresh", "--format", "json")
    assert checked.code == 3, checked.out + checked.err
    line = checked.json()["unmeasured"]
    assert "fewer valid repeats than 3: only" in line

    diff = cli("diff", "--format", "json")
    assert diff.code == 3, diff.out + diff.err
    (case,) = diff.json()["cases"]
    assert case["sequential"]["stopped"] == "unmeasured"  # re-judged by the check's own looks
    assert diff.json()["unmeasured"] == line
    assert error_lines(diff.err) == [f"error: {line}"]

    report = cli("report", "--html", tmp_path / "report.html")
    assert report.code == 3, report.out + report.err
    assert error_lines(report.err) == [f"error: {line}"]

    # as a process: the exit status is the process's, and no traceback
    process = subprocess.run(
        [sys.executable, "-m", "noisefloor", "diff", "--format", "json"],
        env={**os.environ, "NOISEFLOOR_ROOT": str(_isolated_root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == 3, process.stdout + process.stderr
    assert orjson.loads(process.stdout)["unmeasured"] == line
    assert error_lines(process.stderr) == [f"error: {line}"]
    assert "Traceback" not in process.stderr


def test_a_case_left_some_valid_repeats_but_fewer_than_min_valid_exits_3(
    cli: Any, tmp_path: Path
) -> None:
    with LlmServer() as server:
        # the prompt's first request fails and is not retried: the run takes that repeat again,
        # leaving two valid repeats and one lost, short of min_valid (3)
        case = paris_case("flaky", f"{CAPITAL} [500:1]")
        suite = http_suite(tmp_path, server.base_url, [case], repeats=2, max_retries=0)
        lossy = cli("run", suite, "--jobs", "1", "--label", "lossy", "--format", "json")
        clean = cli("run", suite, "--jobs", "1", "--label", "clean", "--fresh")
    assert lossy.code == 3, lossy.out + lossy.err
    assert clean.code == 0, clean.out + clean.err
    line = lossy.json()["unmeasured"]
    assert "1 of 3 repeats failed on the infrastructure (infra: HTTP 500" in line
    assert "fewer valid repeats than 3: flaky" in line

    diff = cli("diff", "lossy", "--baseline", "clean", "--format", "json")
    assert diff.code == 3, diff.out + diff.err
    assert diff.json()["unmeasured"] == line
    assert error_lines(diff.err) == [f"error: {line}"]
    compared = cli("compare", "--baseline", "clean", "--current", "lossy")
    assert compared.code == 3, compared.out + compared.err
    assert error_lines(compared.out) == [f"error: {line}"]
    explained = cli("explain", "flaky", "lossy", "--baseline", "clean")
    assert explained.code == 3, explained.out + explained.err
    assert error_lines(explained.err) == [f"error: {line}"]

    # the command's own min_valid decides: two valid repeats are enough for two
    enough = cli("compare", "--baseline", "clean", "--current", "lossy", "--min-valid", "2")
    assert enough.code == 0, enough.out + enough.err
    assert error_lines(enough.out + enough.err) == []
    explained = cli("explain", "flaky", "lossy", "--baseline", "clean", "--min-valid", "2")
    assert (explained.code, explained.err) == (0, "")
    # only the candidate's repeats are counted, as a check counts them
    reverse = cli("diff", "clean", "--baseline", "lossy")
    assert reverse.code == 0, reverse.out + reverse.err
    assert error_lines(reverse.out + reverse.err) == []
