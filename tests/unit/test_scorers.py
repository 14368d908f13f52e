"""Unit tests of the scorer registry and every built-in scorer.

Each scorer is tested through `REGISTRY.build`, the way suites use it.
"""

from __future__ import annotations

import json
import math
import re
import string
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError

from noisefloor.scorers.registry import REGISTRY, Registry, ScorerSpec, UnknownScorer
from noisefloor.scorers.score import ScoreInput, ScoreResult
from noisefloor.targets.base import Outcome, RawSample, Stream


def run(name: str, text: str, **params: Any) -> ScoreResult:
    """Build the scorer `name` with `params` and score one output."""
    return REGISTRY.build(name, params)(ScoreInput(text))


def messages(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    """Every validation message of an error, joined, as a user would read them."""
    return "\n".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.value.errors())


finite_floats = st.floats(allow_nan=False, allow_infinity=False)
json_scalars = st.none() | st.booleans() | st.integers() | finite_floats | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


# --- ScoreInput ----------------------------------------------------------------------------


def test_json_parses_whole_text_once() -> None:
    inp = ScoreInput('{"a": [1, 2]}')
    first = inp.json()
    assert first == {"a": [1, 2]}
    assert inp.json() is first


@pytest.mark.parametrize(
    "text",
    ['```json\n{"a": 1}\n```', 'answer: {"a": 1}', "", "NaN", "{'a': 1}"],
    ids=["fenced", "prose-around", "empty", "nan", "single-quotes"],
)
def test_json_refuses_anything_but_whole_json(text: str) -> None:
    inp = ScoreInput(text)
    for _ in range(2):  # the failure is cached and raised again
        with pytest.raises(ValueError, match="not JSON"):
            inp.json()


def test_from_sample_copies_fields_and_reuses_parse() -> None:
    sample = RawSample(
        kind="command",
        case_id="c1",
        repeat=0,
        outcome=Outcome.OK,
        output=Stream(text='```json\n{"ok": true}\n```'),
        wall_s=1.5,
        concurrency=4,
        parsed={"ok": True},
    )
    inp = ScoreInput.from_sample(sample)
    assert (inp.text, inp.wall_s, inp.concurrency) == (sample.output.text, 1.5, 4)
    assert inp.json() == {"ok": True}


def test_from_sample_without_parse_parses_text() -> None:
    sample = RawSample(
        kind="command", case_id="c1", repeat=0, outcome=Outcome.OK, output=Stream(text="[1]")
    )
    assert ScoreInput.from_sample(sample).json() == [1]


# --- contains / not_contains / regex -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "params", "passed", "detail"),
    [
        ("all OK here", {"needle": "ok"}, True, "found 'ok'"),
        ("all OK here", {"needle": "ok", "case_sensitive": True}, False, "'ok' not found"),
        ("nothing", {"needle": "ok"}, False, "'ok' not found"),
        ('{"a": "Paris"}', {"needle": "paris", "path": "a"}, True, "found 'paris'"),
        (
            '{"a": "x", "b": "Paris"}',
            {"needle": "paris", "path": "a"},
            False,
            "'paris' not found at a",
        ),
        ('{"a": {"n": 1}}', {"needle": '{"n":1}', "path": "a"}, True, "found '{\"n\":1}'"),
        (
            '{"c": [{"u": "x"}, {"u": "y.org"}]}',
            {"needle": "y.org", "path": "c[].u"},
            True,
            "found 'y.org'",
        ),
        # a typo in a path reads as one, not as a wrong answer
        ('{"a": 1}', {"needle": "1", "path": "missing"}, False, "path 'missing' matched nothing"),
        ("not json, ok", {"needle": "ok", "path": "a"}, False, "not_json"),
    ],
    ids=[
        "case-insensitive-default",
        "case-sensitive",
        "absent",
        "path-string",
        "path-other-key-ignored",
        "path-object-as-compact-json",
        "path-projection",
        "path-finds-nothing",
        "path-on-non-json",
    ],
)
def test_contains(text: str, params: dict[str, Any], passed: bool, detail: str) -> None:
    result = run("contains", text, **params)
    assert (result.passed, result.detail) == (passed, detail)
    assert result.value == (1.0 if passed else 0.0)


