"""A report format registered from outside the package: `--format` offers it, and a comparison and
a run render through it from their models, as the built-in formats do."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from noisefloor import report as formats
from noisefloor.model.report import Report
from noisefloor.model.run import RunSummary
from tests.builders import answer_case, fake_suite

CAPTURE = Path(__file__).resolve().parents[2] / "examples" / "local-llm" / "capture"


class Csv:
    """A toy format: one line per case, its id and what was found."""

    def report(self, report: Report, repeats: Mapping[str, Any] | None) -> str:
        rows = [f"{case.case_id},{case.verdict}" for case in report.cases]
        return "case_id,verdict\n" + "".join(f"{row}\n" for row in rows)

    def run(self, summary: RunSummary) -> str:
        rows = [
            f"{case.case_id}," + " ".join(f"{k} x{n}" for k, n in sorted(case.outcomes.items()))
            for case in summary.cases
        ]
        return "case_id,outcomes\n" + "".join(f"{row}\n" for row in rows)


@pytest.fixture
def csv_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "_REGISTERED", {})
    formats.register_format("csv", Csv())


def test_a_registered_format_renders_a_comparison_from_its_model(cli, csv_format, tmp_path):
    root = tmp_path / "capture"
    shutil.copytree(CAPTURE, root)

    as_json = cli("--root", root, "diff", "--format", "json")
    as_csv = cli("--root", root, "diff", "--format", "csv")

    assert as_csv.code == as_json.code
    cases = as_json.json()["cases"]
    assert len(cases) == 8
    assert as_csv.out.splitlines() == [
        "case_id,verdict",
        *(f"{case['case_id']},{case['verdict']}" for case in cases),
    ]


def test_a_registered_format_renders_a_run_from_its_summary(cli, csv_format, project, tmp_path):
    suite = fake_suite(project, [answer_case("alpha"), answer_case("beta")], repeats=2)

    result = cli("--root", tmp_path / "store", "run", suite, "--format", "csv")

    assert result.code == 0, result.err
    assert result.out.splitlines() == ["case_id,outcomes", "alpha,ok x2", "beta,ok x2"]


def test_the_command_line_offers_a_registered_format_and_no_other(cli, csv_format, capsys):
    with pytest.raises(SystemExit):
        cli("diff", "--help")
    assert "{terminal,json,markdown,junit,html,csv}" in capsys.readouterr().out

    refused = cli("diff", "--format", "xml")
    assert refused.code == 3
    assert "invalid choice: 'xml'" in refused.err


def test_a_format_name_is_taken_once(csv_format):
    with pytest.raises(ValueError, match="'csv' exists already"):
        formats.register_format("csv", Csv())
    with pytest.raises(ValueError, match="'json' exists already"):
        formats.register_format("json", Csv())
