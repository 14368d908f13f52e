"""The HTML report through the real CLI, opened from disk in headless Chromium: worst case first,
no console message, everything the target printed escaped, and no target call to write it."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from bench.servers.llm import LlmServer
from noisefloor.operations.repeats import OUTPUT_CHARS
from tests.browser import laid_out, needs_chromium, open_page
from tests.builders import answer_case, fake_suite, http_suite
from tests.screenshot import quickstart_regression_png

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CAPTURE = Path(__file__).resolve().parents[2] / "examples" / "local-llm" / "capture"
#: What the target prints after the change: markup that would run, were it not escaped.
HOSTILE = '<script>console.error("injected")</script><b>Lyon</b>'


def _drifting_suite(project: Path, *, answer: str | None = None) -> Path:
    """Two cases; with `answer`, the target says it for every question, and `z-drifts` regresses
    while `a-steady`, re-scored for the new answer, improves: worst first is not id order."""
    env = {"NOISEFLOOR_FAKE_LOG_CALLS": str(project / "calls.log")}
    cases = [answer_case("a-steady"), answer_case("z-drifts")]
    cases[0]["scorers"].append(
        {"type": "json_path_number", "path": "citations[0].score", "min": 0.5}
    )
    if answer is not None:
        env["NOISEFLOOR_FAKE_ANSWER"] = answer
        cases[0]["scorers"][1]["needle"] = "Lyon"
    return fake_suite(project, cases, env=env)


def _calls(project: Path) -> int:
    log = project / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@needs_chromium
def test_check_html_opens_in_a_browser_with_the_regressed_case_first(cli, project, tmp_path):
    assert cli("check", _drifting_suite(project)).code == 0
    # a fixed design: the sequential one calls improvements at its screen only
    hostile = _drifting_suite(project, answer=HOSTILE)
    result = cli("check", hostile, "--repeats", "5", "--format", "html")
    assert result.code == 1, result.err
    assert result.out.startswith("<!DOCTYPE html>")
    page_file = tmp_path / "report.html"
    page_file.write_text(result.out, encoding="utf-8")

    page = open_page(page_file)

    assert page.console == []
    assert page.cases == [("z-drifts", "regressed"), ("a-steady", "improved")]
    # the target's markup is text on the page, never an element of it
    assert "script" not in page.tags and "b" not in page.tags
    assert "&lt;script&gt;console.error(" in page.dom
    # the exit code on top, a plot and the failing repeats, each output expandable
    assert 'id="exit-code"' in page.dom and "exit 1: a case regressed" in page.dom
    assert page.tags.count("svg") == 2
    regressed = page.dom[
        page.dom.index('data-case="z-drifts"') : page.dom.index('data-case="a-steady"')
    ]
    assert regressed.count('class="repeat status-fail"') == 5
    assert "contains \"Paris\" at answer: 'Paris' not found at answer" in regressed
    assert "p=" in regressed and "smallest detectable drop" in regressed
    # nothing is fetched: no external resource of any kind
    assert not {"link", "img", "iframe", "object"} & set(page.tags)
    assert re.findall(r'(?:src|href)="(?!#)[^"]*"', result.out) == []


def test_report_writes_the_html_of_the_newest_run_without_calling_the_target(
    cli, project, tmp_path
):
    assert cli("check", _drifting_suite(project)).code == 0
    suite = _drifting_suite(project, answer="Lyon")
    assert cli("run", suite).code == 0
    calls = _calls(project)

    result = cli("report", "--html", tmp_path / "out" / "report.html")

    assert result.code == 1, result.err
    assert _calls(project) == calls
    assert "REGRESSED  z-drifts" in result.out
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert page.index('data-case="z-drifts"') < page.index('data-case="a-steady"')
    assert "0 target calls" in page


def test_html_without_matplotlib_exits_3_before_sampling(cli, project, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    suite = _drifting_suite(project)
    for args in (
        ("check", suite, "--format", "html"),
        ("diff", "--format", "html"),
        ("report", "--html", tmp_path / "r.html"),
    ):
        result = cli(*args)
        assert result.code == 3, args
        assert "html needs matplotlib" in result.err
        assert "pip install 'noisefloor[html]'" in result.err
        assert result.out == ""
    assert _calls(project) == 0


def test_run_html_shows_each_case_of_the_run(cli, project):
    result = cli("run", _drifting_suite(project), "--format", "html")

    assert result.code == 0
    assert result.out.count('<section class="case"') == 2
    assert "<td>5/5</td>" in result.out and result.out.count("<svg") == 2


@needs_chromium
def test_quickstart_regression_in_a_browser(cli, tmp_path):
    """The README's regression: the first case's question edited into one the target cannot answer."""
    work = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, work)
    suite = work / "suite.yaml"
    assert cli("check", suite).code == 0
    text = suite.read_text()
    suite.write_text(text.replace("What is the capital of France?", "What is the capital of Mars?"))
    page_file = tmp_path / "quickstart.html"

    result = cli("check", suite, "--format", "html", "--output", page_file)

    assert result.code == 1
    assert "REGRESSED  capital-of-france" in result.out
    page = open_page(page_file)
    assert page.console == []
    assert page.cases == [("capital-of-france", "regressed"), ("refuses-unknown", "unchanged")]
    assert "I don't know." in page.dom
    assert "input changed since the baseline" in page.dom


@needs_chromium
@pytest.mark.parametrize("width", [390, 1280])
def test_the_page_takes_the_window_s_width_without_a_horizontal_scroll(cli, tmp_path, width):
    """The local model's capture (eight cases, long outputs, a plot) photographed in a phone's
    window and a desktop's: no horizontal scroll, and the page as wide as the window."""
    pytest.importorskip("PIL")  # matplotlib's own dependency: the html extra has it
    root = tmp_path / "capture"
    shutil.copytree(CAPTURE, root)
    page_file = tmp_path / "capture.html"
    result = cli(
        "--root", root, "diff", "--rule", "band", "--format", "html", "--output", page_file
    )
    assert result.code == 1, result.err
    png = tmp_path / f"capture-{width}.png"

    layout = laid_out(page_file, width, png)

    assert layout.window == width
    assert layout.scroll <= layout.window, layout
    # the page uses the window: its blocks span it but for the body's padding
    assert layout.content >= width - 60, layout
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and png.stat().st_size > 10_000


