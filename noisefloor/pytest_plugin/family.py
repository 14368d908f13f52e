"""A session's family: the marked tests it collected share its stated false-alarm rate, as a
suite's cases share a check's, each test's share fixed before any of them runs.

Why a share of alpha per test, and not the correction `check` makes at each look. `check` splits
alpha across its looks, then across its cases with Tarone's count of the cases whose smallest
attainable p-value reaches the per-case level: that count needs every case's margins (a case
whose candidate passed every repeat, like its baseline, is free), so it knows the candidate's
repeats first. A pytest session reports each test as it finishes, and under pytest-xdist no
worker sees another's tests, so the split must be known from the collected set alone. Before any
repeat, every test that can be compared can regress (its repeats could all fail, or all raise),
so Tarone's count over what is known then is every test: each gets alpha / K, and its own check
spends that share across its looks and its families (pass rate, target errors, numbers) exactly
as `check` spends a suite's alpha. A test its `skip` or `skipif` marks skip is not counted (pytest
evaluates them alike on every worker); one that adopts this session costs its share and uses none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pytest
from _pytest.skipping import evaluate_skip_marks

__all__ = ["Family", "family_of"]


@dataclass(frozen=True)
class Family:
    """The tests that share a session's false-alarm rate."""

    tests: int
    """Marked tests the session collected (every parameter set, after `-k` and paths), but
    those their marks skip."""
    thresholds: int
    """Those of them with `min_pass_rate=`: each such bar is one more way to fail, and takes a
    share of its own."""
    alpha: float
    """The session's false-alarm rate (`--noisefloor-alpha`)."""

    @property
    def members(self) -> int:
        """The decisions that can fail a test of the session: one per test, one per bar."""
        return self.tests + self.thresholds

    @property
    def share(self) -> float:
        """The false-alarm rate each decision may spend: alpha over the members (Bonferroni,
        which is Tarone's count when every member can reject)."""
        return self.alpha / max(1, self.members)

    def line(self) -> str:
        """The terminal summary's statement of the family."""
        what = f"{self.tests} marked test{'s' if self.tests != 1 else ''} of this session"
        if self.thresholds:
            what += f" ({self.thresholds} with min_pass_rate=, which take a share each)"
        each = f" ({_percent(self.share)} each)" if self.members > 1 else ""
        return f"family: {what}; false-alarm rate {_percent(self.alpha)} for the session{each}"


def family_of(items: Iterable[pytest.Item], alpha: float) -> Family:
    """The family of the marked tests among `items`, the session's selection: computed alike on
    every worker, each of which collects the whole selection."""
    tests = thresholds = 0
    for item in items:
        marker = item.get_closest_marker("noisefloor")
        if marker is None or _skipped(item):
            continue
        tests += 1
        thresholds += marker.kwargs.get("min_pass_rate") is not None
    return Family(tests=tests, thresholds=thresholds, alpha=alpha)


def _percent(rate: float) -> str:
    return f"{rate * 100:.3g}%"


def _skipped(item: pytest.Item) -> bool:
    """Whether the item's `skip` or `skipif` marks skip it (a condition that cannot be evaluated
    here is left to pytest's setup, which reports it: the test counts)."""
    try:
        return evaluate_skip_marks(item) is not None
    except Exception:
        return False