@pytest.mark.parametrize(
    ("text", "params", "passed", "detail"),
    [
        ("clean answer", {"needle": "error"}, True, "no 'error'"),
        ("an ERROR", {"needle": "error"}, False, "found 'error'"),
        ('{"a": "fine", "b": "error"}', {"needle": "error", "path": "a"}, True, "no 'error'"),
        ("error", {"needle": "error", "path": "a"}, False, "not_json"),
        ("plain text", {"needle": "error", "path": "a"}, False, "not_json"),
    ],
    ids=[
        "absent",
        "present",
        "path-absent",
        "path-on-non-json",
        "non-json-never-passes-by-absence",
    ],
)
def test_not_contains(text: str, params: dict[str, Any], passed: bool, detail: str) -> None:
    result = run("not_contains", text, **params)
    assert (result.passed, result.detail) == (passed, detail)


@pytest.mark.parametrize(
    ("text", "params", "passed", "detail"),
    [
        ("order #1234 done", {"pattern": r"#\d+"}, True, 'matched "#1234"'),
        ("Total: 5", {"pattern": "total: \\d"}, True, 'matched "Total: 5"'),
        ("Total: 5", {"pattern": "total", "case_sensitive": True}, False, "no match for 'total'"),
        ('{"id": "ab-12"}', {"pattern": "^ab-\\d+$", "path": "id"}, True, 'matched "ab-12"'),
        ("ab-12", {"pattern": "ab", "path": "id"}, False, "not_json"),
    ],
    ids=["match", "ignorecase-default", "case-sensitive", "path-anchored", "path-on-non-json"],
)
def test_regex(text: str, params: dict[str, Any], passed: bool, detail: str) -> None:
    result = run("regex", text, **params)
    assert (result.passed, result.detail) == (passed, detail)


@given(haystack=st.text(max_size=40), needle=st.text(min_size=1, max_size=4))
def test_contains_agrees_with_in(haystack: str, needle: str) -> None:
    exact = run("contains", haystack, needle=needle, case_sensitive=True)
    loose = run("contains", haystack, needle=needle)
    absent = run("not_contains", haystack, needle=needle, case_sensitive=True)
    assert exact.passed is (needle in haystack)
    assert loose.passed is (needle.casefold() in haystack.casefold())
    assert absent.passed is not exact.passed


@given(prefix=st.text(max_size=20), needle=st.text(min_size=1, max_size=5), suffix=st.text())
def test_contains_finds_an_embedded_needle(prefix: str, needle: str, suffix: str) -> None:
    assert run("contains", prefix + needle + suffix, needle=needle).passed


# --- json_valid ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "passed", "detail"),
    [
        ('{"a": 1}', True, "ok"),
        (" [1, 2]\n", True, "ok"),
        ("0", True, "ok"),
        ("null", False, "null"),
        ('```json\n{"a": 1}\n```', False, "not_json"),
        ('{"a": 1', False, "not_json"),
        ("", False, "not_json"),
    ],
    ids=["object", "array-with-whitespace", "zero", "null", "fenced", "truncated", "empty"],
)
def test_json_valid(text: str, passed: bool, detail: str) -> None:
    result = run("json_valid", text)
    assert (result.passed, result.detail, result.value) == (passed, detail, float(passed))


