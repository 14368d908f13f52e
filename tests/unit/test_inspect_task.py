"""An Inspect task as a suite sees it before any eval: its samples as cases (all, or those
`samples:` lists), one `inspect_score` per scorer of the task, each case's input what the sample
gives its model, and every task that cannot be loaded a clear exit 3."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from noisefloor.errors import TargetConfigError
from noisefloor.suite.load import load_suite
from tests.builders import inspect_suite

pytest.importorskip("inspect_ai")


def test_the_task_samples_are_the_cases_scored_by_its_scorers(tmp_path: Path) -> None:
    suite = load_suite(inspect_suite(tmp_path))
    assert [c.id for c in suite.cases] == [f"c{i:02d}" for i in range(20)]
    assert suite.cases[3].input == "toss 3"
    assert {repr(b.scorer) for c in suite.cases for b in c.scorers} == {
        "inspect_score(scorer='match')"
    }

    chosen = load_suite(inspect_suite(tmp_path / "some", samples=["c03", "c01"]))
    assert [c.id for c in chosen.cases] == ["c03", "c01"]


def _task(directory: Path, source: str) -> Path:
    directory.mkdir()
    (directory / "t.py").write_text(
        "from inspect_ai import Task, task\n"
        "from inspect_ai.dataset import Sample\n"
        "from inspect_ai.model import ChatMessageSystem, ChatMessageUser\n"
        "from inspect_ai.scorer import match, includes\n" + source
    )
    doc = "name: s\ntarget:\n  inspect:\n    task: t.py\n    model: mockllm/model\n"
    (directory / "suite.yaml").write_text(doc)
    return directory / "suite.yaml"


def test_a_sample_of_messages_and_choices_is_keyed_by_what_the_model_sees(tmp_path: Path) -> None:
    suite = _task(
        tmp_path / "t",
        "@task\ndef one():\n    return Task(dataset=[Sample(input=[ChatMessageSystem("
        "content='be brief'), ChatMessageUser(content='2+2?')], choices=['4', '5'], "
        "target='A')], scorer=[match(), includes()])\n",
    )
    (case,) = load_suite(suite).cases
    assert case.id == "1"  # as Inspect numbers a sample without an id
    shown = orjson.loads(case.input)
    assert shown["choices"] == ["4", "5"]
    assert [(m["role"], m["content"]) for m in shown["input"]] == [
        ("system", "be brief"),
        ("user", "2+2?"),
    ]
    # Inspect gives each message a random id: a key holding it would change at every load
    assert all("id" not in m for m in shown["input"])
    assert load_suite(suite).cases[0].input == case.input
    assert [repr(b.scorer) for b in case.scorers] == [
        "inspect_score(scorer='match')",
        "inspect_score(scorer='includes')",
    ]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (
            "@task\ndef a():\n    return Task(dataset=[])\n@task\ndef b():\n    return Task()\n",
            "holds 2 tasks (a, b): name one",
        ),
        (
            "raise ImportError('no module named nowhere')\n@task\ndef a():\n    return Task()\n",
            "importing t.py raised ImportError: no module named nowhere",
        ),
        (
            "@task\ndef a():\n    return Task(dataset=[Sample(id='a b', input='x')])\n",
            "sample id 'a b' of task 'a' cannot name a case",
        ),
        (
            "@task\ndef a():\n    return Task(dataset=[Sample(id='x', input='1'), "
            "Sample(id='x', input='2')])\n",
            "two samples of id 'x'",
        ),
    ],
    ids=["two-tasks", "import-fails", "unsafe-id", "duplicate-id"],
)
def test_a_task_that_cannot_be_loaded_is_a_clear_error(
    tmp_path: Path, source: str, words: str
) -> None:
    with pytest.raises(TargetConfigError) as exc:
        load_suite(_task(tmp_path / "t", source))
    assert words in exc.value.format_message()


def test_the_examples_load_their_twenty_samples() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "inspect"
    for name in ("suite.yaml", "local.yaml"):
        suite = load_suite(example / name)
        assert len(suite.cases) == 20 and suite.cases[0].input == "What is 17 + 25?"
