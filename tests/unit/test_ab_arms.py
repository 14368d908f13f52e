"""The step an A/B repeats: bringing each arm's cases to a number of repeats, taking only the
samples they miss, interleaved across the arms."""

from __future__ import annotations

from pathlib import Path

from noisefloor.executors.redaction import Redactor
from noisefloor.model.records import CaseRecord, TargetRecord
from noisefloor.operations.ab import Arm, sample_arms
from noisefloor.store.store import Store
from noisefloor.targets.function import FunctionTarget
from noisefloor.targets.source import BuiltTarget


def _arm(store: Store, name: str, calls: list[tuple[str, str, int]]) -> Arm:
    def answer(question: str, case_id: str, repeat: int) -> str:
        calls.append((name, case_id, repeat))
        return question

    key = name * 16
    target = FunctionTarget(answer, key=key)
    cases = [
        CaseRecord(
            case_id=f"c{i}",
            case_key=f"{i:016d}",
            input=f"question {i}",
            repeats=1,
            sample_dir=store.rel(store.sample_dir("s", f"c{i}", key, f"{i:016d}", 0)),
            scorers=[],
        )
        for i in range(2)
    ]
    record = TargetRecord(kind="function", key=key, spec=target.spec)
    return Arm(
        built=BuiltTarget(target, record, []),
        epoch=0,
        cases=cases,
        redactor=Redactor(),
        inputs={c.case_id: c.input for c in cases},
    )


def test_more_repeats_later_take_only_the_missing_ones_interleaved(tmp_path: Path) -> None:
    store = Store(tmp_path)
    calls: list[tuple[str, str, int]] = []
    arms = [_arm(store, "b", calls), _arm(store, "c", calls)]
    assert sample_arms(store, arms, {"c0": 2, "c1": 2}, jobs=1, seed=3) == 8
    # repeat 0 of both cases on both arms first
    assert sorted(calls[:4]) == [("b", "c0", 0), ("b", "c1", 0), ("c", "c0", 0), ("c", "c1", 0)]
    calls.clear()
    # a sequential design adds repeats where the verdict is in doubt: here case c0 only
    assert sample_arms(store, arms, {"c0": 4}, jobs=1, seed=3) == 4
    assert sorted(calls[:2]) == [("b", "c0", 2), ("c", "c0", 2)]
    assert sorted(calls[2:]) == [("b", "c0", 3), ("c", "c0", 3)]
    for arm in arms:
        assert arm.calls == 6
        assert [(c.case_id, c.repeats) for c in arm.cases] == [("c0", 4), ("c1", 2)]
        assert all(len(store.sample_paths(c)) == c.repeats for c in arm.cases)
        assert all(p.exists() for c in arm.cases for p in store.sample_paths(c))
    assert sample_arms(store, arms, {"c0": 4, "c1": 2}, jobs=2, seed=3) == 0
