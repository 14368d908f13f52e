"""Two randomized algorithms: a Monte Carlo estimate of pi, right only within a tolerance most of
the time, and quickselect with random pivots, always right in a number of comparisons that varies.
"""

from __future__ import annotations

import random


def estimate_pi(samples: int, rng: random.Random) -> float:
    """Four times the share of random points of the unit square inside the quarter circle."""
    inside = sum(rng.random() ** 2 + rng.random() ** 2 <= 1.0 for _ in range(samples))
    return 4 * inside / samples


def quickselect(values: list[int], k: int, rng: random.Random) -> tuple[int, int]:
    """The k-th smallest of `values` (0-based), and the comparisons it took."""
    comparisons = 0
    pool = list(values)
    while True:
        pivot = rng.choice(pool)
        below = [v for v in pool if v < pivot]
        equal = [v for v in pool if v == pivot]
        comparisons += 2 * len(pool)
        if k < len(below):
            pool = below
        elif k < len(below) + len(equal):
            return pivot, comparisons
        else:
            k -= len(below) + len(equal)
            pool = [v for v in pool if v > pivot]
