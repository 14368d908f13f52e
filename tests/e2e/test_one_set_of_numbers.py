"""One set of numbers: for a check that took a concurrent control, the terminal report, the JSON
report, `explain` and the HTML page count the candidate alike (the repeats its verdict rests on),
and each says apart what the control took."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.builders import FAKE, answer_case, commit_all, isolate_git, write_suite


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture
def regressed(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A repository whose baseline answered right half the time in a drifting world, then a
    commit that makes every answer wrong in a world that drifted: drift could explain the drop,
    so the deep baseline's verdict takes a concurrent control, which confirms it."""
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(FAKE, work / "fake_target.py")
    (work / "README.md").write_text("# a question answerer\n")
    suite = {
        "name": "counted",
        "target": {
            "command": [sys.executable, "fake_target.py", "{{input}}", "--repeat", "{{repeat}}"],
            "output": "json",
            "timeout_s": 20,
        },
        "defaults": {"repeats": 5, "baseline_repeats": 50},
        "cases": [answer_case("capital")],
    }
    path = write_suite(work, suite)
    commit_all(work, "a question answerer")
    root = work / ".noisefloor"
    with monkeypatch.context() as adoption:
        adoption.setenv("NOISEFLOOR_FAKE_FLAKE_EVERY", "2")  # every second answer off-topic
        assert cli("--root", root, "check", path, "--jobs", "4").code == 0
    commit_all(work, "the baseline")
    target = work / "fake_target.py"
    target.write_text(
        target.read_text().replace('_env("answer", "Paris")', '_env("answer", "Lyon")')
    )
    commit_all(work, "a wrong answer")
    monkeypatch.setenv("NOISEFLOOR_FAKE_FLAKE_EVERY", "3")  # the world drifted: every third
    return root, path


def test_check_explain_and_the_page_count_the_candidate_alike(
    cli: Any, regressed: tuple[Path, Path], tmp_path: Path
) -> None:
    root, suite = regressed
    page = tmp_path / "report.html"
    checked = cli(
        "--root", root, "check", suite, "--jobs", "4", "--format", "html", "--output", page
    )
    assert checked.code == 1, checked.err
    report = cli("--root", root, "diff", "--format", "json").json()  # the same run, judged again
    (case,) = report["cases"]
    assert case["verdict"] == "regressed"
    control = case["sequential"]["control"]
    assert control["verdict"] == "regressed" and control["repeats"] > 0
    contains = next(s for s in case["scorers"] if s["key"] == "1:contains")
    k, n = contains["candidate"]["k"], contains["candidate"]["n"]
    bk, bn = contains["baseline"]["k"], contains["baseline"]["n"]
    taken = case["sequential"]["candidate_repeats"]
    assert k == 0 and taken == n + control["candidate_repeats"]

    # the terminal: the verdict's counts, and the control on a line of its own
    assert f'contains "Paris" at answer: {k} of {n} passed, was {bk} of {bn}' in checked.out
    each = f"{control['repeats']} repeats each"
    assert f"confirmed against the baseline's version re-run beside it: {each}" in checked.out

    # explain: the same counts, the control's apart
    explained = cli("--root", root, "explain", "capital", "--format", "json").json()
    counted = next(s for s in explained["scorers"] if s["scorer"] == "1:contains")
    assert (counted["baseline"], counted["candidate"]) == ([bk, bn], [k, n])
    beside = next(s for s in explained["control"]["scorers"] if s["scorer"] == "1:contains")
    assert explained["control"]["repeats"] == control["repeats"]
    assert beside["candidate"] == [0, control["candidate_repeats"]]
    assert beside["baseline"][1] == control["repeats"]
    text = cli("--root", root, "explain", "capital").out
    assert f'contains "Paris" at answer  {bk} of {bn}  {k} of {n}' in text
    assert f"why the candidate's repeats failed ({taken} taken)" in text

    # the page: the same counts, and how the candidate's repeats split
    html = page.read_text(encoding="utf-8")
    assert f"{k} of {n} passed, was {bk} of {bn}" in html and f"<td>{k}/{n} [" in html
    assert (
        f"{taken} repeats: {n} judged against the baseline, {control['candidate_repeats']} taken "
        "beside the concurrent control"
    ) in html
