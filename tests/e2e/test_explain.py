"""`noisefloor explain CASE [RUN]` through the real CLI: what the target said on each side, the diff
between the two, which scorer failed on which repeat; from stored samples, never calling the target.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from noisefloor.report.explain import repeat_ranges
from tests.builders import answer_case, fake_suite

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


@pytest.fixture
def quickstart_regression(cli, tmp_path):
    """The README's quickstart regression: the first case's input asks about Mars."""
    work = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, work)
    suite = work / "suite.yaml"
    # adopted at 5 repeats, not the design's 100: a quick first check
    assert cli("check", suite, "--baseline-repeats", "5").code == 0
    text = suite.read_text()
    suite.write_text(text.replace("capital of France?", "capital of Mars?"))
    assert cli("check", suite).code == 1
    return suite


def test_explain_shows_the_quickstart_regression_as_a_diff(cli, quickstart_regression):
    result = cli("explain", "capital-of-france")
    assert result.code == 0, result.err
    out = result.out
    assert "input changed: 'What is the capital of France?' -> 'What is the capital of Mars?'" in (
        " ".join(out.split())
    )
    # JSON outputs are compared field by field: the changed answer is a changed line
    assert '  -  "answer": "Paris is the capital of France.",' in out
    assert '  +  "answer": "I don\'t know.",' in out
    assert "the candidate's most common failing output" in " ".join(out.split())
    # 0/5 against 5/5 (p=1/252) misses the first look's share of alpha over two scorers; the
    # second look decides the case on every repeat it took: r0 to r9
    assert '  contains "Paris" at answer             5 of 5    0 of 10\n' in out
    assert "  json_valid                             5 of 5    10 of 10\n" in out
    # the failures grouped by why, each with how many repeats
    assert "  x10 contains \"Paris\" at answer: 'Paris' not found at answer (r0-r9)\n" in out
    assert '  x10 json_path_equals "high" at confidence: found "low", expected "high"' in out
    # each side's distinct outputs with their counts
    assert "  x5 (r0-r4)\n" in out and "  x10 (r0-r9, all failing)\n" in out
    assert max(map(len, out.splitlines())) <= 80


def test_explain_in_markdown_and_json(cli, quickstart_regression):
    md = cli("explain", "capital-of-france", "--format", "markdown")
    assert md.code == 0
    assert md.out.startswith("#### `capital-of-france`")
    block = md.out.split("```diff\n", 1)[1].split("\n```", 1)[0]
    assert '-  "answer": "Paris is the capital of France.",' in block.splitlines()
    assert '| contains "Paris" at answer | 5 of 5 | 0 of 10 |' in md.out
    assert "| x10 (r0-r9) | contains \"Paris\" at answer | 'Paris' not found at answer |" in md.out
    data = json.loads(cli("explain", "capital-of-france", "--format", "json").out)
    assert data["case_id"] == "capital-of-france" and data["suite"] == "quickstart"
    assert data["candidate"]["outputs"][0]["repeats"] == list(range(10))
    assert data["candidate"]["outputs"][0]["failing"] == list(range(10))
    assert data["baseline"]["passed"] == 5 and data["candidate"]["failed"] == 10
    assert {m["scorer"] for m in data["candidate"]["misses"]} == {
        "1:contains",
        "2:json_path_equals",
    }


def test_distinct_outputs_are_counted_most_common_first(cli, project):
    cases = [answer_case("alpha")]
    suite = fake_suite(project, cases)
    cli("check", suite)
    # the code changes: repeats 0, 2 and 4 now answer with filler
    flaky = fake_suite(project, cases, env={"NOISEFLOOR_FAKE_FLAKE_EVERY": "2"})
    cli("check", flaky, "--repeats", "5")  # a fixed design: the repeats this test counts
    data = json.loads(cli("explain", "alpha", "--format", "json").out)
    outputs = data["candidate"]["outputs"]
    assert [(o["repeats"], o["failing"]) for o in outputs] == [([0, 2, 4], [0, 2, 4]), ([1, 3], [])]
    assert '"answer": "unrelated filler"' in outputs[0]["text"]
    assert '+  "answer": "unrelated filler",' in data["diff"]
    assert '-  "answer": "Paris",' in data["diff"]
    assert data["scorers"][1] == {
        "scorer": "1:contains",
        "title": 'contains "Paris" at answer',
        "baseline": [5, 5],
        "candidate": [2, 5],
    }
    out = cli("explain", "alpha").out
    assert "  x3 (r0, r2, r4, all failing)\n" in out and "  x2 (r1, r3)\n" in out


def test_a_failed_call_is_one_reason_per_repeat_and_output_text_is_diffed_first(cli, project):
    cases = [answer_case("alpha")]
    cli("check", fake_suite(project, cases))
    env = {"NOISEFLOOR_FAKE_FAIL_EVERY": "4", "NOISEFLOOR_FAKE_FLAKE_EVERY": "3"}
    cli("check", fake_suite(project, cases, env=env), "--repeats", "5")  # a fixed design
    data = json.loads(cli("explain", "alpha", "--format", "json").out)
    # r0 and r4 fail as calls (exit 1), r3 prints filler, r1 and r2 pass
    errors = [m for m in data["candidate"]["misses"] if m["status"] == "target_error"]
    assert [(m["repeat"], m["scorer"]) for m in errors] == [(0, ""), (4, "")]
    assert "failing on purpose" in errors[0]["detail"] or "exit" in errors[0]["detail"]
    assert data["candidate"]["outputs"][0]["text"].startswith("[")
    # the diff is of what the target said, not of the failed calls' errors
    assert '+  "answer": "unrelated filler",' in data["diff"]


def test_long_outputs_are_cut_and_say_so(cli, project):
    cases = [{"id": "big", "input": "q", "scorers": [{"type": "contains", "needle": "Paris"}]}]
    cli("check", fake_suite(project, cases, repeats=2))
    cli("check", fake_suite(project, cases, repeats=2, env={"NOISEFLOOR_FAKE_HUGE_MB": "0.01"}))
    result = cli("explain", "big")
    assert result.code == 0
    assert "... cut: 10000 characters in all" in result.out
    assert len(result.out) < 6000


def test_explain_never_calls_the_target(cli, project):
    log = project / "calls.log"
    cases = [answer_case("alpha")]
    env = {"NOISEFLOOR_FAKE_LOG_CALLS": str(log)}
    cli("check", fake_suite(project, cases, env=env))
    lyon = fake_suite(project, cases, env={**env, "NOISEFLOOR_FAKE_ANSWER": "Lyon"})
    cli("check", lyon, "--repeats", "5")
    before = log.read_text()
    (project / "fake_target.py").write_text("raise SystemExit('must not run')\n")
    assert cli("explain", "alpha").code == 0
    assert log.read_text() == before


def test_an_earlier_run_by_label_and_an_explicit_baseline(cli, project):
    cases = [answer_case("alpha")]
    suite = fake_suite(project, cases)
    cli("run", suite, "--label", "first", "--set-baseline")
    cli(
        "run", fake_suite(project, cases, env={"NOISEFLOOR_FAKE_ANSWER": "Lyon"}), "--label", "lyon"
    )
    cli("run", fake_suite(project, cases, env={"NOISEFLOOR_FAKE_ANSWER": "Rome"}))
    lyon = cli("explain", "alpha", "lyon")
    assert lyon.code == 0 and '+  "answer": "Lyon",' in lyon.out
    newest = cli("explain", "alpha", "--baseline", "lyon")
    assert '-  "answer": "Lyon",' in newest.out and '+  "answer": "Rome",' in newest.out


UNKNOWN = [
    (["capital-of-franse"], "no stored run has a case 'capital-of-franse'", "capital-of-france"),
    (["capital-of-france", "lates"], "no run 'lates'", "did you mean latest?"),
    (["capital-of-france", "zzz"], "no run 'zzz'", "runs and labels: "),
    (["refuses-unknow", "latest"], "has no case 'refuses-unknow'", "refuses-unknown"),
    (["capital-of-france", "--baseline", "frist"], "no run 'frist'", "did you mean first?"),
]


def test_unknown_cases_and_runs_exit_3_with_near_names(cli, quickstart_regression):
    cli("run", quickstart_regression, "--label", "latest")
    cli("run", quickstart_regression, "--label", "first")
    for args, said, hint in UNKNOWN:
        result = cli("explain", *args)
        assert result.code == 3, (args, result.out)
        assert said in result.err, args
        assert "hint:" in result.err and hint in result.err.split("hint:", 1)[1], args


def test_the_baseline_itself_has_nothing_to_explain(cli, project):
    cli("check", fake_suite(project, [answer_case("alpha")]))
    result = cli("explain", "alpha")
    assert result.code == 3
    assert "is the baseline of 'fake' itself" in result.err and "hint:" in result.err


def test_repeat_ranges_join_consecutive_repeats():
    assert repeat_ranges([0, 1, 2, 4, 6, 7]) == "r0-r2, r4, r6-r7"
    assert repeat_ranges([3]) == "r3"
    assert repeat_ranges([]) == ""


def test_when_both_sides_fail_alike_the_diff_shows_the_baseline_passing(cli, tmp_path):
    """The committed local-model capture: `invoice_json` mostly wraps its JSON in a code fence,
    which fails on both sides; the diff shows what the baseline said when it passed."""
    root = tmp_path / "capture"
    shutil.copytree(QUICKSTART.parent / "local-llm" / "capture", root)
    result = cli("--root", root, "explain", "invoice_json")
    assert result.code == 0, result.err
    out = result.out
    joined = " ".join(out.split())
    assert (
        "the baseline's most common passing output -> the candidate's most common failing" in joined
    )
    assert "  +```json\n" in out
    assert "  x4 (r1-r4, all failing)\n" in out and "  x1 (r0)\n" in out
    assert "  x5 json_fields" in out and ": not_json (r0-r4)" in joined
