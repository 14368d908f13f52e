"""The params models of the built-in scorers, with the checks of their values: a JMESPath path,
a regular expression, a JSON value, each refused when the suite loads.
"""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from noisefloor.scorers.score import Direction, Params

if TYPE_CHECKING:
    import jmespath.parser

__all__ = [
    "ContainsParams",
    "FieldType",
    "InspectScoreParams",
    "InspectValueParams",
    "JsonFieldsParams",
    "JsonPathEqualsParams",
    "JsonPathInParams",
    "JsonPathNumberParams",
    "JsonPathSubsetParams",
    "LatencyParams",
    "MustIncludeParams",
    "RegexParams",
    "TokensParams",
    "compiled_path",
]


@functools.lru_cache(maxsize=512)
def compiled_path(path: str) -> jmespath.parser.ParsedResult:
    import jmespath  # only for the scorers given a path

    return jmespath.compile(path)


def _check_path(path: str) -> str:
    import jmespath.exceptions

    try:
        parsed = compiled_path(path).parsed
    except jmespath.exceptions.JMESPathError as exc:
        why = str(exc).splitlines()[0].removesuffix(", for expression:").rstrip(": ")
        raise ValueError(f"invalid JMESPath expression {path!r}: {why}") from None
    if _zero_step(parsed):
        raise ValueError(f"invalid JMESPath expression {path!r}: a slice step cannot be 0")
    return path


def _zero_step(node: Any) -> bool:
    """Whether a parsed JMESPath holds a slice `[::0]`, which raises on every list it meets."""
    if not isinstance(node, dict):
        return False
    if node.get("type") == "slice":
        return bool(node["children"][2] == 0)
    return any(_zero_step(child) for child in node.get("children", []))


def _is_json(value: Any) -> bool:
    """Whether `value` is plain JSON data (no dates, tuples or non-finite floats)."""
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _check_json(value: Any) -> Any:
    if not _is_json(value):
        raise ValueError(f"{value!r} is not a JSON value (quote it if it is meant as text)")
    return value


def _check_pattern(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
    return pattern


JmesPath = Annotated[str, AfterValidator(_check_path)]
Pattern = Annotated[str, AfterValidator(_check_pattern)]
JsonValue = Annotated[Any, AfterValidator(_check_json)]
Needle = Annotated[str, Field(min_length=1)]


FieldType = Literal["str", "int", "float", "bool", "list", "dict"]


class ContainsParams(Params):
    """Parameters of `contains` and `not_contains`."""

    needle: Needle
    """The text to look for."""
    path: JmesPath | None = None
    """JMESPath into the JSON output; the values found are searched instead of the raw text."""
    case_sensitive: bool = False
    """Match case exactly."""


class RegexParams(Params):
    """Parameters of `regex`."""

    pattern: Pattern
    """A Python regular expression, searched anywhere in the haystack."""
    path: JmesPath | None = None
    """JMESPath into the JSON output; the values found are searched instead of the raw text."""
    case_sensitive: bool = False
    """Match case exactly."""


class JsonPathEqualsParams(Params):
    """Parameters of `json_path_equals`."""

    path: JmesPath
    """JMESPath into the JSON output; must find exactly one value."""
    value: JsonValue
    """The JSON value expected there (`true` is not `1`); not null and not a list."""

    @field_validator("value")
    @classmethod
    def _matchable(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("null can never match: a path that finds null finds nothing")
        if isinstance(value, list):
            raise ValueError("a list can never match: a path that finds a list yields its items")
        return value


class JsonPathInParams(Params):
    """Parameters of `json_path_in`."""

    path: JmesPath
    """JMESPath into the JSON output; must find exactly one value."""
    values: Annotated[list[JsonValue], Field(min_length=1)]
    """The JSON values accepted there."""


class JsonPathSubsetParams(Params):
    """Parameters of `json_path_subset`."""

    path: JmesPath
    """JMESPath into the JSON output, e.g. a projection `tags[]`."""
    allowed: list[JsonValue]
    """The JSON values every extracted value must be one of."""


class JsonPathNumberParams(Params):
    """Parameters of `json_path_number`."""

    path: JmesPath
    """JMESPath into the JSON output; its int and float values are used (bools are not numbers)."""
    aggregate: Literal["min", "max", "mean"] = "min"
    """How several numbers become one value."""
    direction: Direction = "higher_is_better"
    """Which way a change of the value is an improvement."""
    min: float | None = None
    """Lowest passing value, inclusive."""
    max: float | None = None
    """Highest passing value, inclusive."""

    @model_validator(mode="after")
    def _ordered(self) -> JsonPathNumberParams:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        return self


class LatencyParams(Params):
    """Parameters of `latency`."""

    max_s: Annotated[float, Field(gt=0)] | None = None
    """Slowest passing call, in seconds; without it every call passes."""


class TokensParams(Params):
    """Parameters of `tokens`."""

    count: Literal["completion", "prompt", "total"] = "completion"
    """Which tokens: of the answer (`completion`), of the request (`prompt`), or both."""
    max: Annotated[int, Field(ge=0)] | None = None
    """Most tokens that pass; without it every answer that reports usage passes."""


class JsonFieldsParams(Params):
    """Parameters of `json_fields`."""

    required: list[str] = []
    """Keys the top-level object must have."""
    types: dict[str, FieldType] = {}
    """Exact type of a key when present (a bool is never an int, an int never a float)."""


class MustIncludeParams(Params):
    """Parameters of `must_include`."""

    all: list[Needle] = []
    """Texts that must all appear (case-insensitive)."""
    none: list[Needle] = []
    """Texts that must not appear (case-insensitive)."""

    @model_validator(mode="after")
    def _something(self) -> MustIncludeParams:
        if not self.all and not self.none:
            raise ValueError("give at least one text in 'all' or 'none'")
        return self


class InspectScoreParams(Params):
    """Parameters of `inspect_score`."""

    scorer: str | None = None
    """The task's scorer whose score is read, by the name Inspect gives its score (`match`,
    `model_graded_qa`); None: the sample's only score."""
    key: str | None = None
    """For a scorer whose value is a dict, the key of the value read."""
    pass_at: float = 1.0
    """A number passes at or above it (booleans and letters are read as 1 and 0 first)."""


class InspectValueParams(Params):
    """Parameters of `inspect_value`."""

    scorer: str | None = None
    """The task's scorer whose score is read; None: the sample's only score."""
    key: str | None = None
    """For a scorer whose value is a dict, the key of the value read."""
    direction: Direction = "higher_is_better"
    """Which way a change of the value is an improvement."""