def _loads_or_none(text: str) -> tuple[bool, Any]:
    """`json.loads`, refusing NaN, Infinity and numbers beyond float range as orjson does."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    def finite(number: str) -> float:
        value = float(number)
        if math.isinf(value):
            raise ValueError(number)
        return value

    try:
        return True, json.loads(text, parse_constant=refuse, parse_float=finite, parse_int=finite)
    except ValueError:
        return False, None


@given(value=json_values)
def test_json_valid_agrees_with_json_loads_on_json(value: Any) -> None:
    text = json.dumps(value)
    assert run("json_valid", text).passed is (json.loads(text) is not None)


@given(text=st.text(alphabet=string.printable.replace("\\", ""), max_size=20))
def test_json_valid_agrees_with_json_loads_on_text(text: str) -> None:
    ok, value = _loads_or_none(text)
    assert run("json_valid", text).passed is (ok and value is not None)


# --- json_path_equals / json_path_in / json_path_subset ------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "passed", "detail"),
    [
        ('{"a": 1}', 1, True, "found 1"),
        ('{"a": 1.0}', 1, True, "found 1.0"),
        ('{"a": true}', 1, False, "found true, expected 1"),
        ('{"a": 1}', True, False, "found 1, expected true"),
        ('{"a": 0}', False, False, "found 0, expected false"),
        ('{"a": "1"}', 1, False, 'found "1", expected 1'),
        ('{"a": {"k": [true]}}', {"k": [1]}, False, 'found {"k":[true]}, expected {"k":[1]}'),
        ('{"a": {"k": [2]}}', {"k": [2.0]}, True, 'found {"k":[2]}'),
        ('{"b": 1}', 1, False, "path 'a' matched nothing"),
        ('{"a": [1, 1]}', 1, False, "2 values at a"),
        ("a: 1", 1, False, "not_json"),
        ('{"a": -9223372036854775809}', -9223372036854775809, True, "found -9.223372036854776e+18"),
        (
            '{"a": 18446744073709551615}',
            18446744073709551614,
            False,
            "found 18446744073709551615, expected 18446744073709551614",
        ),
    ],
    ids=[
        "int",
        "int-equals-float",
        "true-is-not-1",
        "1-is-not-true",
        "0-is-not-false",
        "string-is-not-number",
        "nested-bool",
        "nested-number",
        "missing",
        "several-values",
        "not-json",
        "int-past-64-bits-read-as-float",
        "largest-exact-int",
    ],
)
def test_json_path_equals(text: str, value: Any, passed: bool, detail: str) -> None:
    result = run("json_path_equals", text, path="a", value=value)
    assert (result.passed, result.detail) == (passed, detail)


@given(doc=st.dictionaries(identifiers, json_scalars.filter(lambda v: v is not None), min_size=1))
def test_json_path_equals_finds_every_key_of_a_generated_object(doc: dict[str, Any]) -> None:
    text = json.dumps(doc)
    for key, value in doc.items():
        assert run("json_path_equals", text, path=key, value=value).passed
        assert run("contains", text, needle=key, path="keys(@)", case_sensitive=True).passed


@given(items=st.lists(st.integers(min_value=-5, max_value=5), max_size=6))
def test_projection_extracts_every_item(items: list[int]) -> None:
    text = json.dumps({"xs": [{"v": i} for i in items]})
    assert run("json_path_subset", text, path="xs[].v", allowed=sorted(set(items))).passed
    number = run("json_path_number", text, path="xs[].v", aggregate="max")
    assert number.value == (float(max(items)) if items else None)


@pytest.mark.parametrize(
    ("text", "values", "passed", "detail"),
    [
        ('{"a": "yes"}', ["yes", "no"], True, 'found "yes"'),
        ('{"a": "maybe"}', ["yes", "no"], False, 'found "maybe", not one of ["yes","no"]'),
        ('{"a": true}', [1, 0], False, "found true, not one of [1,0]"),
        ('{"a": 2.0}', [1, 2], True, "found 2.0"),
        ('{"a": ["yes", "no"]}', ["yes", "no"], False, "2 values at a"),
    ],
    ids=["member", "not-member", "true-is-not-1", "float-equals-int", "several-values"],
)
def test_json_path_in(text: str, values: list[Any], passed: bool, detail: str) -> None:
    result = run("json_path_in", text, path="a", values=values)
    assert (result.passed, result.detail) == (passed, detail)


@pytest.mark.parametrize(
    ("text", "passed", "detail"),
    [
        ('{"tags": ["a", "b"]}', True, "all 2 allowed"),
        ('{"tags": ["a", "z", 1]}', False, 'not allowed: "z", 1'),
        ('{"tags": [true]}', False, "not allowed: true"),
        ('{"tags": []}', True, "nothing extracted: path 'tags' matched nothing"),
        ('{"other": 1}', True, "nothing extracted: path 'tags' matched nothing"),
        ("a, b", False, "not_json"),
    ],
    ids=["all-allowed", "strays-listed", "true-is-not-1", "empty-list", "missing-key", "not-json"],
)
def test_json_path_subset(text: str, passed: bool, detail: str) -> None:
    result = run("json_path_subset", text, path="tags", allowed=["a", "b", 1.5, 2])
    assert (result.passed, result.detail) == (passed, detail)


def test_path_values_are_searched_in_full() -> None:
    text = json.dumps({"a": {"filler": "x" * 200, "url": "https://example.org"}})
    assert run("contains", text, needle='"url":"https://example.org"', path="a").passed


def test_long_values_are_cut_short_in_details() -> None:
    result = run("json_path_equals", json.dumps({"a": "y" * 500}), path="a", value="x")
    assert not result.passed
    assert len(result.detail) < 120
    assert result.detail.endswith('..., expected "x"')


def test_path_function_type_error_is_a_failed_repeat_not_a_crash() -> None:
    result = run("json_path_equals", '{"a": 5}', path="length(a)", value=1)
    assert not result.passed
    assert result.detail.startswith("path_error: In function length()")


@pytest.mark.parametrize(
    ("text", "path", "detail"),
    [
        ('{"a": "nan"}', "floor(to_number(a))", "path_error: cannot convert float NaN to integer"),
        (
            '{"a": "1e999"}',
            "ceil(to_number(a))",
            "path_error: cannot convert float infinity to integer",
        ),
    ],
    ids=["floor-of-nan", "ceil-of-infinity"],
)
def test_path_function_failing_on_the_output_is_a_failed_repeat_not_a_crash(
    text: str, path: str, detail: str
) -> None:
    # a Python error inside JMESPath's functions, not a JMESPathError: the output's fault still
    result = run("json_path_number", text, path=path)
    assert result == ScoreResult(value=None, passed=False, detail=detail)


def test_a_slice_step_of_zero_is_refused_when_the_suite_loads() -> None:
    # Python's slice raises on a step of 0 for every list output: a scorer error at each repeat
    with pytest.raises(ValidationError) as exc:
        REGISTRY.build("contains", {"needle": "x", "path": "items[::0].name"})
    assert "invalid JMESPath expression 'items[::0].name': a slice step cannot be 0" in messages(
        exc
    )
    assert run("contains", '{"items": [{"name": "x"}]}', needle="x", path="items[::-1].name").passed


# --- json_path_number ----------------------------------------------------------------------

SCORES = '{"c": [{"s": 0.5}, {"s": 0.9}, {"s": true}, {"s": "0.1"}, {"s": 0.7}]}'


@pytest.mark.parametrize(
    ("aggregate", "expected"),
    [("min", 0.5), ("max", 0.9), ("mean", 0.7)],
    ids=["min", "max", "mean"],
)
def test_json_path_number_aggregates_numbers_only(aggregate: str, expected: float) -> None:
    result = run("json_path_number", SCORES, path="c[].s", aggregate=aggregate)
    assert result.value == pytest.approx(expected)
    assert result.passed


def test_the_mean_of_numbers_near_the_float_limit_is_not_an_overflow() -> None:
    result = run("json_path_number", '{"s": [1e308, 1e308, 1.3e308]}', path="s[]", aggregate="mean")
    assert result.value == pytest.approx(1.1e308) and result.passed


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('{"s": true}', "no number at s"),
        ('{"s": "0.9"}', "no number at s"),
        ('{"t": 1}', "path 's' matched nothing"),
        ('{"s": []}', "path 's' matched nothing"),
        ("0.9", "path 's' matched nothing"),
        ("score: 0.9", "not_json"),
    ],
    ids=["bool-is-not-a-number", "numeric-string", "missing", "empty-list", "scalar-root", "text"],
)
def test_json_path_number_without_a_number_has_no_value(text: str, detail: str) -> None:
    result = run("json_path_number", text, path="s")
    assert result == ScoreResult(value=None, passed=False, detail=detail)


@pytest.mark.parametrize(
    ("value", "passed", "detail"),
    [
        (0.5, True, "min 0.5 at s"),
        (1, True, "min 1 at s"),
        (0.49, False, "0.49 below min 0.5"),
        (1.01, False, "1.01 above max 1"),
    ],
    ids=["at-min-inclusive", "at-max-inclusive", "below-min", "above-max"],
)
def test_json_path_number_bounds(value: float, passed: bool, detail: str) -> None:
    result = run("json_path_number", json.dumps({"s": value}), path="s", min=0.5, max=1)
    assert (result.value, result.passed, result.detail) == (value, passed, detail)


def test_json_path_number_direction_comes_from_params() -> None:
    assert REGISTRY.build("json_path_number", {"path": "s"}).direction == "higher_is_better"
    lower = REGISTRY.build("json_path_number", {"path": "s", "direction": "lower_is_better"})
    assert lower.direction == "lower_is_better"
    assert lower.kind == "continuous"


# --- latency -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wall_s", "max_s", "passed", "detail"),
    [
        (0.25, None, True, "0.250s"),
        (0.25, 0.25, True, "0.250s"),
        (2.0, 1.5, False, "2.000s over 1.5s"),
    ],
    ids=["no-limit", "at-limit", "over-limit"],
)
def test_latency(wall_s: float, max_s: float | None, passed: bool, detail: str) -> None:
    scorer = REGISTRY.build("latency", {} if max_s is None else {"max_s": max_s})
    result = scorer(ScoreInput("anything", wall_s=wall_s))
    assert result == ScoreResult(value=wall_s, passed=passed, detail=detail, reliable=True)
    assert scorer.direction == "lower_is_better"


def test_latency_under_concurrency_is_unreliable() -> None:
    result = REGISTRY.build("latency", {})(ScoreInput("x", wall_s=1.0, concurrency=8))
    assert result.reliable is False
    assert result.passed
    assert "measured with 8 calls at once" in result.detail


# --- json_fields / must_include ------------------------------------------------------------

FIELDS = {"required": ["answer", "sources"], "types": {"answer": "str", "n": "int", "p": "float"}}


@pytest.mark.parametrize(
    ("text", "passed", "detail"),
    [
        ('{"answer": "x", "sources": [], "n": 2, "p": 0.5}', True, "ok"),
        ('{"answer": "x", "sources": []}', True, "ok"),
        ('{"answer": "x"}', False, "missing:sources"),
        ("{}", False, "missing:answer,missing:sources"),
        ('{"answer": 1, "sources": []}', False, "type:answer"),
        ('{"answer": "x", "sources": [], "n": true}', False, "type:n"),
        ('{"answer": "x", "sources": [], "n": 2.0}', False, "type:n"),
        ('{"answer": "x", "sources": [], "p": 1}', False, "type:p"),
        ('{"sources": [], "p": false}', False, "missing:answer,type:p"),
        ('["answer", "sources"]', False, "not_object"),
        ('```json\n{"answer": "x", "sources": []}\n```', False, "not_json"),
        ('Sure! {"answer": "x", "sources": []}', False, "not_json"),
    ],
    ids=[
        "all-good",
        "typed-optional-absent",
        "one-missing",
        "all-missing-listed",
        "wrong-type",
        "bool-is-not-int",
        "float-is-not-int",
        "int-is-not-float",
        "missing-and-wrong-type",
        "array",
        "fenced",
        "prose-before-brace",
    ],
)
def test_json_fields(text: str, passed: bool, detail: str) -> None:
    result = run("json_fields", text, **FIELDS)
    assert (result.passed, result.detail, result.value) == (passed, detail, float(passed))


@pytest.mark.parametrize(
    ("text", "passed", "detail"),
    [
        ("Paris is the CAPITAL of France", True, "ok"),
        ("Paris, France", False, "missing:capital"),
        ("Paris is the capital, I cannot say more", False, "forbidden:i cannot"),
        ("I CANNOT say", False, "missing:paris,missing:capital,forbidden:i cannot"),
    ],
    ids=["ok", "missing", "forbidden", "everything-listed"],
)
def test_must_include(text: str, passed: bool, detail: str) -> None:
    result = run("must_include", text, all=["paris", "capital"], none=["i cannot"])
    assert (result.passed, result.detail) == (passed, detail)


# --- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("contains", {"needle": "x", "neddle": "y"}, "neddle: Extra inputs are not permitted"),
        ("contains", {"needle": ""}, "needle: String should have at least 1 character"),
        ("regex", {"pattern": "a("}, "invalid regular expression 'a(': missing ), unterminated"),
        (
            "contains",
            {"needle": "x", "path": "a..b"},
            "path: Value error, invalid JMESPath expression 'a..b': ",
        ),
        ("json_path_number", {"path": "s", "min": 2, "max": 1}, "min (2) is greater than max (1)"),
        (
            "json_path_number",
            {"path": "s", "aggregate": "sum"},
            "aggregate: Input should be 'min', 'max' or 'mean'",
        ),
        ("must_include", {}, "give at least one text in 'all' or 'none'"),
        ("latency", {"max_s": 0}, "max_s: Input should be greater than 0"),
        ("json_path_equals", {"path": "a"}, "value: Field required"),
        ("json_path_equals", {"path": "a", "value": None}, "null can never match"),
        ("json_path_equals", {"path": "a", "value": [1]}, "a list can never match"),
        ("json_path_in", {"path": "a", "values": []}, "values: List should have at least 1 item"),
        ("json_path_in", {"path": "a", "values": [(1, 2)]}, "(1, 2) is not a JSON value"),
        ("json_fields", {"types": {"a": "integer"}}, "types.a: Input should be 'str', 'int'"),
        ("json_valid", {"strict": True}, "strict: Extra inputs are not permitted"),
        (
            "contains",
            {"needle": "x", "min_effect": 0.1},
            "min_effect: Extra inputs are not permitted",
        ),
    ],
    ids=[
        "unknown-param",
        "empty-needle",
        "bad-regex",
        "bad-jmespath",
        "min-above-max",
        "unknown-aggregate",
        "empty-must-include",
        "non-positive-max-s",
        "missing-value",
        "null-value",
        "list-value",
        "empty-values",
        "non-json-value",
        "unknown-type-name",
        "params-on-json-valid",
        "gate-key-is-not-a-param",
    ],
)
def test_bad_params_give_readable_messages(
    name: str, params: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ValidationError) as exc:
        REGISTRY.build(name, params)
    assert expected in messages(exc)


def test_bad_jmespath_message_is_one_line_with_the_reason() -> None:
    with pytest.raises(ValidationError) as exc:
        REGISTRY.build("json_path_number", {"path": "foo["})
    text = messages(exc)
    assert "\n" not in text
    assert "Incomplete expression" in text


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("contians", "unknown scorer 'contians' (did you mean 'contains'?)"),
        ("json_feilds", "unknown scorer 'json_feilds' (did you mean 'json_fields'?)"),
        (
            "zzz",
            "unknown scorer 'zzz' (known: contains, inspect_score, inspect_value, json_fields, ",
        ),
    ],
    ids=["typo", "swapped-letters", "no-close-match"],
)
def test_unknown_scorer(name: str, expected: str) -> None:
    with pytest.raises(UnknownScorer) as exc:
        REGISTRY.build(name, {})
    assert str(exc.value).startswith(expected)
    assert isinstance(exc.value, KeyError)
    assert exc.value.known == REGISTRY.names()


# --- identity: repr, spec, impl_hash -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("contains", {"needle": "ok"}, "contains(needle='ok')"),
        ("contains", {"needle": "ok", "case_sensitive": False}, "contains(needle='ok')"),
        (
            "contains",
            {"needle": "ok", "case_sensitive": True},
            "contains(needle='ok', case_sensitive=True)",
        ),
        ("latency", {}, "latency()"),
        ("json_path_number", {"path": "s", "min": 0.5}, "json_path_number(path='s', min=0.5)"),
        ("must_include", {"none": ["x"]}, "must_include(none=['x'])"),
    ],
    ids=[
        "required-only",
        "explicit-default-hidden",
        "non-default-shown",
        "no-params",
        "optional-bound",
        "list",
    ],
)
def test_repr_shows_only_non_defaults(name: str, params: dict[str, Any], expected: str) -> None:
    assert repr(REGISTRY.build(name, params)) == expected


def test_spec_is_stable_complete_and_json() -> None:
    one = REGISTRY.build("contains", {"needle": "ok"})
    two = REGISTRY.build("contains", {"needle": "ok"})
    other = REGISTRY.build("contains", {"needle": "ko"})
    assert one.spec == two.spec
    assert one.spec != other.spec
    assert one.spec.impl_hash == other.spec.impl_hash
    assert re.fullmatch(r"[0-9a-f]{16}", one.spec.impl_hash)
    assert one.spec.params == {"needle": "ok", "path": None, "case_sensitive": False}
    assert ScorerSpec.model_validate_json(one.spec.model_dump_json()) == one.spec


def test_impl_hash_differs_between_scorers() -> None:
    hashes = {REGISTRY.get(name).impl_hash for name in REGISTRY.names()}
    assert len(hashes) == len(REGISTRY.names())


class _Threshold(BaseModel):
    """Parameters of a test scorer."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    at: int = 3
    """Length needed."""


