"""What CI systems read without glue: the markdown summary appended to GITHUB_STEP_SUMMARY, and
JUnit XML that validates against a JUnit schema."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

from tests.builders import answer_case, fake_suite


@pytest.fixture
def regressed(cli, project, monkeypatch):
    """A suite file whose next check regresses: its answers turn from Paris to Lyon."""
    # the quoted outputs repeat the input: markup characters reach the XML report
    cases = [answer_case("alpha", input='<b> & "c"'), answer_case("beta")]
    assert cli("check", fake_suite(project, cases)).code == 0
    return fake_suite(project, cases, env={"NOISEFLOOR_FAKE_ANSWER": "Lyon"})


def test_check_appends_the_markdown_summary_whatever_it_prints(
    cli, regressed, tmp_path, monkeypatch
):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = cli("check", regressed, "--format", "json")
    assert result.code == 1
    assert result.json()["exit_code"] == 1  # stdout stays the JSON report alone
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n")  # appended, never truncated
    assert "### noisefloor: fake · 2 regressed · exit 1 · " in text
    assert '| **REGRESSED** | `beta` | contains "Paris" at answer: 0 of ' in text
    # then what each failing case said, as `explain` shows it
    for case in ("alpha", "beta"):
        assert f"<details><summary>What <code>{case}</code> said</summary>" in text
    assert text.count('+  "answer": "Lyon",') == 2


def test_diff_appends_the_summary_too(cli, regressed, tmp_path, monkeypatch):
    cli("run", regressed)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setattr("noisefloor.operations.step_summary.EXPLAINED", 1)
    assert cli("diff").code == 1
    junit = cli("diff", "--format", "junit")
    assert junit.code == 1 and junit.out.startswith("<?xml")
    text = summary.read_text(encoding="utf-8")
    assert text.count("### noisefloor: fake") == 2
    # the worst case explained, and where to find the others
    assert text.count("<details><summary>What <code>") == 2
    assert text.count("1 more failing case(s): `noisefloor explain CASE ") == 2


def test_compare_appends_the_summary(cli, project, tmp_path, monkeypatch):
    suite = fake_suite(project, [answer_case("alpha")])
    cli("record", suite, "--label", "before")
    cli("record", suite, "--label", "after")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert cli("compare", "--baseline", "before", "--current", "after").code == 0
    assert "### noisefloor: fake" in summary.read_text(encoding="utf-8")


def test_without_the_variable_no_summary_is_written(cli, regressed, tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(tmp_path)
    cli("check", regressed)
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".md") == []


def test_an_unwritable_summary_is_a_clear_harness_error(cli, regressed, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no" / "such" / "dir" / "s.md"))
    result = cli("check", regressed)
    assert result.code == 3
    assert "GITHUB_STEP_SUMMARY" in result.err and "hint:" in result.err


JUNIT_XSD = Path(__file__).resolve().parents[1] / "data" / "junit.xsd"


def _validated(xml: str) -> ET.Element:
    import xmlschema

    xmlschema.XMLSchema(JUNIT_XSD).validate(xml)
    return ET.fromstring(xml)


def test_junit_validates_with_one_testcase_per_case_and_evidence_in_the_message(cli, regressed):
    result = cli("check", regressed, "--format", "junit")
    assert result.code == 1
    assert result.out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = _validated(result.out)
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]
    cases = [case for suite in suites for case in suite.findall("testcase")]
    assert sorted(c.get("name") for c in cases) == ["alpha", "beta"]
    failures = [c.find("failure") for c in cases if c.find("failure") is not None]
    assert sum(int(s.get("failures")) for s in suites) == len(failures) == 2
    for failure in failures:
        assert failure.get("type") == "regressed"
        # the message in the words the terminal prints; the rule's test under it
        assert failure.get("message").startswith('regressed: contains "Paris" at answer: 0 of ')
        assert failure.get("message").endswith(" passed, was 5 of 5")
        assert "pass rate 5/5 -> 0/" in failure.text and "p=" in failure.text
        assert "Lyon" in failure.text  # the quoted failing output
    assert '"question": "<b> & ' in failures[0].text


def test_junit_of_a_clean_check_validates(cli, project):
    suite = fake_suite(project, [answer_case("alpha")])
    cli("check", suite)
    result = cli("check", suite, "--format", "junit")
    assert result.code == 0
    root = _validated(result.out)
    assert root.find(".//failure") is None and len(root.findall(".//testcase")) == 1


def test_junit_of_a_run_fails_the_cases_whose_repeats_failed_and_says_it_is_no_verdict(
    cli, regressed
):
    result = cli("run", regressed, "--format", "junit")
    assert result.code == 0  # a run judges nothing: its exit code stays 0
    root = _validated(result.out)
    cases = root.findall(".//testcase")
    assert sorted(c.get("name") for c in cases) == ["alpha", "beta"]
    assert root.get("failures") == "2"
    for case in cases:
        failure = case.find("failure")
        assert failure.get("type") == "failed-repeats"
        assert "no comparison: not a verdict" in failure.get("message")
        assert "1:contains 0/5" in failure.get("message")
        assert "1:contains: 0/5" in failure.text


def test_junit_of_a_clean_run_validates_with_the_numbers_as_output(cli, project):
    suite = fake_suite(project, [answer_case("alpha")])
    result = cli("run", suite, "--format", "junit")
    assert result.code == 0
    root = _validated(result.out)
    assert root.find(".//failure") is None
    assert "1:contains: 5/5" in root.find(".//testcase/system-out").text


def test_the_json_of_a_run_is_its_summary_model(cli, project):
    from noisefloor.model.run import RunSummary

    suite = fake_suite(project, [answer_case("alpha")])
    printed = cli("run", suite, "--format", "json").json()
    assert RunSummary.model_validate(printed).dump() == printed
    assert sorted(printed) == [
        "calls", "cases", "pending", "run", "unmeasured", "warnings", "work"
    ]  # fmt: skip
    assert printed["cases"][0]["scorers"][0]["side"]["k"] == 5


REPO = Path(__file__).resolve().parents[2]


def _check_flags(capsys: pytest.CaptureFixture[str]) -> set[str]:
    """The flags `noisefloor check --help` lists."""
    from noisefloor.cli.main import main

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    return set(re.findall(r"--[a-z][a-z-]*", capsys.readouterr().out))


def test_the_action_installs_noisefloor_and_passes_the_exit_code_through(
    regressed, tmp_path, capsys
):
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert set(action["inputs"]) == {"suite", "args", "remote", "python-version"}
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["noisefloor"]
    check = next(s for s in steps if s.get("id") == "check")
    assert check["env"] == {
        "NOISEFLOOR_SUITE": "${{ inputs.suite }}",
        "NOISEFLOOR_ARGS": "${{ inputs.args }}",
        "NOISEFLOOR_REMOTE": "${{ inputs.remote }}",
    }
    called = [line.split() for line in check["run"].splitlines() if "noisefloor " in line]
    assert [words[:2] for words in called] == [["noisefloor", "check"]]
    assert {w for words in called for w in words if w.startswith("--")} <= _check_flags(capsys)
    # the step's script as the runner runs it: bash, inputs in the environment
    output, summary = tmp_path / "github_output", tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "NOISEFLOOR_SUITE": str(regressed),
        "NOISEFLOOR_ARGS": "--format json --alpha 0.05",
        "NOISEFLOOR_REMOTE": "",  # the input left empty: the committed baseline alone
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    done = subprocess.run(
        ["bash", "-e", "-c", check["run"]], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["counts"] == {"regressed": 2}
    assert output.read_text() == "exit-code=1\n"
    assert "| **REGRESSED** |" in summary.read_text(encoding="utf-8")


def test_the_pre_commit_hook_runs_check_on_the_suite_it_is_given(cli, project):
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "noisefloor-check" and hook["language"] == "python"
    assert hook["pass_filenames"] is False  # `check` takes one suite, named in the hook's args
    assert all(re.search(hook["files"], name) for name in ("suites/x.yaml", "app.py", "c.jsonl"))
    command, *args = hook["entry"].split()
    assert command in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    suite = fake_suite(project, [answer_case("alpha")])
    assert cli(*args, suite).code == 0
    assert cli(*args, suite).code == 0
