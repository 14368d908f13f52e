"""What a sampled test's code meets: the `noisefloor_score` and `noisefloor_repeat` fixtures, and
the item's stash through which a repeat hands them its index and takes back the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest

__all__ = ["REPEAT", "SCORES", "ScoreRecorder", "noisefloor_repeat", "noisefloor_score"]

#: Where a sampled repeat keeps its index and the numbers its test recorded (on the item).
REPEAT = pytest.StashKey[int]()
SCORES = pytest.StashKey[dict[str, float]]()


class ScoreRecorder:
    """`noisefloor_score(name, value)`: a number of this repeat (a latency, a similarity), judged
    like a number scorer; its name must be declared in the marker's `scores=`."""

    def __init__(self, declared: Mapping[str, str], into: dict[str, float] | None) -> None:
        self._declared = declared
        self._into = into

    def __call__(self, name: str, value: float) -> None:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise TypeError(f"noisefloor_score({name!r}, ...): a finite number, got {value!r}")
        if self._into is None:
            return  # not sampled: the test runs once, as without the plugin
        if name not in self._declared:
            listed = ", ".join(sorted(self._declared)) or "none"
            raise ValueError(
                f"noisefloor_score({name!r}, ...): the marker declares no such score (declared: "
                f"{listed}); add it: @pytest.mark.noisefloor(scores={{{name!r}: "
                "'higher_is_better'}) (or 'lower_is_better')"
            )
        self._into[name] = float(value)


@pytest.fixture
def noisefloor_score(request: pytest.FixtureRequest) -> ScoreRecorder:
    """Records a number per repeat: `noisefloor_score("similarity", 0.93)`."""
    marker = request.node.get_closest_marker("noisefloor")
    declared = (marker.kwargs.get("scores") if marker is not None else None) or {}
    if not isinstance(declared, dict):
        declared = dict.fromkeys(declared, "higher_is_better")
    return ScoreRecorder(declared, request.node.stash.get(SCORES, None))


@pytest.fixture
def noisefloor_repeat(request: pytest.FixtureRequest) -> int:
    """The index of the repeat being taken (0 up); 0 when the test is not sampled. A test that
    seeds its randomness from it makes each repeat reproducible."""
    return int(request.node.stash.get(REPEAT, 0))
