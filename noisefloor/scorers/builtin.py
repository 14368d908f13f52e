"""The built-in scorers, registered through the public `scorer` decorator.

One concern, kept whole: a scorer's source is part of its impl_hash, so built-ins move verbatim.
"""

from __future__ import annotations

import json as stdlib_json
import math
import re
import statistics
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from noisefloor.scorers.builtin_params import (
    ContainsParams,
    InspectScoreParams,
    InspectValueParams,
    JsonFieldsParams,
    JsonPathEqualsParams,
    JsonPathInParams,
    JsonPathNumberParams,
    JsonPathSubsetParams,
    LatencyParams,
    MustIncludeParams,
    RegexParams,
    TokensParams,
    compiled_path,
)
from noisefloor.scorers.registry import scorer
from noisefloor.scorers.score import NoParams, ScoreInput, ScoreResult, unmatched

if TYPE_CHECKING:
    pass

__all__ = [
    "contains",
    "inspect_score",
    "inspect_value",
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
    "tokens",
]


# --- helpers shared by the built-ins -------------------------------------------------------


class _Problem(str):
    """Why a scorer cannot look at the output; becomes the detail of a failed score."""


def _values_at(inp: ScoreInput, path: str) -> list[Any] | _Problem:
    """The values at `path`: none for a missing path, the items of a list, else the one value."""
    try:
        data = inp.json()
    except ValueError:
        return _Problem("not_json")
    # the output's fault: a function given the wrong type (JMESPathError), or a value it cannot
    # take (the floor of NaN raises Python's ValueError)
    import jmespath.exceptions

    try:
        found = compiled_path(path).search(data)
    except (jmespath.exceptions.JMESPathError, ArithmeticError, ValueError) as exc:
        return _Problem(f"path_error: {str(exc).splitlines()[0]}")
    if found is None:
        return []
    return list(found) if isinstance(found, list) else [found]


def _haystack(inp: ScoreInput, path: str | None) -> str | _Problem:
    if path is None:
        return inp.text
    values = _values_at(inp, path)
    if isinstance(values, _Problem):
        return values
    if not values:
        return _Problem(unmatched(path))
    return "\n".join(v if isinstance(v, str) else _compact(v) for v in values)


def _compact(value: Any) -> str:
    return stdlib_json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=repr)


