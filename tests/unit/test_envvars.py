"""`${NAME}` in suite strings: what fills in, what is left literal, and that `$${` escapes all."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noisefloor.envvars import expand_value, looks_secret

ENV = {"A": "alpha", "EMPTY": "", "URL": "http://h:1/v1"}

_PIECES = st.sampled_from(["${", "$", "{", "}", "$${", "A", ":-", "${A}", "${EMPTY:-x}", "\n"])
_TEXT = st.lists(st.one_of(st.text(max_size=5), _PIECES), max_size=10).map("".join)


@settings(database=None, max_examples=200)
@given(text=_TEXT)
def test_escaping_every_dollar_brace_gives_the_text_back(text: str) -> None:
    """`$${` is a complete escape: any text can be written so that it stays as it is."""
    assert expand_value(text.replace("${", "$${"), ENV) == (text, [])


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("${A}", "alpha"),
        ("${URL}/chat", "http://h:1/v1/chat"),
        ("${A}${A}", "alphaalpha"),
        ("${EMPTY}", ""),  # set but empty: empty
        ("${EMPTY:-d}", "d"),  # `:-` also covers empty, as in the shell
        ("${UNSET:-d}", "d"),
        ("${UNSET:-}", ""),
        ("${UNSET:-a b: c}", "a b: c"),
        ("${A:-d}", "alpha"),
        ("$A and {A}", "$A and {A}"),  # only the braced form
        ("$${A}", "${A}"),
        ("{{input}} ${A}", "{{input}} alpha"),
    ],
)
def test_expansion(text: str, expanded: str) -> None:
    assert expand_value(text, ENV) == (expanded, [])


def test_a_string_with_a_problem_is_left_as_written_and_each_problem_has_its_path() -> None:
    value = {"keep": "${A}", "list": ["x", "${A} ${UNSET}"], "n": 3}

    expanded, problems = expand_value(value, ENV)

    assert expanded == {"keep": "alpha", "list": ["x", "${A} ${UNSET}"], "n": 3}
    assert [loc for loc, _ in problems] == [("list", 1)]


def test_literal_paths_are_not_filled_in() -> None:
    value = {"name": "${A}", "other": "${A}"}

    expanded, problems = expand_value(value, ENV, literal=lambda loc: loc == ("name",))

    assert (expanded, problems) == ({"name": "${A}", "other": "alpha"}, [])


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GH_TOKEN", "db_password", "Auth_Header"])
def test_secret_names_are_recognised_and_never_filled_in(name: str) -> None:
    assert looks_secret(name)
    _, problems = expand_value(f"${{{name}}}", {name: "s3cr3t"})
    assert len(problems) == 1 and "s3cr3t" not in problems[0][1]
