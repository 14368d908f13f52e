"""Taking samples with an in-process target: what is missing, what is written, and what a
failing write or an interruption does to the samples already taken."""

from __future__ import annotations

import errno
import gc
import logging
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from noisefloor.executors.base import ArmPending, SampleHooks
from noisefloor.executors.redaction import Redactor
from noisefloor.executors.sampling import pending_samples, take_interleaved, take_samples
from noisefloor.executors.schedule import call_order
from noisefloor.model.records import CaseRecord
from noisefloor.store.store import Store
from noisefloor.targets.base import BlockingTarget
from noisefloor.targets.command import CommandTarget
from noisefloor.targets.function import FunctionTarget


def _cases(store: Store, count: int, repeats: int) -> list[CaseRecord]:
    cases = []
    for i in range(count):
        sample_dir = store.sample_dir("suite", f"case-{i}", "t" * 16, f"{i:016d}", 0)
        cases.append(
            CaseRecord(
                case_id=f"case-{i}",
                case_key=f"{i:016d}",
                input=f"question {i}",
                repeats=repeats,
                sample_dir=store.rel(sample_dir),
                scorers=[],
            )
        )
    return cases


def _answer(question: str, case_id: str, repeat: int) -> str:
    return f"{question} / {repeat}"


def test_every_missing_repeat_is_taken_once_and_written(tmp_path: Path) -> None:
    store = Store(tmp_path)
    cases = _cases(store, 3, 2)
    pending = pending_samples(store, cases)
    called: list[tuple[str, int]] = []

    def answer(question: str, case_id: str, repeat: int) -> str:
        called.append((case_id, repeat))
        return _answer(question, case_id, repeat)

    assert take_samples(store, FunctionTarget(answer), pending, jobs=1, seed=1) == 6
    # repeat 0 of every case first: an interrupted run has evidence on every case
    assert sorted(called[:3]) == [("case-0", 0), ("case-1", 0), ("case-2", 0)]
    (case_1_repeat_1,) = [p for p in pending if (p.case.case_id, p.repeat) == ("case-1", 1)]
    data = orjson.loads(case_1_repeat_1.path.read_bytes())
    assert (data["case_id"], data["repeat"], data["output"]["text"]) == (
        "case-1",
        1,
        "question 1 / 1",
    )
    assert pending_samples(store, cases) == []


def test_redaction_happens_before_the_write(tmp_path: Path) -> None:
    store = Store(tmp_path)
    pending = pending_samples(store, _cases(store, 1, 1))
    take_samples(
        store,
        FunctionTarget(_answer),
        pending,
        redactor=Redactor(patterns=[r"question \d"]),
        seed=1,
    )
    assert b"question" not in pending[0].path.read_bytes()
    assert b"[REDACTED] / 0" in pending[0].path.read_bytes()


