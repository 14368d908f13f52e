"""A randomized algorithm's tests, written as ordinary pytest tests: `test_pi_within_tolerance`
passes about 83% of the time by design, which plain pytest can only call flaky."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest
from randomized import estimate_pi, quickselect


@pytest.mark.noisefloor
def test_pi_within_tolerance() -> None:
    # 2,000 points: the estimate's standard deviation is about 0.037, so 0.05 holds ~83% of runs
    assert abs(estimate_pi(2000, random.Random()) - math.pi) < 0.05


@pytest.mark.noisefloor(scores={"comparisons": "lower_is_better"})
def test_quickselect_finds_the_median(noisefloor_score: Callable[[str, float], None]) -> None:
    values = random.Random(7).sample(range(100_000), 1001)
    median, comparisons = quickselect(values, 500, random.Random())
    assert median == sorted(values)[500]
    noisefloor_score("comparisons", comparisons)
