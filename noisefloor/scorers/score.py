"""What a scorer is given and what it says: one output as `ScoreInput`, its `ScoreResult`, and
the base of every scorer's params model.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict

from noisefloor.model.usage import Tokens, envelope_tokens

if TYPE_CHECKING:
    from noisefloor.targets.base import RawSample

__all__ = [
    "Direction",
    "Kind",
    "NoParams",
    "NotJson",
    "Params",
    "ScoreInput",
    "ScoreResult",
    "unmatched",
    "unmatched_in",
]

Kind = Literal["binary", "continuous"]
Direction = Literal["higher_is_better", "lower_is_better"]


class _Cache(enum.Enum):
    UNPARSED = enum.auto()
    NOT_JSON = enum.auto()


class NotJson(ValueError):
    """The output a scorer asked for as JSON is not JSON: the program's failure, not the scorer's."""


@dataclass(frozen=True)
class ScoreInput:
    """One output of a program, as a scorer sees it."""

    text: str
    wall_s: float = 0.0
    concurrency: int = 1
    tokens: Tokens | None = None
    """The tokens the endpoint said the answer took; None when it said nothing (a command)."""
    scores: Mapping[str, Any] | None = None
    """The scores the target's own harness gave the answer, by scorer name (an Inspect task's:
    each `{"value", "answer", "explanation"}`); None for a target without any."""
    _parsed: Any = field(default=_Cache.UNPARSED, init=False, repr=False, compare=False)

    @classmethod
    def from_sample(cls, sample: RawSample) -> ScoreInput:
        """The input for one stored sample, reusing the target's own JSON parse when it has one."""
        inp = cls(
            text=sample.output.text,
            wall_s=sample.wall_s,
            concurrency=sample.concurrency,
            tokens=envelope_tokens(sample.envelope),
            scores=_scores(sample.envelope),
        )
        if sample.parsed is not None:
            object.__setattr__(inp, "_parsed", sample.parsed)
        return inp

    def json(self) -> Any:
        """The whole text parsed as strict JSON, parsed once.

        Raises:
            NotJson: the text is not JSON (a ValueError); a scorer that lets it out fails the
                repeat with `output is not JSON`.
        """
        if self._parsed is _Cache.UNPARSED:
            try:
                parsed = orjson.loads(self.text)
            except orjson.JSONDecodeError:
                parsed = _Cache.NOT_JSON
            object.__setattr__(self, "_parsed", parsed)
        if self._parsed is _Cache.NOT_JSON:
            raise NotJson("output is not JSON")
        return self._parsed


def _scores(envelope: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    scores = envelope.get("scores") if envelope is not None else None
    return scores if isinstance(scores, Mapping) else None


_UNMATCHED = re.compile(r"path (?:'.*'|\".*\") matched nothing$")


def unmatched(path: str) -> str:
    """The detail of a path that found nothing in an output (at the end of a longer detail, as
    a passing `not_contains` puts it): never worded as a wrong answer, so that a typo in a path
    shows for what it is, and bands can tell (`unmatched_in`)."""
    return f"path {path!r} matched nothing"


def unmatched_in(detail: str) -> str | None:
    """The words of `unmatched` that end a detail, or None."""
    found = _UNMATCHED.search(detail)
    return found.group(0) if found else None


@dataclass(frozen=True)
class ScoreResult:
    """What a scorer says about one output."""

    value: float | None
    passed: bool
    detail: str
    reliable: bool = True


class Params(BaseModel):
    """The base of a scorer's params model: unknown keys are errors; field docstrings document.

    Each model is built on its first use: a suite uses a few of the scorers registered.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class NoParams(Params):
    """A scorer without parameters."""