class _FullDisk(Store):
    """A store whose third sample write fails as a full disk would."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.writes = 0

    def write_sample(self, path: Path, obj: Any) -> None:
        self.writes += 1
        if self.writes == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().write_sample(path, obj)


def test_a_failed_write_stops_the_run_with_its_error(tmp_path: Path) -> None:
    store = _FullDisk(tmp_path)
    pending = pending_samples(store, _cases(store, 4, 2))
    with pytest.raises(OSError, match="No space left"):
        take_samples(store, FunctionTarget(_answer), pending, jobs=1, seed=1)
    kept = [p for p in pending if p.path.exists()]
    assert len(kept) >= 2  # the writes before the failure stay
    assert all(orjson.loads(p.path.read_bytes())["outcome"] == "ok" for p in kept)


def test_an_interrupted_run_leaves_no_unretrieved_task_exception(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # the collector would log it from wherever it runs next (once: inside pytest's own compile)
    store = Store(tmp_path)
    pending = pending_samples(store, _cases(store, 2, 2))

    def answer(question: str, case_id: str, repeat: int) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        take_samples(store, FunctionTarget(answer), pending, jobs=1, seed=1)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        gc.collect()
    assert [r.getMessage() for r in caplog.records] == []


def test_an_interrupted_run_keeps_every_sample_it_finished(tmp_path: Path) -> None:
    store = Store(tmp_path)
    pending = pending_samples(store, _cases(store, 5, 2))
    finished: list[tuple[str, int]] = []
    third_done = threading.Event()

    def answer(question: str, case_id: str, repeat: int) -> str:
        if len(finished) == 3:
            third_done.set()
            raise KeyboardInterrupt  # as Ctrl-C would, in the middle of the run
        finished.append((case_id, repeat))
        return question

    with pytest.raises(KeyboardInterrupt):
        take_samples(store, FunctionTarget(answer), pending, jobs=1, seed=1)
    assert third_done.is_set()
    written = [p for p in pending if p.path.exists()]
    assert len(written) == 3
    assert sorted((p.case.case_id, p.repeat) for p in written) == sorted(finished)


def test_each_written_sample_is_reported_once_its_file_is_there(tmp_path: Path) -> None:
    store = Store(tmp_path)
    pending = pending_samples(store, _cases(store, 2, 2))
    seen: list[tuple[str, int, bool, str]] = []

    def on_written(item: Any, path: Path, sample: dict[str, Any]) -> None:
        seen.append((item.case.case_id, item.repeat, path.exists(), sample["output"]["text"]))

    redactor = Redactor(["question"])
    hooks = SampleHooks(on_written)
    take_samples(store, FunctionTarget(_answer), pending, redactor=redactor, hooks=hooks, seed=1)
    assert sorted(seen) == [
        ("case-0", 0, True, "[REDACTED] 0 / 0"),
        ("case-0", 1, True, "[REDACTED] 0 / 1"),
        ("case-1", 0, True, "[REDACTED] 1 / 0"),
        ("case-1", 1, True, "[REDACTED] 1 / 1"),
    ]
    # sampling indexes nothing itself: whoever wants an index subscribes
    assert not list(tmp_path.glob("ledger.sqlite*"))


def _arm_cases(store: Store, target_key: str, count: int, repeats: int) -> list[CaseRecord]:
    return [
        CaseRecord(
            case_id=f"case-{i}",
            case_key=f"{i:016d}",
            input=f"question {i}",
            repeats=repeats,
            sample_dir=store.rel(
                store.sample_dir("suite", f"case-{i}", target_key, f"{i:016d}", 0)
            ),
            scorers=[],
        )
        for i in range(count)
    ]


def test_two_arms_are_sampled_in_the_order_their_seed_draws(tmp_path: Path) -> None:
    store = Store(tmp_path)
    calls: list[tuple[str, str, int]] = []

    def arm(name: str) -> FunctionTarget:
        def answer(question: str, case_id: str, repeat: int) -> str:
            calls.append((name, case_id, repeat))
            return f"{name} {question}"

        return FunctionTarget(answer, key=name)

    base = pending_samples(store, _arm_cases(store, "b" * 16, 2, 2))
    cand = pending_samples(store, _arm_cases(store, "c" * 16, 2, 2))
    arms = [ArmPending(arm("base"), base), ArmPending(arm("cand"), cand)]
    assert take_interleaved(store, arms, jobs=1, seed=1) == [4, 4]
    names = ["base", "cand"]
    assert calls == [(names[i], p.case.case_id, p.repeat) for i, p in call_order(arms, 1)]
    # each arm's samples land in its own sample set, started in the order they were called
    written = sorted(
        (sample["started_at"], arm_name, sample["case_id"], sample["repeat"])
        for arm_name, pending in (("base", base), ("cand", cand))
        for sample in (orjson.loads(p.path.read_bytes()) for p in pending)
    )
    assert [(name, case_id, repeat) for _, name, case_id, repeat in written] == calls
    assert orjson.loads(cand[0].path.read_bytes())["output"]["text"] == "cand question 0"


def test_interleaving_takes_only_what_each_arm_misses(tmp_path: Path) -> None:
    store = Store(tmp_path)
    base_cases = _arm_cases(store, "b" * 16, 1, 3)
    take_samples(store, FunctionTarget(_answer), pending_samples(store, base_cases), seed=1)
    grown = [c.model_copy(update={"repeats": 4}) for c in base_cases]
    arms = [
        ArmPending(FunctionTarget(_answer), pending_samples(store, grown)),
        ArmPending(
            FunctionTarget(_answer), pending_samples(store, _arm_cases(store, "c" * 16, 1, 4))
        ),
    ]
    assert take_interleaved(store, arms, jobs=2, seed=1) == [1, 4]
    assert pending_samples(store, grown) == []


def test_an_on_written_that_batches_is_flushed_in_batches_and_at_the_end(tmp_path: Path) -> None:
    """Samples coming faster than the writer's idle wait are flushed together, not one by one;
    every sample is flushed by the time sampling returns."""
    store = Store(tmp_path)
    pending = pending_samples(store, _cases(store, 10, 5))
    batches: list[int] = []

    class Batching:
        def __init__(self) -> None:
            self.held = 0

        def __call__(self, item: Any, path: Path, sample: dict[str, Any]) -> None:
            self.held += 1

        def flush(self) -> None:
            if self.held:
                batches.append(self.held)
            self.held = 0

    take_samples(store, FunctionTarget(_answer), pending, hooks=SampleHooks(Batching()), seed=1)
    assert sum(batches) == 50
    assert len(batches) < 25, batches


def test_a_sample_indexer_has_indexed_every_sample_once_closed(tmp_path: Path) -> None:
    from noisefloor.ledger.ledger import Ledger, ledger_path
    from noisefloor.pipeline.indexing import SampleIndexer

    store = Store(tmp_path)
    pending = pending_samples(store, _cases(store, 4, 2))
    indexer = SampleIndexer(store)
    try:
        take_samples(store, FunctionTarget(_answer), pending, hooks=SampleHooks(indexer), seed=1)
    finally:
        indexer.close()
    with Ledger(ledger_path(tmp_path)) as ledger:
        count = ledger._db().execute("SELECT count(*) FROM samples").fetchone()[0]
    assert count == 8


# -- targets that block (a program per sample): called from threads, without an event loop ----

#: Sleeps for the seconds its input names, then prints them.
_SLEEPER = "import sys, time; time.sleep(float(sys.argv[1])); print(sys.argv[1])"


def _sleeper(tmp_path: Path) -> CommandTarget:
    argv = [sys.executable, "-c", _SLEEPER, "{{input}}"]
    return CommandTarget(argv=argv, cwd=tmp_path, env={}, timeout_s=60, key="k", spec={})


def _inputs(cases: list[CaseRecord], *seconds: str) -> list[CaseRecord]:
    return [case.model_copy(update={"input": s}) for case, s in zip(cases, seconds, strict=True)]


def test_a_blocking_target_takes_every_repeat_once_in_order(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    pending = pending_samples(store, _inputs(_cases(store, 3, 2), "0", "0", "0"))
    assert isinstance(_sleeper(tmp_path), BlockingTarget)
    started: list[tuple[str, int]] = []

    calls = take_samples(
        store,
        _sleeper(tmp_path),
        pending,
        jobs=1,
        hooks=SampleHooks(on_call=lambda p: started.append((p.case.case_id, p.repeat))),
        seed=1,
    )

    assert calls == 6
    order = call_order([ArmPending(_sleeper(tmp_path), pending)], 1)
    assert started == [(p.case.case_id, p.repeat) for _, p in order]
    for item in pending:
        sample = orjson.loads(item.path.read_bytes())
        assert (sample["case_id"], sample["repeat"], sample["outcome"]) == (
            item.case.case_id,
            item.repeat,
            "ok",
        )


def test_blocking_calls_run_jobs_at_a_time(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    pending = pending_samples(store, _inputs(_cases(store, 4, 1), "0.5", "0.5", "0.5", "0.5"))
    started = time.monotonic()

    assert take_samples(store, _sleeper(tmp_path), pending, jobs=4, seed=1) == 4

    # four half-second calls at once take about half a second, not two
    assert time.monotonic() - started < 1.5
    assert all(item.path.exists() for item in pending)


def test_an_interrupted_blocking_run_keeps_what_finished_and_writes_no_killed_call(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store")
    # case-0 answers at once; case-1 would take a minute: the interruption kills it
    pending = pending_samples(store, _inputs(_cases(store, 2, 1), "0", "60"))
    seen: list[str] = []

    def interrupt(item: Any, sample: Any) -> None:
        seen.append(item.case.case_id)
        raise KeyboardInterrupt  # as Ctrl-C would, with case-1's call in flight

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        hooks = SampleHooks(on_sample=interrupt)
        take_samples(store, _sleeper(tmp_path), pending, jobs=2, hooks=hooks, seed=1)

    assert time.monotonic() - started < 10
    assert seen == ["case-0"]
    assert pending[0].path.exists()
    assert not pending[1].path.exists()


def test_the_missing_repeats_a_run_holds_do_not_grow_as_their_samples_are_written(
    tmp_path: Path,
) -> None:
    # what a run holds for its missing repeats, from its start to its end, must not grow with
    # the samples taken: each one's file as a `Path` grew the forms it caches once written
    # (about 250 bytes a sample: 19 MB over a soak's last 75,000), and a task per call held a
    # coroutine for every repeat not yet taken
    store = Store(tmp_path)
    cases = _cases(store, 100, 20)
    for case in cases:  # the directories a run makes are none of this test's business
        Path(store.abs(case.sample_dir)).mkdir(parents=True)
    tracemalloc.start()
    try:
        pending = pending_samples(store, cases)
        gc.collect()
        before = tracemalloc.take_snapshot()
        take_samples(store, FunctionTarget(_answer), pending, jobs=1, seed=1)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # what stays, by the line that allocated it, from lines that allocated more than once: a
    # table of the interpreter's own that grows once (the interned strings, when the process
    # has interned many before this test) is no growth per sample
    grown = sum(s.size_diff for s in after.compare_to(before, "lineno") if s.count_diff > 1)

    assert len(pending) == 2000
    assert grown < 200_000, grown
