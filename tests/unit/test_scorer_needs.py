"""What scorers need from a target and what kinds provide: the built-ins' declarations, a user's
`needs=`, how listings show them, and the loader refusing a suite whose target cannot serve one
while it accepts every suite that it can."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from noisefloor.errors import SuiteError
from noisefloor.report.scorers import render_scorers
from noisefloor.scorers.registry import REGISTRY, Registry
from noisefloor.scorers.score import ScoreInput
from noisefloor.suite import bindings
from noisefloor.suite.load import load_suite
from noisefloor.targets import kinds
from noisefloor.targets.kinds import SpecFields, TargetKind, kind_named
from noisefloor.targets.provisions import PROVISIONS
from tests.builders import write_suite

#: The built-in scorers that read more of a sample than its output, and what.
NEEDY = {
    "latency": {"latency"},
    "tokens": {"usage"},
    "inspect_score": {"scores"},
    "inspect_value": {"scores"},
}


@pytest.mark.parametrize("name", REGISTRY.names())
def test_a_builtin_needs_only_what_it_reads_besides_the_output(name: str) -> None:
    assert REGISTRY.get(name).needs == NEEDY.get(name, set())


@pytest.mark.parametrize(
    ("kind", "provides"),
    [
        ("command", {"latency"}),
        ("http", {"latency", "usage"}),
        ("function", {"latency"}),
    ],
)
def test_each_builtin_kind_declares_what_it_provides(kind: str, provides: set[str]) -> None:
    assert kind_named(kind).provides == provides


def test_a_kind_from_outside_times_its_calls_and_reports_no_usage_unless_it_says() -> None:
    class Plain(TargetKind):
        name = "plain"

    assert Plain().provides == {"latency"}


def test_a_user_scorer_declares_one_need_or_several() -> None:
    registry = Registry()

    @registry.scorer("short_answer", needs="usage")
    def short_answer(inp: ScoreInput, params: object) -> bool:
        """Passes when the answer took few tokens."""
        return inp.tokens is not None and inp.tokens.completion < 10

    @registry.scorer("fast_and_short", needs=["latency", "usage"])
    def fast_and_short(inp: ScoreInput, params: object) -> bool:
        """Passes when the answer came fast and took few tokens."""
        return inp.wall_s < 1

    assert registry.get("short_answer").needs == {"usage"}
    assert registry.get("fast_and_short").needs == {"latency", "usage"}
    rows = {row["name"]: row for row in registry.table()}
    assert rows["fast_and_short"]["needs"] == "latency, usage"


def test_a_need_no_target_can_provide_is_refused_when_the_scorer_registers() -> None:
    registry = Registry()
    with pytest.raises(ValueError, match="scorer 'json_shape': needs 'json': a scorer may need "):
        registry.scorer("json_shape", needs=["json"])  # type: ignore[list-item]
    assert registry.names() == []


def test_listings_say_what_a_scorer_needs() -> None:
    lines = render_scorers(REGISTRY.table()).splitlines()
    needs = [line.strip() for line in lines if "needs from its target" in line]
    assert needs == [
        "needs from its target: scores",
        "needs from its target: scores",
        "needs from its target: latency",
        "needs from its target: usage",
    ]
    tokens = next(i for i, line in enumerate(lines) if line.startswith("tokens "))
    assert lines[tokens + 2].strip() == "needs from its target: usage"
    variants = {v["title"]: v for v in REGISTRY.json_schema()["anyOf"][1]["oneOf"]}
    assert variants["tokens"]["description"].endswith(
        f"Needs from its target: usage ({PROVISIONS['usage']})."
    )
    assert "Needs" not in variants["contains"]["description"]


def _suite(
    directory: Path, target: dict[str, object], scorers: list[object], filename: str = "suite.yaml"
) -> Path:
    case = {"id": "a", "input": "x", "scorers": scorers}
    doc = {"name": "needs", "target": target, "cases": [case]}
    return write_suite(directory, doc, filename=filename)


def test_a_suite_whose_target_serves_every_need_loads(tmp_path: Path) -> None:
    command = _suite(
        tmp_path,
        {"command": ["echo", "{}"], "output": "json"},
        ["latency", "json_valid", {"type": "json_fields", "required": []}],
        "command.yaml",
    )
    assert [b.label for b in load_suite(command).cases[0].scorers] == [
        "0:latency",
        "1:json_valid",
        "2:json_fields",
    ]
    endpoint = _suite(
        tmp_path, {"http": {"base_url": "http://127.0.0.1:9", "model": "m"}}, ["tokens", "latency"]
    )
    assert len(load_suite(endpoint).cases[0].scorers) == 2


class _Replay(TargetKind):
    """Answers read back from a recording: nothing about the calls is measured."""

    name = "replay"
    provides = frozenset()


def test_a_kind_that_provides_nothing_refuses_a_latency_scorer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bindings, "kinds", lambda: [_Replay()])
    built, problems = bindings.scorers_of(["json_valid", "latency"], {})
    assert problems == []

    assert bindings.unserved("slow", built, _Replay(), inherited=False) == [
        (
            (1,),
            f"case 'slow': scorer 'latency' needs latency ({PROVISIONS['latency']}), which a "
            "replay target does not provide: remove it from the case's `scorers`",
        )
    ]


def test_a_registered_kind_is_named_among_those_that_provide_a_need(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kinds, "_kinds", dict(kinds._load()))
    monkeypatch.setattr(kinds, "_spec", None)
    suite = _suite(tmp_path, {"command": ["echo", "hi"]}, ["tokens"])

    with pytest.raises(SuiteError) as before:
        load_suite(suite)
    assert before.value.details[0].endswith("a kind that provides it (http, inspect)")

    class RecordedFields(SpecFields):
        recorded: str | None = None

    class Recorded(TargetKind):
        name = "recorded"
        fields = RecordedFields
        choice = "`recorded`"
        provides = frozenset({"usage"})

        def selected(self, spec: BaseModel) -> bool:
            return isinstance(spec, RecordedFields) and spec.recorded is not None

    kinds.register(Recorded())
    with pytest.raises(SuiteError) as after:
        load_suite(suite)
    assert after.value.details[0].endswith("a kind that provides it (http, inspect, recorded)")
