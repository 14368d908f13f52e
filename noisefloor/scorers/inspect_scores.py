"""The scorers that read an Inspect AI task's own scores from a sample: `inspect_score` (pass or
fail) and `inspect_value` (a number), with the one mapping of Inspect's values they share.

Inspect's letters: `C` correct, `I` incorrect, `P` partial, `N` no answer (its `value_to_float`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from noisefloor.scorers.registry import scorer
from noisefloor.scorers.score import Direction, Params, ScoreInput, ScoreResult

__all__ = ["InspectScoreParams", "InspectValueParams", "inspect_score", "inspect_value", "number"]

#: Inspect's letter grades as numbers, as its own `value_to_float` reads them.
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


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


def _picked(scores: Mapping[str, Any] | None, name: str | None, key: str | None) -> tuple[str, Any]:
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


def number(value: Any) -> float:
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
    if isinstance(value, str) and value.strip().upper() in LETTERS:
        return LETTERS[value.strip().upper()]
    if isinstance(value, str):
        try:
            parsed = float(value)
        except ValueError:
            parsed = math.nan
        if math.isfinite(parsed):
            return parsed
    raise ValueError(f"score value {value!r} is none of C, I, P, N, a boolean or a number")


def _detail(name: str, value: Any, scores: Mapping[str, Any] | None) -> str:
    entry = (scores or {}).get(name.split(".", 1)[0])
    answer = entry.get("answer") if isinstance(entry, Mapping) else None
    shown = f"{name} {value!r}"
    if isinstance(answer, str) and answer:
        shown += f" (answer {answer[:60]!r})"
    return shown


@scorer("inspect_score", params=InspectScoreParams, needs="scores")
def inspect_score(inp: ScoreInput, p: InspectScoreParams) -> ScoreResult:
    """An Inspect task's own score as pass or fail: `C` and true pass; `I`, `N`, false and
    partial credit `P` fail; a number passes at or above `pass_at`."""
    name, value = _picked(inp.scores, p.scorer, p.key)
    passed = number(value) >= p.pass_at
    return ScoreResult(
        value=1.0 if passed else 0.0, passed=passed, detail=_detail(name, value, inp.scores)
    )


@scorer(
    "inspect_value",
    params=InspectValueParams,
    kind="continuous",
    direction="higher_is_better",
    needs="scores",
)
def inspect_value(inp: ScoreInput, p: InspectValueParams) -> ScoreResult:
    """An Inspect task's own score as a number: `C` 1, `P` 0.5, `I` and `N` 0, booleans 1 and 0,
    numbers as they are (Inspect's `value_to_float`)."""
    name, value = _picked(inp.scores, p.scorer, p.key)
    return ScoreResult(
        value=number(value), passed=True, detail=_detail(name, value, inp.scores)
    )