def test_impl_hash_follows_the_code() -> None:
    first, second = Registry(), Registry()

    @first.scorer("long", params=_Threshold)
    def long_v1(inp: ScoreInput, p: _Threshold) -> ScoreResult:
        """Passes for long outputs."""
        return ScoreResult(1.0, len(inp.text) >= p.at, "len")

    @second.scorer("long", params=_Threshold)
    def long_v2(inp: ScoreInput, p: _Threshold) -> ScoreResult:
        """Passes for long outputs."""
        return ScoreResult(1.0, len(inp.text) > p.at, "len")

    assert first.get("long").impl_hash != second.get("long").impl_hash


# --- the registry --------------------------------------------------------------------------


def test_custom_scorer_registers_and_builds() -> None:
    registry = Registry()

    @registry.scorer("long", params=_Threshold)
    def long(inp: ScoreInput, p: _Threshold) -> ScoreResult:
        """Passes when the output has at least `at` characters."""
        ok = len(inp.text) >= p.at
        return ScoreResult(float(ok), ok, f"{len(inp.text)} chars")

    built = registry.build("long", {"at": 2})
    assert built(ScoreInput("abc")) == ScoreResult(1.0, True, "3 chars")
    assert registry.names() == ["long"]
    assert registry.get("long").fn is long
    line = long.__code__.co_firstlineno
    assert registry.table() == [
        {
            "name": "long",
            "kind": "binary",
            "params": "at=3",
            "doc": long.__doc__,
            "needs": "",
            "source": f"tests/unit/test_scorers.py:{line} in long",
        }
    ]


