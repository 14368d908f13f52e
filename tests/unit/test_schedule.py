"""The order a take's calls go out in: every pending call once, repeat by repeat, each repeat's
(case, arm) calls in a random order that its seed alone decides and that favours no arm."""

from __future__ import annotations

import itertools
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from noisefloor.executors.base import ArmPending, Pending
from noisefloor.executors.schedule import call_order
from noisefloor.model.records import CaseRecord
from noisefloor.targets.function import FunctionTarget

#: A call as the tests compare them: (arm index, case id, repeat).
Call = tuple[int, str, int]


def _answer(question: str, case_id: str, repeat: int) -> str:
    return question


def _case(case_id: str) -> CaseRecord:
    return CaseRecord(
        case_id=case_id,
        case_key="0" * 16,
        input=f"question {case_id}",
        repeats=1,
        sample_dir=f"samples/s/{case_id}",
        scorers=[],
    )


def _arms(wanted: list[dict[str, list[int]]]) -> list[ArmPending]:
    """One arm per entry, pending the repeats it lists per case id."""
    arms = []
    for index, repeats in enumerate(wanted):
        pending = [
            Pending(_case(case_id), repeat, f"arm{index}/{case_id}/r{repeat}.json", case_id)
            for case_id, numbers in repeats.items()
            for repeat in numbers
        ]
        arms.append(ArmPending(FunctionTarget(_answer, key=f"{index:016d}"), pending))
    return arms


def _full(arms: int, cases: int, repeats: int) -> list[ArmPending]:
    """`arms` arms each missing repeats 0 to `repeats - 1` of cases c00, c01, ..."""
    return _arms([{f"c{n:02d}": list(range(repeats)) for n in range(cases)}] * arms)


def _calls(order: list[tuple[int, Pending]]) -> list[Call]:
    return [(index, item.case.case_id, item.repeat) for index, item in order]


def _blocks(calls: list[Call]) -> list[list[Call]]:
    """The calls of each repeat, in the order they went out."""
    return [list(block) for _, block in itertools.groupby(calls, key=lambda call: call[2])]


def test_every_pending_call_goes_out_once_repeat_by_repeat() -> None:
    arms = _full(2, 5, 4)
    calls = _calls(call_order(arms, 11))
    wanted = [
        (index, p.case.case_id, p.repeat) for index, arm in enumerate(arms) for p in arm.pending
    ]
    assert sorted(calls) == sorted(wanted)
    assert len(set(calls)) == len(calls) == 2 * 5 * 4
    assert [call[2] for call in calls] == sorted(call[2] for call in calls)
    assert [len(block) for block in _blocks(calls)] == [10, 10, 10, 10]


def test_the_same_seed_draws_the_same_order_and_other_seeds_other_orders() -> None:
    arms = _full(2, 6, 3)
    assert call_order(arms, 42) == call_order(arms, 42)
    # the order of the pending lists plays no part: only the seed, repeat, case and arm do
    shuffled = [ArmPending(a.target, random.Random(1).sample(list(a.pending), 18)) for a in arms]
    assert _calls(call_order(shuffled, 42)) == _calls(call_order(arms, 42))
    orders = {tuple(_calls(call_order(arms, seed))) for seed in range(20)}
    assert len(orders) == 20


def _without(arms: list[ArmPending], done: set[Call]) -> list[ArmPending]:
    """The arms as a resumed take finds them: the calls in `done` wrote their samples."""
    return [
        ArmPending(
            arm.target, [p for p in arm.pending if (i, p.case.case_id, p.repeat) not in done]
        )
        for i, arm in enumerate(arms)
    ]


def test_a_take_that_resumes_sends_what_is_left_in_the_same_order() -> None:
    arms = _full(2, 4, 5)
    first = _calls(call_order(arms, 7))
    done = set(first[:13])  # an interrupted take wrote these
    assert _calls(call_order(_without(arms, done), 7)) == [c for c in first if c not in done]


