"""How the Inspect target gathers a take's calls: every call that arrives on the same turn of the
loop in one batch, and a batch in one `eval()` per distinct number of repeats a case needs, its
epochs given to the case's repeats in order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from noisefloor.targets.base import CaseInput, Outcome, RawSample
from noisefloor.targets.inspect_eval import InspectTarget


class _Recorded(InspectTarget):
    """The target with `eval()` replaced by a record of what it was asked."""

    def __init__(self, root: Path) -> None:
        super().__init__(
            task="tasks.py@coins",
            task_args={},
            model="mockllm/model",
            model_base_url=None,
            model_args={},
            generate={},
            max_samples=None,
            sample_ids={"a": "a", "b": "b", "c": 3},
            store_root=root,
            where="suite.yaml",
            key="k",
            spec={},
        )
        self.evals: list[tuple[list[str], int]] = []
        self.batches: list[int] = []

    def _eval_batch(self, batch: Any) -> list[RawSample]:
        self.batches.append(len(batch))
        return super()._eval_batch(batch)

    def _eval(
        self, case_ids: list[str], epochs: int, wanted: dict[str, list[int]], concurrency: int
    ) -> dict[tuple[str, int], RawSample]:
        self.evals.append((sorted(case_ids), epochs))
        return {
            (case_id, repeat): RawSample(
                kind="inspect",
                case_id=case_id,
                repeat=repeat,
                outcome=Outcome.OK,
                envelope={"epoch": epoch},
            )
            for case_id in case_ids
            for epoch, repeat in enumerate(wanted[case_id], 1)
        }


def _take(target: _Recorded, calls: list[tuple[str, int]]) -> list[RawSample]:
    async def run() -> list[RawSample]:
        return await asyncio.gather(
            *(target.sample(CaseInput(case_id=c, input=""), r, len(calls)) for c, r in calls)
        )

    return asyncio.run(run())


def test_calls_that_arrive_together_are_one_batch_and_one_eval(tmp_path: Path) -> None:
    target = _Recorded(tmp_path)
    calls = [(case, repeat) for repeat in range(5) for case in ("a", "b", "c")]
    samples = _take(target, calls)
    assert target.batches == [15]
    assert target.evals == [(["a", "b", "c"], 5)]
    # each call gets its own sample back, epoch k the k-th lowest repeat taken
    assert [(s.case_id, s.repeat) for s in samples] == calls
    assert all((s.envelope or {})["epoch"] == s.repeat + 1 for s in samples)


def test_cases_that_need_different_numbers_of_repeats_share_one_eval_per_number(
    tmp_path: Path,
) -> None:
    target = _Recorded(tmp_path)
    calls = [("a", 7), ("a", 5), ("b", 0), ("b", 1), ("c", 9), ("c", 8)]
    samples = _take(target, calls)
    assert target.batches == [6]
    assert target.evals == [(["a", "b", "c"], 2)]
    by_call = {(s.case_id, s.repeat): (s.envelope or {})["epoch"] for s in samples}
    assert by_call == {("a", 5): 1, ("a", 7): 2, ("b", 0): 1, ("b", 1): 2, ("c", 8): 1, ("c", 9): 2}

    target = _Recorded(tmp_path)
    _take(target, [("a", 0), ("b", 0), ("b", 1), ("c", 0), ("c", 1), ("c", 2)])
    assert target.evals == [(["a"], 1), (["b"], 2), (["c"], 3)]


def test_a_second_take_after_the_first_is_a_batch_of_its_own(tmp_path: Path) -> None:
    target = _Recorded(tmp_path)

    async def two_looks() -> None:
        for look in range(2):
            await asyncio.gather(
                *(target.sample(CaseInput(case_id=c, input=""), look, 3) for c in "ab")
            )

    asyncio.run(two_looks())
    assert target.batches == [2, 2]