def test_registering_without_docstring_fails() -> None:
    registry = Registry()
    with pytest.raises(ValueError, match="needs a docstring"):

        @registry.scorer("bare", params=_Threshold)
        def bare(inp: ScoreInput, p: _Threshold) -> ScoreResult:
            return ScoreResult(1.0, True, "ok")

    assert registry.names() == []


def test_registering_a_duplicate_name_fails() -> None:
    with pytest.raises(ValueError, match="'contains' is already registered"):

        @REGISTRY.scorer("contains", params=_Threshold)
        def again(inp: ScoreInput, p: _Threshold) -> ScoreResult:
            """Would shadow the built-in."""
            return ScoreResult(1.0, True, "ok")

    assert REGISTRY.get("contains").params is not _Threshold


def test_params_may_not_take_gate_keys() -> None:
    class Clash(BaseModel):
        """Parameters that collide with the gate."""

        min_effect: float = 0.0
        """Taken by the gate."""

    with pytest.raises(ValueError, match="may not be named min_effect"):
        Registry().scorer("clash", params=Clash)


def test_scorer_returning_the_wrong_type_is_a_scorer_error() -> None:
    registry = Registry()

    @registry.scorer("broken", params=_Threshold)
    def broken(inp: ScoreInput, p: _Threshold) -> ScoreResult:
        """Returns a string by mistake."""
        return "yes"  # type: ignore[return-value]

    with pytest.raises(TypeError, match="returned str 'yes', not a bool or a ScoreResult"):
        registry.build("broken", {})(ScoreInput("x"))


