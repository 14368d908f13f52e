"""What a sampled test's code meets: the `noisefloor_score` and `noisefloor_repeat` fixtures, and
the item's stash through which a repeat hands them its index and takes back the numbers.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping

import pytest

__all__ = [
    "MISUSED",
    "REPEAT",
    "SCORES",
    "FixtureMisuse",
    "ScoreRecorder",
    "noisefloor_repeat",
    "noisefloor_score",
]

#: Where a sampled repeat keeps its index and the numbers its test recorded (on the item).
REPEAT = pytest.StashKey[int]()
SCORES = pytest.StashKey[dict[str, float]]()
#: The misuses of the fixtures a repeat met, kept even when the test swallowed the exception.
MISUSED = pytest.StashKey[list[str]]()
#: The name the sampling session registers its plugin under.
SESSION_PLUGIN = "noisefloor-session"


class FixtureMisuse(Exception):
    """A fixture called as it cannot be used (an undeclared score's name, a value that is not a
    number): the test's code is wrong, not the code it tests. A sampled test stops at the first
    repeat that meets one, and nothing of it is adopted."""


class ScoreRecorder:
    """`noisefloor_score(name, value)`: a number of this repeat (a latency, a similarity), judged
    like a number scorer; its name must be declared in the marker's `scores=`."""

    def __init__(
        self,
        declared: Mapping[str, str],
        into: dict[str, float] | None,
        misused: list[str] | None = None,
        unmarked: bool = False,
    ) -> None:
        self._declared = declared
        self._into = into
        self._misused = misused
        self._unmarked = unmarked

    def _misuse(self, message: str) -> FixtureMisuse:
        if self._misused is not None:
            self._misused.append(message)
        return FixtureMisuse(message)

    def __call__(self, name: str, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._misuse(f"noisefloor_score({name!r}, {value!r}): the value is not a number")
        if self._unmarked:
            raise self._misuse(
                f"noisefloor_score({name!r}, ...) in a test without @pytest.mark.noisefloor, "
                "whose numbers nothing judges: mark the test, e.g. "
                f"@pytest.mark.noisefloor(scores={{{name!r}: 'higher_is_better'}})"
            )
        if self._into is None:
            return  # not sampled: the test runs once, as without the plugin
        if name not in self._declared:
            listed = ", ".join(sorted(self._declared)) or "none"
            close = difflib.get_close_matches(name, list(self._declared), n=1)
            meant = f" (did you mean {close[0]!r}?)" if close else ""
            raise self._misuse(
                f"noisefloor_score({name!r}, ...): the marker declares no such score{meant} "
                f"(declared: {listed}); declare it: @pytest.mark.noisefloor(scores={{{name!r}: "
                "'higher_is_better'}) (or 'lower_is_better')"
            )
        if not math.isfinite(value):
            # a number the tested code computed: a failure of that code, not of the test's
            raise ValueError(f"noisefloor_score({name!r}, ...): a finite number, got {value!r}")
        self._into[name] = float(value)


@pytest.fixture
def noisefloor_score(request: pytest.FixtureRequest) -> ScoreRecorder:
    """Records a number per repeat: `noisefloor_score("similarity", 0.93)`."""
    marker = request.node.get_closest_marker("noisefloor")
    declared = (marker.kwargs.get("scores") if marker is not None else None) or {}
    if not isinstance(declared, dict):
        declared = dict.fromkeys(declared, "higher_is_better")
    sampling = request.config.pluginmanager.has_plugin(SESSION_PLUGIN)
    return ScoreRecorder(
        declared,
        request.node.stash.get(SCORES, None),
        request.node.stash.get(MISUSED, None),
        unmarked=sampling and marker is None,
    )


@pytest.fixture
def noisefloor_repeat(request: pytest.FixtureRequest) -> int:
    """The index of the repeat being taken (0 up); 0 when the test is not sampled. A test that
    seeds its randomness from it makes each repeat reproducible."""
    return int(request.node.stash.get(REPEAT, 0))
