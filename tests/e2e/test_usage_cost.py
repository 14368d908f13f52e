"""Token usage and cost end to end, as real processes against the loopback OpenAI-compatible
server (which reports usage): every report format gives the calls' tokens and cost, the `tokens`
scorer catches longer answers, a command target's reports give none, and `--max-cost` stops a
check as `--max-calls` does.

The server answers a prompt with `[pass:2/3]` PASS, PASS, FAIL, ... by how many times it has
seen it, so a baseline of 5 passes 4 and the next 5 calls pass 3: a first look in doubt.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import orjson
import pytest
import yaml

from bench.servers.llm import LlmServer
from tests.builders import answer_case, commit_all, fake_suite, http_suite, isolate_git
from tests.e2e.test_exit_paths import run_process as nf

#: Five words: the server counts words as tokens, so 5 prompt tokens and 1 completion token.
PROMPT = "say [pass:2/3] ok"
#: One call at input 0.5 and output 2 per million: (5 * 0.5 + 1 * 2) / 1e6.
CALL = Decimal("0.0000045")


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as srv:
        yield srv


def priced_suite(path: Path, base_url: str, *, temperature: float = 0.0, **http: Any) -> Path:
    """The suite file `path`: one case of the endpoint at `base_url` that passes on PASS."""
    case = {"id": "a", "input": PROMPT, "scorers": [{"type": "contains", "needle": "PASS"}]}
    return http_suite(
        path.parent,
        base_url,
        [case],
        name="priced",
        model="m",
        repeats=5,
        max_retries=None,
        retry_budget=None,
        filename=path.name,
        temperature=temperature,
        **http,
    )


PRICE = {"input_per_million": 0.5, "output_per_million": 2, "currency": "EUR"}


@pytest.fixture
def adopted(tmp_path: Path, server: LlmServer) -> tuple[Path, Path]:
    """A priced suite whose baseline is adopted (5 calls, 4 passing); its path and store root."""
    suite = priced_suite(tmp_path / "suite.yaml", server.base_url, price=PRICE)
    root = tmp_path / "store"
    first = nf("check", suite, "--format", "json", root=root)
    assert first.returncode == 0, first.stderr
    report = orjson.loads(first.stdout)
    expected = {
        "samples": 5,
        "unreported": 0,
        "prompt_tokens": 25,
        "completion_tokens": 5,
        "cost": float(5 * CALL),
        "currency": "EUR",
    }
    assert report["usage"] == expected
    assert report["cases"][0]["usage"] == expected
    return suite, root


def test_every_report_format_gives_the_calls_tokens_and_cost(
    tmp_path: Path, server: LlmServer, adopted: tuple[Path, Path]
) -> None:
    suite, root = adopted
    line = "15 prompt + 3 completion tokens, cost 0.0000135 EUR"
    shown = {}
    # each check a new version (its temperature), of 3 fixed repeats: 3 calls to price
    for step, fmt in enumerate(["terminal", "markdown", "junit", "html"], 1):
        priced_suite(suite, server.base_url, temperature=step / 10, price=PRICE)
        out = tmp_path / f"report.{fmt}"
        result = nf("check", suite, "--repeats", "3", "--format", fmt, "--output", out, root=root)
        assert result.returncode == 0, result.stderr
        shown[fmt] = out.read_text(encoding="utf-8")
        # the terminal copy printed beside the file: the calls and their tokens and cost first
        assert "3 calls, 18 tokens, cost 0.0000135 EUR\n" in result.stdout
    assert f"3 target calls using {line}" in shown["markdown"]
    assert f"using {line}" in shown["html"]
    assert '<p class="usage">3 samples taken, using ' in shown["html"]  # per case
    suite_el = ET.fromstring(shown["junit"])
    props = {p.get("name"): p.get("value") for p in suite_el.findall("./properties/property")}
    assert props == {
        "usage.samples": "3",
        "usage.unreported": "0",
        "usage.prompt_tokens": "15",
        "usage.completion_tokens": "3",
        "usage.cost": "0.0000135",
        "usage.currency": "EUR",
    }
    case_props = suite_el.findall("./testcase/properties/property")
    assert {p.get("name"): p.get("value") for p in case_props} == props

    # a check that took nothing (every sample cached) spent nothing, and says so
    cached = nf("check", suite, "--repeats", "3", "--format", "json", root=root)
    report = orjson.loads(cached.stdout)
    assert report["calls"] == 0
    assert (report["usage"]["samples"], report["usage"]["cost"]) == (0, 0.0)

    # `run` prints it too; without a price there is no cost, never one in a currency of ours
    priced_suite(suite, server.base_url, temperature=0.9)
    run = nf("run", suite, "--repeats", "2", root=root)
    assert "usage: 10 prompt + 2 completion tokens\n" in run.stdout
    run_json = orjson.loads(
        nf("run", suite, "--repeats", "2", "--fresh", "--format", "json", root=root).stdout
    )
    assert run_json["usage"] == {
        "samples": 2,
        "unreported": 0,
        "prompt_tokens": 10,
        "completion_tokens": 2,
    }


def test_the_tokens_scorer_catches_an_answer_that_got_longer(
    tmp_path: Path, server: LlmServer
) -> None:
    root = tmp_path / "store"
    suite = tmp_path / "suite.yaml"
    http: dict[str, Any] = {"base_url": server.base_url, "model": "m"}
    doc = {
        "name": "longer",
        "target": {"http": http},
        "defaults": {"repeats": 5},
        "cases": [{"id": "a", "input": "answer one word", "scorers": ["tokens"]}],
    }
    suite.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert nf("check", suite, root=root).returncode == 0
    # the server answers {"answer": <last word>}, one word; a new prompt template adds
    # `[sample]`, whose answers take one to three words: the case's input stays the same
    http["messages"] = [{"role": "user", "content": "{{input}} [sample]"}]
    suite.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = nf("check", suite, "--repeats", "12", "--format", "json", root=root)
    report = orjson.loads(result.stdout)
    scorer = report["cases"][0]["scorers"][0]
    assert scorer["candidate"]["mean"] > scorer["baseline"]["mean"] == 2.0
    assert report["cases"][0]["verdict"] == "regressed", scorer["reason"]
    assert result.returncode == 1


def test_a_command_targets_reports_show_no_usage_never_a_zero(
    tmp_path: Path, project: Path
) -> None:
    suite = fake_suite(project, [answer_case("a")], repeats=2)
    root = tmp_path / "store"
    result = nf("check", suite, "--format", "json", root=root)
    assert result.returncode == 0, result.stderr
    report = orjson.loads(result.stdout)
    assert "usage" not in report and "usage" not in report["cases"][0]
    terminal = nf("run", suite, "--fresh", root=root)
    assert "tokens" not in terminal.stdout and "usage" not in terminal.stdout
    refused = nf("check", suite, "--max-cost", "1", root=root)
    assert refused.returncode == 3
    assert "--max-cost 1 needs the price of a token" in refused.stderr


def test_max_cost_below_the_first_look_exits_3_before_any_call_and_exactly_on_it_looks(
    server: LlmServer, adopted: tuple[Path, Path]
) -> None:
    suite, root = adopted
    priced_suite(suite, server.base_url, temperature=0.5, price=PRICE)
    before = len(server.requests)
    below = nf(
        "check",
        suite,
        "--max-repeats",
        "10",
        "--max-cost",
        str(5 * CALL - Decimal("1e-9")),
        root=root,
    )
    assert below.returncode == 3
    assert "is below the first look's 0.0000225 EUR (5 samples" in below.stderr
    assert len(server.requests) == before

    # exactly the first look's price: it is taken, and nothing is left for the next look
    exact = nf(
        "check",
        suite,
        "--max-repeats",
        "10",
        "--max-cost",
        str(5 * CALL),
        "--format",
        "json",
        root=root,
    )
    assert exact.returncode == 0, exact.stderr  # inconclusive fails only --strict
    report = orjson.loads(exact.stdout)
    case = report["cases"][0]
    assert case["verdict"] == "inconclusive"
    assert case["sequential"]["stopped"] == "budget"
    assert "--max-cost 0.0000225 ran out before its next look" in case["reason"]
    assert (report["sequential"]["budget_stopped"], report["calls"]) == (1, 5)
    assert report["usage"]["cost"] == float(5 * CALL)
    assert len(server.requests) == before + 5
    assert report["sequential"]["max_cost"] == float(5 * CALL)

    # the first look is cached and free: the same budget now buys the next look, exactly
    confirmed = nf(
        "check",
        suite,
        "--max-repeats",
        "10",
        "--max-cost",
        str(5 * CALL),
        "--format",
        "json",
        root=root,
    )
    report = orjson.loads(confirmed.stdout)
    case = report["cases"][0]
    assert case["sequential"]["stopped"] in ("cap", "decided")
    assert case["sequential"]["candidate_repeats"] == 10
    assert report["calls"] == 5
    assert report["usage"]["cost"] == float(5 * CALL)


def test_max_cost_a_hair_below_the_next_look_leaves_it_in_doubt(
    server: LlmServer, adopted: tuple[Path, Path]
) -> None:
    suite, root = adopted
    priced_suite(suite, server.base_url, temperature=0.5, price=PRICE)
    budget = str(10 * CALL - Decimal("1e-12"))
    result = nf("check", suite, "--max-repeats", "10", "--max-cost", budget, "-v", root=root)
    assert result.returncode == 0, result.stderr
    assert "inconclusive" in result.stdout
    shown = " ".join(result.stdout.split())  # the statistics, wrapped at the width
    assert f"1 budget (--max-cost {budget})" in shown
    assert "5 target calls using 25 prompt + 5 completion tokens, cost 0.0000225 EUR" in shown
    assert (
        nf(
            "check", suite, "--max-repeats", "10", "--max-cost", budget, "--strict", root=root
        ).returncode
        == 1
    )


def test_ab_reports_the_usage_of_both_arms_calls(
    tmp_path: Path, server: LlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    suite = priced_suite(repo / "suite.yaml", server.base_url, price=PRICE)
    commit_all(repo)
    result = nf("ab", suite, "--baseline-ref", "HEAD", "--format", "json", root=repo / ".nf")
    assert result.returncode == 0, result.stderr
    report = orjson.loads(result.stdout)
    # an endpoint's version is its settings: both arms are one version, sampled once
    assert report["calls"] == 5
    assert report["usage"]["samples"] == 5
    assert report["usage"]["cost"] == float(5 * CALL)
