"""A `rescore` never becomes the candidate by surprise: `diff`, `explain`, `report` and a later
`rescore` default to the newest run that sampled its target, `runs` says what each re-scoring was
made from, and `explain --suite` picks a suite; all through the real CLI, in its own process."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.builders import answer_case, fake_suite
from tests.e2e.test_exit_paths import run_process


@pytest.fixture
def rescored(project: Path, _isolated_root: Path) -> tuple[Path, str, str]:
    """A baseline, a candidate run whose answer is Lyon, then a rescore of that candidate:
    the suite file, the candidate's id and the rescore's id."""
    suite = fake_suite(project, [answer_case("alpha")])
    assert run_process("check", suite, root=_isolated_root).returncode == 0
    suite = fake_suite(project, [answer_case("alpha")], env={"NOISEFLOOR_FAKE_ANSWER": "Lyon"})
    ran = run_process("run", suite, "--format", "json", root=_isolated_root)
    assert ran.returncode == 0, ran.stderr
    done = run_process("rescore", suite, "--format", "json", root=_isolated_root)
    assert done.returncode == 0, done.stderr
    candidate = orjson.loads(ran.stdout)["run"]["run_id"]
    rescore = orjson.loads(done.stdout)["run"]
    assert rescore["rescored_from"] == candidate
    return suite, candidate, rescore["run_id"]


def test_diff_explain_and_report_default_to_the_newest_sampled_run(rescored, _isolated_root):
    suite, candidate, _ = rescored
    diffed = run_process("diff", "--format", "json", root=_isolated_root)
    assert diffed.returncode == 1, diffed.stderr
    assert orjson.loads(diffed.stdout)["candidate"] == candidate

    explained = run_process("explain", "alpha", "--format", "json", root=_isolated_root)
    assert explained.returncode == 0, explained.stderr
    assert candidate in explained.stdout

    page = _isolated_root.parent / "report.html"
    reported = run_process("report", "--html", page, "-v", root=_isolated_root)
    assert reported.returncode == 1, reported.stderr
    assert candidate in reported.stdout  # the runs compared, under -v

    again = run_process("rescore", suite, "--format", "json", root=_isolated_root)
    assert orjson.loads(again.stdout)["run"]["rescored_from"] == candidate


def test_runs_names_what_each_rescore_was_made_from(rescored, _isolated_root, monkeypatch):
    _, candidate, rescore = rescored
    monkeypatch.setenv("COLUMNS", "80")
    narrow = run_process("runs", root=_isolated_root)
    assert max(map(len, narrow.stdout.splitlines())) <= 80
    monkeypatch.setenv("COLUMNS", "200")  # a screen wide enough for every column
    listed = run_process("runs", root=_isolated_root)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.rstrip().endswith("rescored from")
    row = next(line for line in rows if line.split()[0] == rescore)
    assert row.rstrip().endswith(candidate)
    assert next(line for line in rows if line.split()[0] == candidate).rstrip().endswith(" -")


@pytest.mark.parametrize("command", ["diff", "report", "explain", "rescore"])
def test_help_says_what_the_default_run_is(command, _isolated_root):
    shown = run_process(command, "--help", root=_isolated_root)
    assert shown.returncode == 0
    assert "that sampled its target, not a re-scoring" in " ".join(shown.stdout.split())


def test_explain_takes_suite(project, _isolated_root):
    first = fake_suite(project, [answer_case("alpha")], name="first")
    assert run_process("check", first, root=_isolated_root).returncode == 0
    assert run_process("run", first, root=_isolated_root).returncode == 0
    second = project / "second"
    second.mkdir()
    (second / "fake_target.py").write_bytes((project / "fake_target.py").read_bytes())
    other = fake_suite(second, [answer_case("alpha")], name="second")
    assert run_process("run", other, root=_isolated_root).returncode == 0  # newest, no baseline

    explained = run_process("explain", "alpha", "--suite", "first", root=_isolated_root)
    assert explained.returncode == 0, explained.stderr
    by_file = run_process("explain", "alpha", "--suite", first, root=_isolated_root)
    assert by_file.stdout == explained.stdout
    unsuited = run_process("explain", "alpha", root=_isolated_root)
    assert unsuited.returncode == 3
    assert "no baseline for suite 'second'" in unsuited.stderr


def test_runs_prints_the_baseline_legend_only_with_a_baseline(project, _isolated_root):
    suite = fake_suite(project, [answer_case("alpha")])
    assert run_process("run", suite, root=_isolated_root).returncode == 0
    alone = run_process("runs", root=_isolated_root)
    assert alone.returncode == 0, alone.stderr
    assert "baseline" not in alone.stdout
    assert run_process("run", suite, "--set-baseline", root=_isolated_root).returncode == 0
    assert run_process("runs", root=_isolated_root).stdout.endswith("(* the suite's baseline)\n")