BUILTINS = [
    "contains",
    "json_fields",
    "json_path_equals",
    "json_path_in",
    "json_path_number",
    "json_path_subset",
    "json_valid",
    "latency",
    "must_include",
    "not_contains",
    "regex",
]


def test_builtins_are_all_registered() -> None:
    assert set(BUILTINS) <= set(REGISTRY.names())
    assert REGISTRY.names() == sorted(REGISTRY.names())


@pytest.mark.parametrize("name", BUILTINS)
def test_every_scorer_is_documented(name: str) -> None:
    definition = REGISTRY.get(name)
    assert definition.fn.__doc__ and definition.doc == definition.fn.__doc__.strip()
    for field, info in definition.params.model_fields.items():
        assert info.description, f"{name}.{field} has no docstring"
    expected_kind = "continuous" if name in ("json_path_number", "latency") else "binary"
    assert definition.kind == expected_kind


def test_table_lists_every_scorer_with_a_doc() -> None:
    rows = {row["name"]: row for row in REGISTRY.table()}
    assert sorted(rows) == REGISTRY.names()
    assert all(row["doc"] and "\n" not in row["doc"] for row in rows.values())
    assert rows["contains"]["params"] == "needle, path?, case_sensitive=False"
    assert rows["json_path_number"]["params"] == (
        "path, aggregate='min', direction='higher_is_better', min?, max?"
    )
    assert rows["json_valid"]["params"] == ""
    assert rows["latency"]["kind"] == "continuous"


