"""Placeholders: filled in once, never re-expanded; unknown names rejected with a suggestion.

Properties use hypothesis; filled-in text is arbitrary, placeholder text included.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noisefloor.errors import TargetConfigError
from noisefloor.targets.templating import (
    PLACEHOLDERS,
    check_template,
    check_value,
    placeholder_problems,
    render,
    render_argv,
    render_value,
)

_PIECES = st.sampled_from(["{{input}}", "{{case_id}}", "{{repeat}}", "{{", "}}", "{", "$(id)"])
_HOSTILE = st.lists(st.one_of(st.text(), _PIECES), max_size=8).map("".join)


@settings(database=None, max_examples=100)
@given(text=_HOSTILE)
def test_input_template_yields_exactly_the_input(text: str) -> None:
    assert render("{{input}}", {"input": text, "case_id": "c", "repeat": "0"}) == text


@settings(database=None, max_examples=100)
@given(text=_HOSTILE, case_id=_HOSTILE)
def test_filled_values_are_never_expanded_again(text: str, case_id: str) -> None:
    values = {"input": text, "case_id": case_id, "repeat": "7"}
    rendered = render("q={{input}} id={{case_id}} r={{repeat}}", values)
    assert rendered == f"q={text} id={case_id} r=7"


def test_placeholder_text_in_input_stays_literal() -> None:
    values = {"input": "{{repeat}} $(id)", "case_id": "c1", "repeat": "3"}
    assert render("{{input}}/{{repeat}}", values) == "{{repeat}} $(id)/3"


def test_render_argv_keeps_one_element_per_argument() -> None:
    values = {"input": "a b; rm -rf /", "case_id": "c", "repeat": "0"}
    assert render_argv(["prog", "--q", "{{input}}"], values) == ["prog", "--q", "a b; rm -rf /"]


def test_render_value_renders_nested_strings_only() -> None:
    template = {
        "messages": [{"role": "user", "content": "{{input}}"}],
        "n": 1,
        "x": ("{{repeat}}",),
    }
    values = {"input": "hi {{case_id}}", "case_id": "c", "repeat": "2"}
    assert render_value(template, values) == {
        "messages": [{"role": "user", "content": "hi {{case_id}}"}],
        "n": 1,
        "x": ["2"],
    }


@pytest.mark.parametrize(
    "template",
    [
        "{{input}}",
        "--repeat={{repeat}}",
        "{{case_id}}-{{input}}",
        "plain",
        '{"a": {"b": 1}}',
        "{x}",
    ],
)
def test_known_placeholders_and_plain_text_pass(template: str) -> None:
    check_template(template, "here")


@pytest.mark.parametrize(
    ("template", "suggestion"),
    [
        ("{{inptu}}", "{{input}}"),
        ("{{ input }}", "{{input}}"),
        ("{{INPUT}}", "{{input}}"),
        ("x {{case-id}}", "{{case_id}}"),
        ("{{repaet}}", "{{repeat}}"),
        ("{{input}", "{{input}}"),
        ("{input}}", "{{input}}"),
    ],
)
def test_unknown_placeholder_raises_with_did_you_mean(template: str, suggestion: str) -> None:
    with pytest.raises(TargetConfigError) as info:
        check_template(template, "suite.yaml: target.argv[2]")
    err = info.value
    assert err.where == "suite.yaml: target.argv[2]"
    assert err.hint is not None
    assert f"did you mean {suggestion}?" in err.hint
    for name in PLACEHOLDERS:
        assert "{{" + name + "}}" in err.hint


def test_unrelated_unknown_placeholder_has_no_suggestion() -> None:
    with pytest.raises(TargetConfigError) as info:
        check_template("{{zzzzzz}}", "w")
    assert info.value.hint is not None
    assert "did you mean" not in info.value.hint
    assert "'{{zzzzzz}}'" in info.value.message


def test_check_value_reports_the_path_inside_the_structure() -> None:
    with pytest.raises(TargetConfigError) as info:
        check_value({"messages": [{"content": "{{imput}}"}]}, "target.body")
    assert info.value.where == "target.body.messages[0].content"


def test_placeholder_problems_lists_every_problem_with_its_path() -> None:
    template = [{"role": "user", "content": "{{inptu}} and {{input}"}, {"content": "{{repeat}}"}]

    problems = placeholder_problems(template)

    assert [loc for loc, _ in problems] == [(0, "content"), (0, "content")]
    assert problems[0][1].startswith("unknown placeholder '{{inptu}}' (did you mean {{input}}?")
    assert problems[1][1].startswith("malformed placeholder '{{input}' (did you mean {{input}}?")
    assert placeholder_problems({"n": 1, "ok": ["{{case_id}}", "{x}"]}) == []