def test_the_baseline_arm_goes_first_in_about_half_of_each_case_and_repeat() -> None:
    """Today's fixed order (arm 0 right before arm 1 for every case and repeat) gives the
    candidate whatever the baseline's call left behind (a warm prompt cache) every time."""
    calls = _calls(call_order(_full(2, 20, 50), 2026))
    first: dict[tuple[str, int], int] = {}
    for index, case_id, repeat in calls:
        first.setdefault((case_id, repeat), index)
    baseline_first = sum(1 for index in first.values() if index == 0)
    assert len(first) == 1000
    assert binomtest(baseline_first, len(first), 0.5).pvalue > 0.01, baseline_first


def test_the_arms_mix_within_every_repeat() -> None:
    """Not one arm's calls of a repeat, then the other's: 20 of each in two runs happens to a
    random order once in about 70 billion."""
    for block in _blocks(_calls(call_order(_full(2, 20, 30), 5))):
        runs = len([arm for arm, _ in itertools.groupby(call[0] for call in block)])
        assert runs > 2, block


def test_the_cases_of_a_repeat_go_out_in_no_fixed_order() -> None:
    calls = _calls(call_order(_full(1, 10, 200), 99))
    orders = [tuple(case_id for _, case_id, _ in block) for block in _blocks(calls)]
    assert len(set(orders)) == len(orders) == 200
    # each case leads a repeat about as often as any other
    leads = Counter(order[0] for order in orders)
    assert set(leads) == {f"c{n:02d}" for n in range(10)}
    c00_before_c01 = sum(1 for order in orders if order.index("c00") < order.index("c01"))
    assert binomtest(c00_before_c01, len(orders), 0.5).pvalue > 0.01, c00_before_c01


_repeats = st.lists(st.integers(0, 12), max_size=6, unique=True)
_arm = st.dictionaries(st.sampled_from(["a", "b/c", "case:1", "z", "é"]), _repeats, max_size=5)


@settings(max_examples=200, deadline=None)
@given(
    wanted=st.lists(_arm, min_size=1, max_size=3), seed=st.integers(0, 2**32 - 1), data=st.data()
)
def test_any_pending_set_is_ordered_whole_by_repeat_and_alike_when_resumed(
    wanted: list[dict[str, list[int]]], seed: int, data: st.DataObject
) -> None:
    arms = _arms(wanted)
    calls = _calls(call_order(arms, seed))
    wanted_calls = [
        (i, c, r) for i, repeats in enumerate(wanted) for c, rs in repeats.items() for r in rs
    ]
    assert Counter(calls) == Counter(wanted_calls)
    assert [call[2] for call in calls] == sorted(call[2] for call in calls)
    # what a resumed take still misses, any part of the set, keeps its calls' relative order
    done = data.draw(st.sets(st.sampled_from(calls)) if calls else st.just(set()))
    assert _calls(call_order(_without(arms, done), seed)) == [c for c in calls if c not in done]


def test_a_controls_kth_call_meets_its_candidates_kth_whatever_their_repeats() -> None:
    """A control's repeats start past the baseline's held ones (r100 and r30 up), the
    candidate's past its looks' (r60 and r10 up): each side's blocks open at its own first new
    repeat, so the take's k-th block holds the k-th call of each case on each side, and neither
    side's calls all go first (counted from r0, every candidate call would precede the
    control's r100)."""
    control = {"c1": list(range(100, 105)), "c2": list(range(30, 35))}
    candidate = {"c1": list(range(60, 65)), "c2": list(range(10, 15))}
    arms = _arms([control, candidate])
    arms = [
        ArmPending(arms[0].target, arms[0].pending, first_block={"c1": 100, "c2": 30}),
        ArmPending(arms[1].target, arms[1].pending, first_block={"c1": 60, "c2": 10}),
    ]
    calls = _calls(call_order(arms, 4))
    blocks = [calls[i : i + 4] for i in range(0, len(calls), 4)]
    assert len(blocks) == 5
    for k, block in enumerate(blocks):
        assert sorted(block) == [
            (0, "c1", 100 + k),
            (0, "c2", 30 + k),
            (1, "c1", 60 + k),
            (1, "c2", 10 + k),
        ]
