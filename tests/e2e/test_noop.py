"""Through the real CLI: a check whose every derived file is current decides from a key of the
whole comparison, without starting the pipeline; any change to what it rests on runs it again."""

from __future__ import annotations

import pytest
import yaml

from tests.builders import answer_case, fake_suite


@pytest.fixture
def checked(cli, project):
    """A suite checked twice: adopted, then compared once, so every derived file is built."""
    suite = fake_suite(project, [answer_case("alpha"), answer_case("beta")], repeats=3)
    assert cli("check", suite).code == 0
    second = cli("check", suite, "--format", "json")
    assert second.code == 0
    return suite, second.json()


def _no_pipeline(monkeypatch):
    from doit.doit_cmd import DoitMain

    def refuse(self, argv):
        raise AssertionError("the pipeline ran in a no-op check")

    monkeypatch.setattr(DoitMain, "run", refuse)


def test_a_no_op_check_decides_without_the_pipeline(cli, checked, monkeypatch):
    suite, before = checked
    _no_pipeline(monkeypatch)
    again = cli("check", suite, "--format", "json")
    assert again.code == 0, again.err
    report = again.json()
    verdicts = {c["case_id"]: c["verdict"] for c in report["cases"]}
    assert verdicts == {c["case_id"]: c["verdict"] for c in before["cases"]}
    assert report["work"]["executed"] == {}
    assert report["work"]["up_to_date"]["verdict"] == 2


def test_an_edited_scorer_runs_the_pipeline_again(cli, checked, monkeypatch):
    suite, _ = checked
    doc = yaml.safe_load(suite.read_text())
    doc["cases"][1]["scorers"][1]["needle"] = "Par"
    suite.write_text(yaml.safe_dump(doc))
    report = cli("check", suite, "--format", "json").json()
    assert report["work"]["executed"]["score"] == 1
    _no_pipeline(monkeypatch)
    assert cli("check", suite).code == 0  # and that comparison is now the current one


def test_other_settings_run_the_pipeline_again(cli, checked):
    suite, _ = checked
    report = cli("check", suite, "--alpha", "0.01", "--format", "json").json()
    assert report["work"]["executed"]["verdict"] == 2


def test_a_cached_run_scores_without_the_pipeline(cli, project, monkeypatch):
    suite = fake_suite(project, [answer_case("alpha"), answer_case("beta")], repeats=3)
    first = cli("run", suite, "--format", "json")
    assert first.code == 0
    _no_pipeline(monkeypatch)
    again = cli("run", suite, "--format", "json")
    assert again.code == 0, again.err
    assert again.json()["calls"] == 0
    assert again.json()["cases"] == first.json()["cases"]
