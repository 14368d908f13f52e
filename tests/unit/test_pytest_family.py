"""A session's family (its marked tests share its false-alarm rate) and a test's bar
(`min_pass_rate=`), each decided from counts alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from noisefloor import stats
from noisefloor.pytest_plugin.family import Family, family_of
from noisefloor.pytest_plugin.thresholds import BAR_REPEATS, BarVerdict, judge_bar, looks_of


@dataclass
class _Mark:
    kwargs: dict[str, Any] = field(default_factory=dict)
    args: tuple[Any, ...] = ()


@dataclass
class _Item:
    mark: _Mark | None
    skip: bool = False

    def get_closest_marker(self, name: str) -> _Mark | None:
        assert name == "noisefloor"
        return self.mark

    def iter_markers(self, name: str) -> list[_Mark]:
        return [_Mark({"reason": "not here"})] if self.skip and name == "skip" else []


def test_the_marked_tests_of_a_session_share_its_rate() -> None:
    items = [_Item(_Mark()) for _ in range(38)]
    items += [_Item(_Mark({"min_pass_rate": 0.9})), _Item(_Mark({"min_pass_rate": None}))]
    items += [_Item(None)] * 5  # unmarked: not sampled, not in the family
    items += [_Item(_Mark(), skip=True)] * 3  # skipped by their marks: never sampled
    family = family_of(items, 0.05)  # type: ignore[arg-type]
    assert (family.tests, family.thresholds, family.members) == (40, 1, 41)
    assert family.share == pytest.approx(0.05 / 41)
    plain = Family(tests=40, thresholds=0, alpha=0.05)
    assert plain.share == 0.00125
    assert plain.line() == (
        "family: 40 marked tests of this session; false-alarm rate 5% for the session (0.125% each)"
    )
    assert Family(tests=1, thresholds=0, alpha=0.05).line() == (
        "family: 1 marked test of this session; false-alarm rate 5% for the session"
    )
    assert Family(tests=0, thresholds=0, alpha=0.05).share == 0.05


@pytest.mark.parametrize(
    ("first", "cap", "looks"),
    [(5, 60, [5, BAR_REPEATS, 60]), (40, 60, [40, 60]), (100, 60, [100]), (5, 10, [5, 10])],
)
def test_a_bar_looks_at_the_checks_repeats_then_at_twenty_and_the_cap(
    first: int, cap: int, looks: list[int]
) -> None:
    assert looks_of(first, cap) == looks


def test_a_bar_fails_only_a_rate_confidently_below_it() -> None:
    share, looks = 0.0125, [5, 20, 60]
    # 5 of 5 cannot meet a bar of 0.9 (a rate of 0.6 shows it in 8% of sessions)
    assert judge_bar(0.9, 5, 5, share, 0, looks).verdict is BarVerdict.DOUBT
    assert judge_bar(0.9, 19, 20, share, 1, looks).verdict is BarVerdict.MET
    below = judge_bar(0.9, 12, 20, share, 1, looks)
    assert below.verdict is BarVerdict.BELOW
    assert below.alpha == pytest.approx(share * 15 / 60)  # the look's share of the bar's
    assert below.upper < 0.9
    assert below.line().startswith("below min_pass_rate 90%: pass rate 60% (12/20; at most ")
    # below as measured at the last look, not confidently: more repeats would decide it
    doubt = judge_bar(0.9, 51, 60, share, 2, looks)
    assert doubt.verdict is BarVerdict.DOUBT and doubt.upper > 0.9
    assert doubt.line().startswith("may be below min_pass_rate 90%")
    # the looks spend the bar's share, no more
    assert sum(stats.spending(looks, 1.0)) == pytest.approx(1.0)
