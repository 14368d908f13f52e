"""A marked test's name in the store and the checks of its marker's arguments, each problem
worded with the test and the way to fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from noisefloor.pytest_plugin.cases import MarkerError, SessionSettings, case_name, marked_test
from noisefloor.suite.model import is_slug

SHARED = SessionSettings(
    Path("pytest.ini"), timeout_s=60.0, fingerprint=None, baseline_repeats=None
)


@pytest.mark.parametrize(
    ("node_id", "name"),
    [
        ("tests/test_pi.py::test_within", "tests.test_pi.py.test_within"),
        ("test_a.py::TestX::test_y", "test_a.py.TestX.test_y"),
        ("test_a.py::test_p[0.3-x y]", "test_a.py.test_p-0.3-x-y-"),
    ],
)
def test_a_test_is_named_by_its_node_id(node_id: str, name: str) -> None:
    assert case_name(node_id).startswith(name)
    assert is_slug(case_name(node_id))


def test_names_that_lost_characters_or_length_never_collide() -> None:
    spaced, dashed = case_name("t.py::test[a b]"), case_name("t.py::test[a-b]")
    assert spaced != dashed and all(is_slug(n) for n in (spaced, dashed))
    long = case_name("t.py::test_" + "x" * 300)
    assert len(long) == 128 and long != case_name("t.py::test_" + "x" * 301)


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"repeat": 3}, "unknown argument 'repeat' (did you mean 'repeats'?)"),
        ({"repeats": 1}, "repeats= must be a whole number >= 2, got 1"),
        ({"repeats": 2.5}, "repeats= must be a whole number >= 2, got 2.5"),
        ({"min_effect": -0.1}, "min_effect= must be a number >= 0, got -0.1"),
        ({"timeout_s": 0}, "timeout_s= must be more than 0"),
        ({"scores": "latency"}, "scores= takes a dict of name to direction"),
        ({"scores": {"latency": "down"}}, "'latency' takes higher_is_better or lower_is_better"),
    ],
    ids=lambda v: str(v)[:30],
)
def test_a_marker_argument_it_cannot_use_names_the_test_and_the_fix(
    kwargs: dict[str, Any], said: str
) -> None:
    with pytest.raises(MarkerError) as raised:
        marked_test("t.py::test_x", (), kwargs, SHARED)
    assert str(raised.value).startswith("t.py::test_x: @pytest.mark.noisefloor: ")
    assert said in str(raised.value)