def _render(value: Any, limit: int = 80) -> str:
    """Compact JSON for a detail, cut short when long."""
    text = _compact(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _as_read(number: int | float) -> int | float:
    """A number as output parsing reads it: orjson reads an integer past 64 bits as a float."""
    if isinstance(number, int) and not -(2**63) <= number < 2**64:
        return float(number)
    return number


def _same(a: Any, b: Any) -> bool:
    """JSON equality: a bool equals only a bool; an int equals a float of the same value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _as_read(a) == _as_read(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _binary(passed: bool, detail: str) -> ScoreResult:
    return ScoreResult(value=1.0 if passed else 0.0, passed=passed, detail=detail)


def _one_value(inp: ScoreInput, path: str) -> Any | _Problem:
    values = _values_at(inp, path)
    if isinstance(values, _Problem):
        return values
    if len(values) != 1:
        return _Problem(unmatched(path) if not values else f"{len(values)} values at {path}")
    return values[0]


def _mean(values: list[float]) -> float:
    """The mean; numbers near the float limit are divided before they are summed, not after."""
    try:
        return statistics.fmean(values)
    except OverflowError:  # the sum overflows although the mean cannot
        return math.fsum(v / len(values) for v in values)


FieldType = Literal["str", "int", "float", "bool", "list", "dict"]
_AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "min": min,
    "max": max,
    "mean": _mean,
}
_TYPES: dict[str, type] = {t.__name__: t for t in (str, int, float, bool, list, dict)}


# --- the built-in scorers ------------------------------------------------------------------


def _find(needle: str, haystack: str, case_sensitive: bool) -> bool:
    if case_sensitive:
        return needle in haystack
    return needle.casefold() in haystack.casefold()


@scorer("contains", params=ContainsParams)
def contains(inp: ScoreInput, p: ContainsParams) -> ScoreResult:
    """Passes when the needle appears in the output (or in the values that `path` matches)."""
    haystack = _haystack(inp, p.path)
    if isinstance(haystack, _Problem):
        return _binary(False, haystack)
    if _find(p.needle, haystack, p.case_sensitive):
        return _binary(True, f"found {p.needle!r}")
    return _binary(False, f"{p.needle!r} not found" + (f" at {p.path}" if p.path else ""))


@scorer("not_contains", params=ContainsParams)
def not_contains(inp: ScoreInput, p: ContainsParams) -> ScoreResult:
    """Passes when the needle is absent from the output (or from the values at `path`)."""
    haystack = _haystack(inp, p.path)
    if isinstance(haystack, _Problem) and p.path is not None and haystack == unmatched(p.path):
        return _binary(True, f"no {p.needle!r}: {haystack}")
    if isinstance(haystack, _Problem):
        return _binary(False, haystack)
    if _find(p.needle, haystack, p.case_sensitive):
        return _binary(False, f"found {p.needle!r}" + (f" at {p.path}" if p.path else ""))
    return _binary(True, f"no {p.needle!r}")


@scorer("regex", params=RegexParams)
def regex(inp: ScoreInput, p: RegexParams) -> ScoreResult:
    """Passes when the pattern matches in the output (or in the values that `path` matches)."""
    haystack = _haystack(inp, p.path)
    if isinstance(haystack, _Problem):
        return _binary(False, haystack)
    match = re.search(p.pattern, haystack, 0 if p.case_sensitive else re.IGNORECASE)
    if match is None:
        return _binary(False, f"no match for {p.pattern!r}")
    return _binary(True, f"matched {_render(match.group(0))}")


@scorer("json_valid", params=NoParams)
def json_valid(inp: ScoreInput, p: NoParams) -> ScoreResult:
    """Passes when the whole output is JSON other than `null`."""
    try:
        data = inp.json()
    except ValueError:
        return _binary(False, "not_json")
    return _binary(False, "null") if data is None else _binary(True, "ok")


@scorer("json_path_equals", params=JsonPathEqualsParams)
def json_path_equals(inp: ScoreInput, p: JsonPathEqualsParams) -> ScoreResult:
    """Passes when `path` matches exactly one value and it equals `value` (`true` is not `1`)."""
    found = _one_value(inp, p.path)
    if isinstance(found, _Problem):
        return _binary(False, found)
    if _same(found, p.value):
        return _binary(True, f"found {_render(found)}")
    return _binary(False, f"found {_render(found)}, expected {_render(p.value)}")


@scorer("json_path_in", params=JsonPathInParams)
def json_path_in(inp: ScoreInput, p: JsonPathInParams) -> ScoreResult:
    """Passes when `path` matches exactly one value and it is one of `values`."""
    found = _one_value(inp, p.path)
    if isinstance(found, _Problem):
        return _binary(False, found)
    if any(_same(found, v) for v in p.values):
        return _binary(True, f"found {_render(found)}")
    return _binary(False, f"found {_render(found)}, not one of {_render(p.values)}")


@scorer("json_path_subset", params=JsonPathSubsetParams)
def json_path_subset(inp: ScoreInput, p: JsonPathSubsetParams) -> ScoreResult:
    """Passes when every value at `path` is one of `allowed` (finding nothing passes)."""
    values = _values_at(inp, p.path)
    if isinstance(values, _Problem):
        return _binary(False, values)
    if not values:
        return _binary(True, f"nothing extracted: {unmatched(p.path)}")
    stray = [v for v in values if not any(_same(v, a) for a in p.allowed)]
    if stray:
        return _binary(False, "not allowed: " + ", ".join(_render(v) for v in stray))
    return _binary(True, f"all {len(values)} allowed")


@scorer("json_path_number", params=JsonPathNumberParams, kind="continuous")
def json_path_number(inp: ScoreInput, p: JsonPathNumberParams) -> ScoreResult:
    """The number at `path` (several aggregated); passes inside the optional [min, max]."""
    values = _values_at(inp, p.path)
    if isinstance(values, _Problem):
        return ScoreResult(value=None, passed=False, detail=values)
    numbers = [
        float(v)
        for v in values
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    ]
    if not numbers:
        detail = unmatched(p.path) if not values else f"no number at {p.path}"
        return ScoreResult(value=None, passed=False, detail=detail)
    value = _AGGREGATES[p.aggregate](numbers)
    if p.min is not None and value < p.min:
        return ScoreResult(value=value, passed=False, detail=f"{value:g} below min {p.min:g}")
    if p.max is not None and value > p.max:
        return ScoreResult(value=value, passed=False, detail=f"{value:g} above max {p.max:g}")
    return ScoreResult(value=value, passed=True, detail=f"{p.aggregate} {value:g} at {p.path}")


@scorer(
    "latency",
    params=LatencyParams,
    kind="continuous",
    direction="lower_is_better",
    needs="latency",
)
def latency(inp: ScoreInput, p: LatencyParams) -> ScoreResult:
    """Wall-clock seconds of the call; passes at or under `max_s`."""
    passed = p.max_s is None or inp.wall_s <= p.max_s
    detail = f"{inp.wall_s:.3f}s" + ("" if passed else f" over {p.max_s:g}s")
    reliable = inp.concurrency <= 1
    if not reliable:
        detail += f" (measured with {inp.concurrency} calls at once)"
    return ScoreResult(value=inp.wall_s, passed=passed, detail=detail, reliable=reliable)


@scorer(
    "tokens", params=TokensParams, kind="continuous", direction="lower_is_better", needs="usage"
)
def tokens(inp: ScoreInput, p: TokensParams) -> ScoreResult:
    """Tokens of the call as the endpoint reported them (`usage`); passes at or under `max`."""
    if inp.tokens is None:
        return ScoreResult(
            value=None, passed=False, detail="no usage: the target reported no token counts"
        )
    prompt, completion = inp.tokens.prompt, inp.tokens.completion
    value = {"prompt": prompt, "completion": completion, "total": prompt + completion}[p.count]
    if p.max is not None and value > p.max:
        return ScoreResult(
            value=float(value), passed=False, detail=f"{value} {p.count} over {p.max}"
        )
    return ScoreResult(value=float(value), passed=True, detail=f"{value} {p.count} tokens")


@scorer("json_fields", params=JsonFieldsParams)
def json_fields(inp: ScoreInput, p: JsonFieldsParams) -> ScoreResult:
    """Passes when the whole output is a JSON object with the required keys and exact types."""
    try:
        data = inp.json()
    except ValueError:
        return _binary(False, "not_json")
    if not isinstance(data, dict):
        return _binary(False, "not_object")
    problems = [f"missing:{key}" for key in p.required if key not in data]
    problems += [
        f"type:{key}"
        for key, name in p.types.items()
        if key in data and type(data[key]) is not _TYPES[name]
    ]
    return _binary(False, ",".join(problems)) if problems else _binary(True, "ok")


@scorer("must_include", params=MustIncludeParams)
def must_include(inp: ScoreInput, p: MustIncludeParams) -> ScoreResult:
    """Passes when every `all` text appears and no `none` text does (case-insensitive)."""
    problems = [f"missing:{n}" for n in p.all if not _find(n, inp.text, case_sensitive=False)]
    problems += [f"forbidden:{n}" for n in p.none if _find(n, inp.text, case_sensitive=False)]
    return _binary(False, ",".join(problems)) if problems else _binary(True, "ok")


# --- an Inspect AI task's own scores ---------------------------------------------------------

#: Inspect's letter grades as numbers, as its own `value_to_float` reads them (`C` correct,
#: `I` incorrect, `P` partial, `N` no answer).
_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


def _inspect_score_at(
    scores: Mapping[str, Any] | None, name: str | None, key: str | None
) -> tuple[str, Any]:
    """The name and value of the score a scorer's params pick from a sample's scores.

    Raises:
        ValueError: The sample has no such score (a scorer error, never a failed answer).
    """
    if not scores:
        raise ValueError("the task's scorers gave this sample no score (a scorer returned None)")
    if name is None:
        if len(scores) != 1:
            raise ValueError(
                f"the sample has {len(scores)} scores ({', '.join(sorted(scores))}): name one "
                "with `scorer`"
            )
        name = next(iter(scores))
    if name not in scores:
        raise ValueError(
            f"the task's scorer {name!r} gave this sample no score (it has: "
            f"{', '.join(sorted(scores)) or 'none'})"
        )
    entry = scores[name]
    value = entry.get("value") if isinstance(entry, Mapping) else entry
    if isinstance(value, Mapping):
        if key is None or key not in value:
            keys = ", ".join(sorted(str(k) for k in value))
            raise ValueError(f"score {name!r} is a dict ({keys}): name the value with `key`")
        return f"{name}.{key}", value[key]
    if key is not None:
        raise ValueError(f"score {name!r} is {value!r}, not a dict: `key` reads a dict's value")
    return name, value


def _score_number(value: Any) -> float:
    """An Inspect score's value as a number: its letters as `value_to_float` reads them,
    booleans as 1 and 0, numbers as they are.

    Raises:
        ValueError: A value with no number (another string, a list, a number that is not
            finite).
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    if isinstance(value, str) and value.strip().upper() in _LETTERS:
        return _LETTERS[value.strip().upper()]
    if isinstance(value, str):
        try:
            parsed = float(value)
        except ValueError:
            parsed = math.nan
        if math.isfinite(parsed):
            return parsed
    raise ValueError(f"score value {value!r} is none of C, I, P, N, a boolean or a number")


def _inspect_detail(name: str, value: Any, scores: Mapping[str, Any] | None) -> str:
    entry = (scores or {}).get(name.split(".", 1)[0])
    answer = entry.get("answer") if isinstance(entry, Mapping) else None
    shown = f"{name} {value!r}"
    if isinstance(answer, str) and answer:
        shown += f" (answer {answer[:60]!r})"
    return shown


@scorer("inspect_score", params=InspectScoreParams, needs="scores")
def inspect_score(inp: ScoreInput, p: InspectScoreParams) -> ScoreResult:
    """An Inspect task's own score as pass or fail (`C` passes; `I`, `N`, partial `P` fail).

    Booleans pass when true; a number passes at or above `pass_at`."""
    name, value = _inspect_score_at(inp.scores, p.scorer, p.key)
    passed = _score_number(value) >= p.pass_at
    return ScoreResult(
        value=1.0 if passed else 0.0, passed=passed, detail=_inspect_detail(name, value, inp.scores)
    )


@scorer(
    "inspect_value",
    params=InspectValueParams,
    kind="continuous",
    direction="higher_is_better",
    needs="scores",
)
def inspect_value(inp: ScoreInput, p: InspectValueParams) -> ScoreResult:
    """An Inspect task's own score as a number (`C` 1, `P` 0.5, `I` and `N` 0).

    Booleans are 1 and 0, numbers are as they are (Inspect's `value_to_float`)."""
    name, value = _inspect_score_at(inp.scores, p.scorer, p.key)
    return ScoreResult(
        value=_score_number(value), passed=True, detail=_inspect_detail(name, value, inp.scores)
    )