# --- json_schema ---------------------------------------------------------------------------


def test_json_schema_names_every_scorer_and_is_json() -> None:
    schema = REGISTRY.json_schema()
    assert json.loads(orjson.dumps(schema)) == schema
    bare, objects = schema["anyOf"]
    assert bare["enum"] == REGISTRY.names()
    consts = [variant["properties"]["type"]["const"] for variant in objects["oneOf"]]
    assert consts == REGISTRY.names()
    for variant in objects["oneOf"]:
        assert variant["properties"]["min_effect"]["minimum"] == 0
        assert variant["properties"]["suspect_drop"]["type"] == "number"
        assert variant["additionalProperties"] is False


@pytest.mark.parametrize(
    ("entry", "valid"),
    [
        ("json_valid", True),
        ("jsn_valid", False),
        ({"type": "contains", "needle": "ok"}, True),
        ({"type": "contains", "needle": "ok", "min_effect": 0.1, "suspect_drop": 0.2}, True),
        ({"type": "contains", "needle": "ok", "min_effect": -1}, False),
        ({"type": "contains"}, False),
        ({"type": "contains", "needle": "ok", "neddle": "x"}, False),
        ({"type": "json_path_number", "path": "s", "aggregate": "median"}, False),
        ({"type": "json_path_equals", "path": "a", "value": {"k": [1]}}, True),
        ({"type": "nope"}, False),
    ],
    ids=[
        "bare-name",
        "bare-unknown-name",
        "object",
        "with-gate-keys",
        "negative-gate-key",
        "missing-required",
        "unknown-key",
        "bad-literal",
        "any-json-value",
        "unknown-type",
    ],
)
def test_json_schema_validates_suite_entries(entry: Any, valid: bool) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(REGISTRY.json_schema())
    validator.check_schema(validator.schema)
    assert validator.is_valid(entry) is valid


def test_builtins_live_apart_from_the_registry() -> None:
    modules = {REGISTRY.get(name).fn.__module__ for name in REGISTRY.names()}
    assert modules == {"noisefloor.scorers.builtin"}


@pytest.mark.parametrize("first", ["noisefloor.scorers.registry", "noisefloor.scorers.builtin"])
def test_either_module_imported_first_registers_every_builtin(first: str) -> None:
    import subprocess
    import sys

    code = f"import {first}\nfrom noisefloor.scorers.registry import REGISTRY\nprint(len(REGISTRY.names()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(len(REGISTRY.names()))
