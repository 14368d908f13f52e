"""Inspect AI's scores as noisefloor reads them: `inspect_score` (pass or fail) and
`inspect_value` (a number) over every kind of value a scorer of Inspect returns, and one epoch of
an `EvalSample` as a noisefloor sample."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noisefloor.scorers.registry import REGISTRY
from noisefloor.scorers.score import ScoreInput


def _score(value: Any, **params: Any) -> Any:
    inp = ScoreInput(text="", scores={"match": {"value": value, "answer": "42"}})
    return REGISTRY.build("inspect_score", params)(inp)


def _value(value: Any, **params: Any) -> Any:
    inp = ScoreInput(text="", scores={"match": {"value": value}})
    return REGISTRY.build("inspect_value", params)(inp)


@pytest.mark.parametrize(
    ("value", "passed", "number"),
    [
        ("C", True, 1.0),
        ("I", False, 0.0),
        ("P", False, 0.5),
        ("N", False, 0.0),
        (True, True, 1.0),
        (False, False, 0.0),
        (1, True, 1.0),
        (0.0, False, 0.0),
        ("c", True, 1.0),
    ],
)
def test_letters_and_booleans_read_as_inspect_reads_them(
    value: Any, passed: bool, number: float
) -> None:
    assert _score(value).passed is passed
    assert _value(value).value == number


def test_the_detail_names_the_scorer_the_value_and_the_answer() -> None:
    assert _score("I").detail == "match 'I' (answer '42')"


@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(-10, 10))
def test_a_number_is_itself_and_passes_at_or_above_pass_at(value: float, pass_at: float) -> None:
    assert _value(value).value == value
    assert _score(value, pass_at=pass_at).passed is (value >= pass_at)


@given(st.text().filter(lambda t: t.strip().upper() not in "CIPN" or not t.strip()))
def test_a_string_that_is_no_grade_nor_number_is_a_scorer_error(text: str) -> None:
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if math.isfinite(number):
        assert _value(text).value == number
    else:
        with pytest.raises(ValueError, match="none of C, I, P, N"):
            _value(text)


@pytest.mark.parametrize(
    ("scores", "params", "words"),
    [
        (None, {}, "gave this sample no score"),
        ({}, {}, "gave this sample no score"),
        ({"a": {"value": "C"}, "b": {"value": "I"}}, {}, "has 2 scores (a, b): name one"),
        ({"a": {"value": "C"}}, {"scorer": "b"}, "scorer 'b' gave this sample no score"),
        ({"a": {"value": {"x": 1}}}, {}, "is a dict (x): name the value with `key`"),
        ({"a": {"value": "C"}}, {"key": "x"}, "not a dict"),
        ({"a": {"value": [1]}}, {}, "none of C, I, P, N"),
    ],
    ids=["none", "empty", "several", "other-name", "dict", "key-on-letter", "list"],
)
def test_a_score_that_is_not_there_is_a_scorer_error_never_a_fail(
    scores: Any, params: dict[str, Any], words: str
) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        REGISTRY.build("inspect_score", params)(ScoreInput(text="", scores=scores))


def test_a_dict_value_is_read_at_its_key() -> None:
    inp = ScoreInput(text="", scores={"qa": {"value": {"accuracy": "C", "style": 0.25}}})
    assert REGISTRY.build("inspect_score", {"scorer": "qa", "key": "accuracy"})(inp).passed
    assert REGISTRY.build("inspect_value", {"key": "style"})(inp).value == 0.25


def test_a_sample_keeps_output_scores_usage_and_its_error() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai._util.error import EvalError
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    from noisefloor.targets.inspect_samples import raw_sample

    output = ModelOutput.from_content(model="m", content="42")
    sample = EvalSample(
        id=7,
        epoch=3,
        input="q",
        target="42",
        messages=[ChatMessageUser(content="q"), output.message],
        output=output,
        scores={"match": Score(value="C", answer="42")},
        model_usage={
            "a": ModelUsage(input_tokens=5, output_tokens=2, total_tokens=7),
            "b": ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2),
        },
        total_time=1.5,
    )
    raw = raw_sample(sample, "7", 2, model="m", concurrency=40, log="l.eval", version="v")
    assert (raw.kind, raw.case_id, raw.repeat, raw.outcome) == ("inspect", "7", 2, "ok")
    assert raw.output.text == "42" and raw.wall_s == 1.5 and raw.concurrency == 40
    envelope = raw.envelope or {}
    assert envelope["scores"] == {"match": {"value": "C", "answer": "42"}}
    assert envelope["usage"] == {"prompt_tokens": 6, "completion_tokens": 3, "total_tokens": 9}
    assert (envelope["sample_id"], envelope["epoch"], envelope["log"]) == (7, 3, "l.eval")
    assert [m["role"] for m in envelope["messages"]] == ["user", "assistant"]
    assert ScoreInput.from_sample(raw).scores == envelope["scores"]

    failed = sample.model_copy(
        update={
            "error": EvalError(message="boom", traceback="tb", traceback_ansi="tb"),
            "scores": {},
            "output": ModelOutput(model="m"),
        }
    )
    raw = raw_sample(failed, "7", 0, model="m", concurrency=1, log=None, version="v")
    assert raw.outcome == "error:exit" and raw.error == "the sample raised boom"
    assert (raw.envelope or {})["error"] == {"message": "boom", "traceback": "tb"}
