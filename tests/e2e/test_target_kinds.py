"""A target kind is one module plus one registration: a toy kind, defined and registered here
alone, runs `check`, `show` and `history` through the CLI, with its own checks after a run,
warnings, ledger columns and output name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from noisefloor.errors import TargetConfigError
from noisefloor.model.records import RunRecord, TargetRecord
from noisefloor.targets import kinds
from noisefloor.targets.base import RawSample
from noisefloor.targets.function import FunctionTarget
from noisefloor.targets.kinds import LedgerField, SpecFields, TargetKind
from noisefloor.targets.source import BuiltTarget, TargetPlace
from tests.builders import write_suite


class ToySpec(SpecFields):
    """A canned answer, and the model the toy claims to be."""

    answer: str
    model: str = "toy-1"


class ToyFields(SpecFields):
    toy: ToySpec | None = None


class ToyTarget(FunctionTarget):
    kind = "toy"


class ToyKind(TargetKind):
    name = "toy"
    fields = ToyFields
    choice = "`toy`"
    output_name = "answer"

    def selected(self, spec: BaseModel) -> bool:
        return isinstance(spec, ToyFields) and spec.toy is not None

    def build(self, spec: BaseModel, place: TargetPlace) -> BuiltTarget:
        assert isinstance(spec, ToyFields) and spec.toy is not None
        toy = spec.toy
        comparable = {"model": toy.model}
        key = f"toy-{toy.answer}"
        target = ToyTarget(lambda text, case_id, repeat: toy.answer, key=key, spec=comparable)
        record = TargetRecord(kind=self.name, key=key, spec=comparable)
        return BuiltTarget(target, record, [])

    checks_runs = True
    ledger_fields = (LedgerField("model"), LedgerField("finish_reason"))

    def run_fact(self, sample: RawSample) -> str:
        return sample.output.text

    def check_run(self, facts: Iterator[str]) -> dict[str, int]:
        texts = list(facts)
        if all(t == "refused" for t in texts):
            raise TargetConfigError("the toy refused every call", hint="give it another answer")
        return {"toy-served": len(texts)}

    def run_warnings(self, run: RunRecord, side: str) -> list[str]:
        return [f"the {side}'s toy served {run.served_models}"]

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        return {"model": "toy-ledger", "finish_reason": "toy-finish"}


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy kind, registered for one test only."""
    monkeypatch.setattr(kinds, "_kinds", dict(kinds._load()))
    monkeypatch.setattr(kinds, "_spec", None)
    kinds.register(ToyKind())


def _suite(directory: Path, answer: str) -> Path:
    suite = {
        "name": "toy",
        "target": {"toy": {"answer": answer}},
        "defaults": {"repeats": 3, "baseline_repeats": 3},
        "cases": [
            {"id": "greet", "input": "hello", "scorers": [{"type": "contains", "needle": "hi"}]}
        ],
    }
    return write_suite(directory, suite)


def test_a_kind_registered_from_outside_runs_a_check_through_the_cli(cli, tmp_path, toy):
    suite = _suite(tmp_path, "hi there")
    first = cli("check", suite, "--format", "json")
    assert first.code == 0, first.err
    adopted = first.json()
    assert adopted["adopted"] is True
    assert adopted["runs"]["candidate"]["target"] == {"kind": "toy", "model": "toy-1"}
    assert adopted["runs"]["candidate"]["served_models"] == {"toy-served": 3}
    assert "the run's toy served {'toy-served': 3}" in adopted["warnings"]

    again = cli("check", suite, "--format", "json")
    assert again.code == 0, again.err
    report = again.json()
    assert report["cases"][0]["verdict"] == "unchanged"
    assert "the candidate's toy served {'toy-served': 3}" in report["warnings"]

    shown = cli("show", report["candidate"])
    assert shown.code == 0, shown.err
    assert "target toy toy-hi there" in shown.out
    assert "   answer:\n   | hi there" in shown.out

    history = cli("history", "greet")
    assert history.code == 0, history.err
    assert "model toy-ledger" in history.out


def test_a_kind_refuses_a_run_from_its_check_after_the_run(cli, tmp_path, toy):
    result = cli("check", _suite(tmp_path, "refused"))
    assert result.code == 3
    assert "the toy refused every call" in result.err


def test_a_suite_names_exactly_one_registered_kind(cli, tmp_path, toy):
    path = _suite(tmp_path, "hi")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["target"]["command"] = ["echo", "hi"]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = cli("check", path)
    assert result.code == 3
    assert (
        "give exactly one of `command` (an argv list), `http`, `inspect` (an Inspect AI task) or `toy`"
        in result.err
    )
