"""The report model: its JSON Schema (`noisefloor schema --report`) holds every JSON report the
commands produce, and every format renders from the one model the JSON report dumps."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from noisefloor.model.report import REPORT_VERSION, Report
from noisefloor.report import FORMATS, render_report
from tests.builders import FAKE, answer_case, fake_suite

CAPTURE = Path(__file__).resolve().parents[2] / "examples" / "local-llm" / "capture"
DERIVED = ("doit.sqlite*", "ledger.sqlite*", "scores", "bands", "verdicts", "reports", "locks")


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the committed capture's runs and samples: what a diff derives from them lands
    there, never in the checkout."""
    root = tmp_path_factory.mktemp("capture") / "capture"
    shutil.copytree(CAPTURE, root, ignore=shutil.ignore_patterns(*DERIVED))
    return root


def _schema(cli: Any) -> Draft202012Validator:
    result = cli("schema", "--report")
    assert result.code == 0, result.err
    schema = result.json()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _cases(needle: str = "Paris") -> list[dict[str, Any]]:
    timed = answer_case("alpha", needle=needle)
    timed["scorers"].append("latency")
    numbered = answer_case("beta")
    numbered["scorers"].append(
        {"type": "json_path_number", "path": "citations[].score", "min": 0.5}
    )
    return [timed, numbered]


def _reports(cli: Any, project: Path, tmp_path: Path, capture: Path) -> dict[str, dict[str, Any]]:
    """Every kind of JSON report: adoptions, a comparison per rule, a diff, a labels compare."""
    out: dict[str, dict[str, Any]] = {}

    def report(name: str, *args: str | Path) -> None:
        result = cli(*args, "--format", "json")
        assert result.code in (0, 1, 2), result.err
        out[name] = result.json()

    suite = fake_suite(project, _cases(), repeats=3)
    report("adopted", "check", suite)
    # the code changes (a version change with the file that moved it), one input is edited
    # and one scorer redefined: each marks the report
    code = project / "fake_target.py"
    code.write_text(code.read_text().replace('"score", float, 0.9', '"score", float, 0.4'))
    cases = _cases(needle="Par")
    cases[1]["input"] = "question beta, edited"
    suite = fake_suite(project, cases, repeats=3)
    for rule in ("exact", "band", "wilson"):
        report(f"check {rule}", "check", suite, "--rule", rule)
    report("diff", "diff")
    for label in ("before", "after"):
        assert cli("record", suite, "--label", label).code == 0
    report("compare", "compare", "--baseline", "before", "--current", "after")

    dead = tmp_path / "dead"
    dead.mkdir()
    shutil.copy(FAKE, dead / "fake_target.py")
    broken = fake_suite(
        dead, [answer_case("gamma")], name="dead", repeats=2, env={"NOISEFLOOR_FAKE_EXIT_CODE": "3"}
    )
    report("not adopted", "check", broken)
    for rule in ("exact", "band", "wilson"):
        report(f"capture {rule}", "--root", capture, "diff", "--rule", rule)
    return out


def test_every_json_report_holds_to_the_report_schema(cli, project, tmp_path, capture):
    validator = _schema(cli)
    reports = _reports(cli, project, tmp_path, capture)

    assert reports["adopted"]["adopted"] is True
    assert reports["not adopted"]["baseline"] is None
    changed = reports["check exact"]
    assert "target_change" in changed
    assert any("input_changed" in c for c in changed["cases"])
    evidence = [s["evidence"] for c in changed["cases"] for s in c["scorers"]]
    assert any("scorer_redefined" in e for e in evidence)
    assert any("values" in e for e in evidence)
    for name, report in reports.items():
        assert report["version"] == REPORT_VERSION, name
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(report)]
        assert errors == [], name


def test_the_report_schema_refuses_a_key_it_does_not_declare(cli, capture):
    validator = _schema(cli)
    report = cli("--root", capture, "diff", "--format", "json").json()
    assert validator.is_valid(report)

    report["cases"][0]["scorers"][0]["evidence"]["p_regres"] = 0.5

    assert not validator.is_valid(report)


def test_schema_without_report_is_still_the_suite_schema(cli):
    suite_schema = cli("schema").json()
    report_schema = cli("schema", "--report").json()

    assert "cases" in suite_schema["properties"] and "target" in suite_schema["properties"]
    assert "exit_code" not in suite_schema["properties"]
    assert {"version", "exit_code", "counts", "cases"} <= set(report_schema["required"])


@pytest.mark.parametrize("rule", ["exact", "band", "wilson"])
def test_every_format_renders_from_the_model_the_json_report_dumps(cli, rule, capture):
    """The JSON report read back into the model renders every format exactly as the command did."""
    printed = {
        fmt: cli("--root", capture, "diff", "--rule", rule, "--format", fmt) for fmt in FORMATS
    }
    model = Report.model_validate(printed["json"].json())

    for fmt in FORMATS:
        assert render_report(model, fmt) == printed[fmt].out, fmt
    assert orjson.loads(render_report(model, "json")) == model.dump() == printed["json"].json()


def test_derived_verdict_and_report_files_carry_the_version(cli, tmp_path):
    root = tmp_path / "capture"
    # the committed runs and samples only: no file derived from them yet
    shutil.copytree(CAPTURE, root, ignore=shutil.ignore_patterns(*DERIVED))
    assert cli("--root", root, "diff", "--format", "json").code == 0

    verdicts = list((root / "verdicts").rglob("*.json"))
    reports = list((root / "reports").rglob("*.json"))
    assert verdicts and reports
    for path in verdicts:
        assert orjson.loads(path.read_bytes())["version"] == REPORT_VERSION, path
    for path in reports:
        data = orjson.loads(path.read_bytes())
        # a shard holds the verdict files of its cases, each with its version
        for versioned in data if ".shard" in path.name else [data]:
            assert versioned["version"] == REPORT_VERSION, path