@needs_chromium
def test_local_llm_capture_in_a_browser(cli, tmp_path):
    root = tmp_path / "capture"
    shutil.copytree(CAPTURE, root)
    page_file = tmp_path / "capture.html"

    result = cli(
        "--root", root, "diff", "--rule", "band", "--format", "html", "--output", page_file
    )

    assert result.code == 1
    page = open_page(page_file)
    assert page.console == []
    assert page.cases[0] == ("refusal_boundary", "regressed")
    assert [v for _, v in page.cases][-1] == "unchanged"
    assert len(page.cases) == 8


@needs_chromium
def test_fifty_cases_of_twenty_repeats_stay_under_a_megabyte(cli, tmp_path):
    """The page of a big check stays small: repeats are listed for changed cases only, cut."""
    with LlmServer() as server:
        cases = [
            {
                "id": f"case-{i:02d}",
                "input": f"question {i} [sample]",
                "scorers": [{"type": "contains", "needle": "Paris", "path": "answer"}, "latency"],
            }
            for i in range(50)
        ]
        suite = http_suite(
            tmp_path, server.base_url, cases, name="big", model="stand-in", repeats=20
        )
        assert cli("check", suite, "--jobs", "8").code == 0
        for case in cases[:5]:
            case["input"] = case["input"].replace("[sample]", "Lyon")
        suite = http_suite(
            tmp_path, server.base_url, cases, name="big", model="stand-in", repeats=20
        )
        page_file = tmp_path / "big.html"
        result = cli("check", suite, "--jobs", "8", "--format", "html", "--output", page_file)

    assert result.code == 1, result.out
    assert page_file.stat().st_size < 1_000_000
    page = open_page(page_file)
    assert page.console == []
    assert len(page.cases) == 50
    assert {v for _, v in page.cases[:5]} == {"regressed"}
    # plots only where rates differ, for the first cases; repeats for the changed ones
    assert page.tags.count("svg") == 5
    assert page.dom.count('class="repeats"') == 5


def test_a_long_output_is_cut_on_the_page(cli, project, tmp_path):
    suite = _drifting_suite(project)
    assert cli("check", suite).code == 0
    suite.write_text(
        suite.read_text().replace("calls.log", "calls.log\n    NOISEFLOOR_FAKE_HUGE_MB: '0.05'")
    )
    page_file = tmp_path / "long.html"

    result = cli("check", suite, "--format", "html", "--output", page_file)

    assert result.code == 2, result.out
    page = page_file.read_text(encoding="utf-8")
    assert f"cut to {OUTPUT_CHARS} of 50000 characters" in page
    assert "x" * OUTPUT_CHARS in page and "x" * (OUTPUT_CHARS + 1) not in page
    assert len(page) < 150_000


@needs_chromium
def test_the_readme_screenshot_can_be_made_again(tmp_path):
    png = tmp_path / "shot.png"

    assert quickstart_regression_png(png) == 1

    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000


def test_an_adopting_check_lists_each_repeat_once(cli, project):
    result = cli("check", _drifting_suite(project), "--format", "html")

    assert result.code == 0
    assert "adopted as the baseline" in result.out
    assert result.out.count('class="repeat ') == 10
    assert "swatch-baseline" not in result.out.split('<main id="cases">')[1]
