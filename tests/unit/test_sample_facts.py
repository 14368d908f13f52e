"""A run's record checks its samples from what was noted as each was written: only the samples
the run did not take are read back, and the check says the same either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from noisefloor.errors import TargetConfigError
from noisefloor.executors.base import Pending, SampleHooks
from noisefloor.model.records import CaseRecord
from noisefloor.operations.sample_facts import SampleFacts
from noisefloor.pipeline import banding
from noisefloor.store.store import Store
from noisefloor.targets.kinds import kind_named

SUITE = "facts"


def _case(store: Store, repeats: int) -> CaseRecord:
    sample_dir = store.sample_dir(SUITE, "case-1", "t" * 16, "k" * 16, 0)
    return CaseRecord(
        case_id="case-1",
        case_key="k" * 16,
        input="question",
        repeats=repeats,
        sample_dir=store.rel(sample_dir),
        scorers=[],
    )


def _http_sample(repeat: int, served: str | None, refused: bool = False) -> dict[str, Any]:
    envelope: dict[str, Any] = {"served_model": served}
    if refused:
        envelope["error_class"] = "config"
    return {
        "kind": "http",
        "case_id": "case-1",
        "repeat": repeat,
        "outcome": "error:infra" if refused else "ok",
        "error": f"HTTP 401 on repeat {repeat}" if refused else None,
        "envelope": envelope,
    }


def _written(store: Store, case: CaseRecord, samples: list[dict[str, Any]]) -> list[Pending]:
    """Write `samples` as a run's writer does; the pending repeats they stand for."""
    items = []
    for sample, path in zip(samples, store.sample_paths(case), strict=True):
        store.write_sample(path, sample)
        items.append(Pending(case=case, repeat=sample["repeat"], file=str(path), input="question"))
    return items


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sample files read back, by path."""
    read: list[str] = []
    real = banding.read_sample

    def counted(path: str | Path) -> Any:
        read.append(str(path))
        return real(path)

    monkeypatch.setattr(banding, "read_sample", counted)
    return read


def test_samples_written_here_are_not_read_back_and_others_are(
    tmp_path: Path, reads: list[str]
) -> None:
    store = Store(tmp_path / "store")
    case = _case(store, repeats=3)
    samples = [_http_sample(0, "m-a"), _http_sample(1, "m-b"), _http_sample(2, "m-a")]
    items = _written(store, case, samples)
    facts = SampleFacts(store)
    for item, sample in zip(items[1:], samples[1:], strict=True):  # repeat 0 was cached
        facts.note(item, item.path, sample)

    served = facts.check_run(kind_named("http"), [case])

    assert served == {"m-a": 2, "m-b": 1}
    assert reads == [str(items[0].path)]
    assert len(facts._distinct) == 2  # each distinct fact kept once
    # the same check from the files alone
    assert SampleFacts(store).check_run(kind_named("http"), [case]) == served


def test_a_run_whose_every_call_was_refused_is_refused_from_noted_facts(
    tmp_path: Path, reads: list[str]
) -> None:
    store = Store(tmp_path / "store")
    case = _case(store, repeats=2)
    samples = [_http_sample(r, None, refused=True) for r in range(2)]
    facts = SampleFacts(store)
    for item, sample in zip(_written(store, case, samples), samples, strict=True):
        facts.note(item, item.path, sample)

    with pytest.raises(TargetConfigError, match="refused every call: HTTP 401 on repeat 0"):
        facts.check_run(kind_named("http"), [case])
    assert reads == []


def test_a_kind_that_checks_nothing_keeps_and_reads_nothing(
    tmp_path: Path, reads: list[str]
) -> None:
    store = Store(tmp_path / "store")
    case = _case(store, repeats=1)
    sample = {"kind": "command", "case_id": "case-1", "repeat": 0, "outcome": "ok"}
    (item,) = _written(store, case, [sample])
    facts = SampleFacts(store)
    facts.note(item, item.path, sample)

    assert facts.check_run(kind_named("command"), [case]) == {}
    assert reads == []
    assert facts._noted == {}


def test_listeners_are_told_in_turn_and_only_those_that_batch_are_flushed() -> None:
    told: list[tuple[str, int]] = []

    class Batching:
        flushed = 0

        def __call__(self, item: Any, path: Path, data: dict[str, Any]) -> None:
            told.append(("batching", data["n"]))

        def flush(self) -> None:
            self.flushed += 1

    batching = Batching()
    hooks = SampleHooks(batching, lambda item, path, data: told.append(("plain", data["n"])))
    hooks.written(None, Path("x"), {"n": 1})  # type: ignore[arg-type]
    hooks.flush()

    assert told == [("batching", 1), ("plain", 1)]
    assert batching.flushed == 1
