"""A marked test as a suite of one case: its name in the store, its marker's settings checked,
and its scorers (the test passed, and each number it records) built as a suite file's would be.

One suite per test, so that each test adopts its own baseline and is judged on its own samples;
the session's family sets the share of the false-alarm rate each spends (`family.py`).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from noisefloor.pytest_plugin.kind import PytestFields, PytestTest
from noisefloor.settings import REPEATS
from noisefloor.suite.bindings import scorers_of
from noisefloor.suite.model import SLUG_MAX, Case, Defaults, Suite

__all__ = ["MarkedTest", "MarkerError", "SessionSettings", "case_name", "marked_test"]

#: The marker's arguments, each with what it takes.
_ARGUMENTS = {
    "repeats": "repeats of the first look (a whole number >= 2)",
    "min_effect": "the smallest drop of the pass rate that counts (a number >= 0)",
    "max_repeats": "candidate repeats a sequential check takes at most",
    "scores": "the numbers the test records, each name to higher_is_better or lower_is_better",
    "timeout_s": "seconds a repeat may run before it is stopped",
    "min_pass_rate": "a pass rate between 0 and 1 the test fails confidently below",
}
_DIRECTIONS = ("higher_is_better", "lower_is_better")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class MarkerError(ValueError):
    """A `noisefloor` marker whose arguments cannot make a case; the message says which."""


class SessionSettings:
    """What every case of a session shares: its ini's settings and the suite file they stand in."""

    def __init__(
        self,
        suite_path: Path,
        timeout_s: float,
        fingerprint: list[str] | None,
        baseline_repeats: int | None,
    ) -> None:
        self.suite_path = suite_path
        self.timeout_s = timeout_s
        self.fingerprint = fingerprint
        self.baseline_repeats = baseline_repeats


def case_name(node_id: str) -> str:
    """The test's name in the store (its suite and its case): the node id with `::` and `/` as
    dots and any other character a file name must not hold as `-`; one too long, or that lost
    characters, ends with a hash of the node id, so two tests never share a name."""
    plain = node_id.replace("::", ".").replace("/", ".")
    name = _UNSAFE.sub("-", plain).strip("-._") or "test"
    if name != plain or len(name) > SLUG_MAX:
        digest = hashlib.sha256(node_id.encode("utf-8")).hexdigest()[:8]
        name = f"{name[: SLUG_MAX - 9]}-{digest}"
    return name


def _problem(node_id: str, what: str) -> MarkerError:
    return MarkerError(f"{node_id}: @pytest.mark.noisefloor: {what}")


def _whole(node_id: str, name: str, value: Any, least: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _problem(node_id, f"{name}= must be a whole number >= {least}, got {value!r}")
    return value


def _number(node_id: str, name: str, value: Any, *, positive: bool) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _problem(node_id, f"{name}= must be a number >= 0, got {value!r}")
    if positive and value == 0:
        raise _problem(node_id, f"{name}= must be more than 0")
    return float(value)


def _scores(node_id: str, value: Any) -> dict[str, str]:
    """`scores=`: names to directions; a list or tuple of names are higher_is_better."""
    if value is None:
        return {}
    if isinstance(value, list | tuple):
        value = dict.fromkeys(value, "higher_is_better")
    if not isinstance(value, dict):
        raise _problem(node_id, f"scores= takes a dict of name to direction, got {value!r}")
    for name, direction in value.items():
        if not isinstance(name, str) or not name:
            raise _problem(node_id, f"scores=: a score's name is a non-empty string, got {name!r}")
        if direction not in _DIRECTIONS:
            raise _problem(
                node_id,
                f"scores=: {name!r} takes {' or '.join(_DIRECTIONS)}, got {direction!r}",
            )
    return dict(value)


def _rate(node_id: str, name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise _problem(node_id, f"{name}= must be a pass rate between 0 and 1, got {value!r}")
    return float(value)


def _scorer_entries(min_effect: float | None, scores: dict[str, str]) -> list[dict[str, Any]]:
    """The case's scorers: the test passed (every repeat's assertions held), then each number."""
    passed: dict[str, Any] = {"type": "json_path_equals", "path": "passed", "value": True}
    if min_effect is not None:
        passed["min_effect"] = min_effect
    numbers = [
        {
            "type": "json_path_number",
            # quoted, so that any name is one key (JMESPath: a JSON string)
            "path": f"scores.{orjson.dumps(name).decode()}",
            "direction": direction,
        }
        for name, direction in sorted(scores.items())
    ]
    return [passed, *numbers]


@dataclass(frozen=True)
class MarkedTest:
    """A marked test as its session checks it."""

    suite: Suite
    """Its suite of one case."""
    names: dict[str, str]
    """Each scorer's key to what the test calls it: `pass rate`, or a recorded score's name."""
    min_pass_rate: float | None
    """The bar of `min_pass_rate=`, if any."""


def marked_test(
    node_id: str, args: tuple[Any, ...], kwargs: dict[str, Any], shared: SessionSettings
) -> MarkedTest:
    """The test `node_id` as its marker, with positional `args` and keyword `kwargs`, makes it.

    Raises:
        MarkerError: A positional argument, an argument the marker does not take, or a value it
            cannot use.
    """
    if args:
        raise _problem(
            node_id,
            f"takes keyword arguments only, got {', '.join(repr(a) for a in args)}; "
            f"e.g. @pytest.mark.noisefloor(repeats={args[0]!r})",
        )
    for key in kwargs:
        if key not in _ARGUMENTS:
            close = difflib.get_close_matches(key, list(_ARGUMENTS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            takes = "; ".join(f"{k}: {v}" for k, v in _ARGUMENTS.items())
            raise _problem(node_id, f"unknown argument {key!r}{hint}; it takes {takes}")
    repeats = _whole(node_id, "repeats", kwargs.get("repeats"), 2) or REPEATS
    max_repeats = _whole(node_id, "max_repeats", kwargs.get("max_repeats"), 2)
    min_effect = _number(node_id, "min_effect", kwargs.get("min_effect"), positive=False)
    timeout_s = _number(node_id, "timeout_s", kwargs.get("timeout_s"), positive=True)
    bar = _rate(node_id, "min_pass_rate", kwargs.get("min_pass_rate"))
    scores = _scores(node_id, kwargs.get("scores"))
    entries = _scorer_entries(min_effect, scores)
    bindings, problems = scorers_of(list(entries), {})
    if problems:  # a name JMESPath cannot hold, say
        raise _problem(node_id, "; ".join(msg for _, msg in problems))
    name = case_name(node_id)
    try:
        defaults = Defaults.model_validate(
            {
                "repeats": repeats,
                "max_repeats": max_repeats,
                "baseline_repeats": shared.baseline_repeats,
            }
        )
    except ValidationError as exc:
        raise _problem(node_id, exc.errors(include_url=False)[0]["msg"]) from None
    test = PytestTest(
        node=node_id, timeout_s=timeout_s or shared.timeout_s, fingerprint=shared.fingerprint
    )
    case = Case(
        id=name,
        input=node_id,
        repeats=repeats,
        tags=(),
        scorers=tuple(bindings),
        written_scorers=tuple(entries),
    )
    suite = Suite(
        name=name,
        path=shared.suite_path,
        target=PytestFields(pytest=test),
        defaults=defaults,
        cases=(case,),
    )
    called = ["pass rate", *sorted(scores)]  # the entries' order
    names = {b.label: called[b.index] for b in bindings}
    return MarkedTest(suite=suite, names=names, min_pass_rate=bar)
