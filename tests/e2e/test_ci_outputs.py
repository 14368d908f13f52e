"""What CI systems read without glue: the markdown summary appended to GITHUB_STEP_SUMMARY, and
JUnit XML that validates against a JUnit schema."""

from __future__ import annotations

import pytest

from tests.conftest import answer_case, fake_suite


@pytest.fixture
def regressed(cli, project, monkeypatch):
    """A suite file whose next check regresses: its answers turn from Paris to Lyon."""
    suite = fake_suite(project, [answer_case("alpha"), answer_case("beta")])
    assert cli("check", suite).code == 0
    return fake_suite(
        project, [answer_case("alpha"), answer_case("beta")], env={"NOISEFLOOR_FAKE_ANSWER": "Lyon"}
    )


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
    assert "### noisefloor: fake" in text and "| **regressed** | beta:" in text
    assert "exit 1" in text


@pytest.mark.parametrize("command", [["diff"], ["diff", "--format", "junit"]])
def test_diff_appends_the_summary_too(cli, regressed, tmp_path, monkeypatch, command):
    cli("run", regressed)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert cli(*command).code == 1
    assert cli(*command).code == 1
    text = summary.read_text(encoding="utf-8")
    assert text.count("### noisefloor: fake") == 2


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
