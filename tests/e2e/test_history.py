"""`noisefloor history` through the real CLI with the fake target: several runs of one target
version, then of another; each run's pass rate, and a flakiness line that rests only on the
current version's runs, each sample counted once; and the suite's page over time in Chromium."""

from __future__ import annotations

import io
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from scipy.stats import binomtest

from noisefloor.cli.main import main
from tests.browser import needs_chromium, open_page
from tests.builders import FAKE, answer_case, fake_suite


def _ci(k: int, n: int) -> list[float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [pytest.approx(ci.low, abs=1e-12), pytest.approx(ci.high, abs=1e-12)]


@dataclass
class Store:
    root: Path
    suite: Path
    v1: Any
    """`history wobbly --format json` before version 2."""
    v1_last2: Any
    """The same with `--last 2`."""


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """Three runs of version 1 (the wobbly case passes 2 of 5: repeats 0, 2 and 4 flake), the
    second with --fresh, the third reusing the second's samples; then one run of version 2 (the
    fake target's code edited: only repeat 0 flakes, 4 of 5). Made once for the module."""
    work = tmp_path_factory.mktemp("history")
    shutil.copy(FAKE, work / "fake_target.py")
    root = work / "store"
    steady = {"id": "steady", "input": "question steady", "scorers": ["json_valid"]}
    suite = fake_suite(work, [steady, answer_case("wobbly")])

    def history(*args: str) -> Any:
        out = io.StringIO()
        with redirect_stdout(out):
            assert main(["history", "wobbly", "--root", str(root), *args]) == 0
        return orjson.loads(out.getvalue())

    with pytest.MonkeyPatch.context() as env, redirect_stdout(io.StringIO()):
        env.setenv("NOISEFLOOR_FAKE_FLAKE_EVERY", "2")
        for extra in ((), ("--fresh",), ()):
            assert main(["run", str(suite), "--root", str(root), *extra]) == 0
        v1 = history("--format", "json")
        v1_last2 = history("--format", "json", "--last", "2")
        code = work / "fake_target.py"
        code.write_text(code.read_text(encoding="utf-8") + "# version 2\n", encoding="utf-8")
        env.setenv("NOISEFLOOR_FAKE_FLAKE_EVERY", "5")
        assert main(["run", str(suite), "--root", str(root)]) == 0
    yield Store(root, suite, v1, v1_last2)


def test_the_pool_counts_each_sample_once_across_runs_of_one_version(two_versions):
    flakiness = two_versions.v1["flakiness"]

    # run 3 reused run 2's cached samples: 10 distinct samples, not 15
    assert (flakiness["runs"], flakiness["passes"], flakiness["valid"]) == (3, 4, 10)
    assert flakiness["shared"] == 5
    assert flakiness["wilson"] == _ci(4, 10)
    assert flakiness["flaky"] is True


def test_last_bounds_the_runs_listed_and_pooled(two_versions):
    found = two_versions.v1_last2

    assert len(found["runs"]) == 2 and found["total_runs"] == 3
    # the newest two runs hold the same five samples
    assert (found["flakiness"]["runs"], found["flakiness"]["valid"]) == (2, 5)
    assert found["flakiness"]["shared"] == 5


def test_flakiness_rests_only_on_the_current_versions_runs(cli, two_versions):
    result = cli("history", "wobbly", "--format", "json", "--root", two_versions.root)

    assert result.code == 0, result.err
    found = result.json()
    runs = found["runs"]
    assert [(r["passes"], r["valid"]) for r in runs] == [(4, 5), (2, 5), (2, 5), (2, 5)]
    assert runs[0]["wilson"] == _ci(4, 5) and runs[1]["wilson"] == _ci(2, 5)
    assert runs[0]["target_key"] != runs[1]["target_key"]
    assert len({r["target_key"] for r in runs[1:]}) == 1
    flakiness = found["flakiness"]
    assert flakiness["target_key"] == runs[0]["target_key"]
    assert (flakiness["runs"], flakiness["passes"], flakiness["valid"]) == (1, 4, 5)
    assert flakiness["wilson"] == _ci(4, 5)
    assert flakiness["flaky"] is True
    assert "repeats" not in runs[0]


def test_the_terminal_shows_each_run_newest_first_and_the_flakiness_line(cli, two_versions):
    result = cli("history", "wobbly", "--suite", two_versions.suite, "--root", two_versions.root)

    assert result.code == 0, result.err
    lines = result.out.splitlines()
    rates = [m.group(1) for line in lines if (m := re.search(r"  (\d/\d) passed ", line))]
    assert rates == ["4/5", "2/5", "2/5", "2/5"]
    flaky = [line for line in lines if line.startswith("flakiness")]
    assert len(flaky) == 1
    low, high = binomtest(4, 5).proportion_ci(method="wilson")
    assert f"0.80 [{low:.2f}, {high:.2f}]" in flaky[0]
    assert "4/5 passed over 5 repeats from 1 run of target version" in flaky[0]
    assert flaky[0].endswith("FLAKY")
    # the repeats are listed only on request
    assert not any(re.match(r"\s+r\d ", line) for line in lines)
    shown = cli("history", "wobbly", "--outputs", "--last", "1", "--root", two_versions.root).out
    assert re.search(r"\n\s+r0 fail .*unrelated filler", shown)
    assert len(re.findall(r"  \d/\d passed ", shown)) == 1


def test_markdown_history_is_a_table_and_a_steady_case_is_not_flaky(cli, two_versions):
    result = cli("history", "steady", "--format", "markdown", "--root", two_versions.root)

    assert result.code == 0, result.err
    assert "| run | started (UTC) | target | label | model | passed | rate | 95% CI |" in result.out
    assert result.out.count("| 5/5 |") == 4
    assert "not flaky" in result.out and "FLAKY" not in result.out


def test_history_without_a_case_or_a_page_is_a_usage_error(cli, two_versions):
    result = cli("history", "--root", two_versions.root)

    assert result.code == 3
    assert "a CASE" in result.err and "--html FILE" in result.err
    unknown = cli("history", "nosuch", "--root", two_versions.root)
    assert unknown.code == 3 and "no run in the ledger has a case 'nosuch'" in unknown.err


@needs_chromium
def test_the_suites_page_over_time_opens_in_a_browser(cli, two_versions, tmp_path):
    page_file = tmp_path / "out" / "history.html"

    result = cli("history", "--html", page_file, "--root", two_versions.root)

    assert result.code == 0, result.err
    assert f"wrote {page_file}" in result.out and "1 of 2 cases flaky" in result.out
    page = open_page(page_file)
    assert page.console == []
    # worst first: the flaky case before the steady one
    assert [case for case, _ in page.cases] == ["wobbly", "steady"]
    assert page.tags.count("svg") == 2
    assert "4/5 passed over 5 repeats from 1 run" in page.dom
    assert page.dom.count('data-flakiness="flaky"') == 1
    html = page_file.read_text(encoding="utf-8")
    assert "script" not in page.tags
    assert not {"link", "img", "iframe", "object"} & set(page.tags)
    assert re.findall(r'(?:src|href)="(?!#)[^"]*"', html) == []


def test_a_page_of_one_case_and_without_matplotlib_an_early_exit_3(
    cli, two_versions, monkeypatch, tmp_path
):
    one = cli("history", "steady", "--html", tmp_path / "one.html", "--root", two_versions.root)

    assert one.code == 0, one.err
    page = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert page.count('<section class="case') == 1 and 'data-case="steady"' in page
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    missing = cli("history", "--html", tmp_path / "no.html", "--root", two_versions.root)
    assert missing.code == 3
    assert "pip install 'noisefloor[html]'" in missing.err
    assert not (tmp_path / "no.html").exists()
