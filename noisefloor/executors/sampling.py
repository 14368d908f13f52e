"""Taking samples: which repeats are missing, and calling the target (or the targets of an A/B's
two arms, interleaved) for exactly those.

Each sample is written atomically the moment it arrives, so a killed run loses nothing it finished.
The calls run here (threads for targets that block, an asyncio loop for the others) or on a
cluster (`executors/`), which only calls.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noisefloor.model.records import CaseRecord
from noisefloor.store.layout import has_sample
from noisefloor.store.store import Store
from noisefloor.targets.base import BlockingTarget, CaseInput, RawSample, Target
from noisefloor.targets.kinds import kind_named

if TYPE_CHECKING:
    import asyncio

    from noisefloor.targets.source import TargetSource

__all__ = [
    "ArmPending",
    "OnWritten",
    "Pending",
    "Redactor",
    "SampleWriter",
    "WrittenListeners",
    "pending_samples",
    "take_interleaved",
    "take_samples",
]


@dataclass(frozen=True)
class Pending:
    """One repeat of one case that has no sample file yet."""

    case: CaseRecord
    repeat: int
    file: str
    """The sample file to write, absolute. A plain string: a run holds every missing repeat at
    once, and a `Path` each took about 0.5 KB, and more as the forms it caches were asked for
    (a soak of 100,000 samples grew 19 MB while it took the last three quarters)."""
    input: str
    """What the target receives: the suite's input, before any redaction of the records."""

    @property
    def path(self) -> Path:
        """`file` as a path, made anew at each use (kept by nobody once the sample is written)."""
        return Path(self.file)


#: Told of each sample once its file is written: the pending repeat, the file and the sample as
#: stored (redacted). Called from the writer's thread, in arrival order; an error it raises stops
#: the run as a failed write would. One with a `flush()` method may hold what it is told until
#: that is called: whenever the writer has waited `IDLE_S` for the next sample, at least every
#: `FLUSH_S` while samples keep coming, and once at the end.
OnWritten = Callable[[Pending, Path, dict[str, Any]], None]


class WrittenListeners:
    """An `OnWritten` that tells each of `listeners` in turn, and flushes those that batch."""

    def __init__(self, *listeners: OnWritten) -> None:
        self._listeners = listeners
        self._flushes = [f for f in (getattr(x, "flush", None) for x in listeners) if f]

    def __call__(self, item: Pending, path: Path, data: dict[str, Any]) -> None:
        for listener in self._listeners:
            listener(item, path, data)

    def flush(self) -> None:
        for flush in self._flushes:
            flush()


#: Seconds the writer waits for the next sample before it flushes `on_written`.
IDLE_S = 0.02
#: Seconds at most between two flushes of `on_written` while samples keep coming.
FLUSH_S = 0.5


def pending_samples(
    store: Store, cases: Sequence[CaseRecord], inputs: Mapping[str, str] | None = None
) -> list[Pending]:
    """Every missing sample file: the only target calls a run needs to make.

    `inputs` maps case id to the input to send, when the records hold a redacted copy.
    """
    inputs = inputs or {}
    out = []
    for case in cases:
        for repeat, file in enumerate(store.sample_files(case), case.start):
            if not has_sample(file):
                out.append(Pending(case, repeat, file, inputs.get(case.case_id, case.input)))
    # Interleave cases (repeat 0 of every case first) so that an interrupted run has
    # evidence on every case, and so that bursts against one input are spread out.
    out.sort(key=lambda p: (p.repeat, p.case.case_id))
    return out


class Redactor:
    """Replaces matches of the suite's patterns, and known secret values, in every string."""

    def __init__(self, patterns: Sequence[str] = (), secrets: Sequence[str] = ()) -> None:
        parts = [f"(?:{p})" for p in patterns]
        parts += [re.escape(s) for s in secrets if len(s) >= 4]
        self._regex = re.compile("|".join(parts)) if parts else None

    def __bool__(self) -> bool:
        return self._regex is not None

    def text(self, value: str) -> str:
        """Redact one string."""
        return self._regex.sub("[REDACTED]", value) if self._regex else value

    def apply(self, obj: Any) -> Any:
        """Redact every string inside a JSON-like structure, keys included."""
        if self._regex is None:
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {
                self.text(k) if isinstance(k, str) else k: self.apply(v) for k, v in obj.items()
            }
        if isinstance(obj, list):
            return [self.apply(v) for v in obj]
        return obj


class SampleWriter:
    """Writes samples in arrival order from a thread of its own, so that the event loop never
    waits on the file system: creating a file took 0.5-1 ms here in the middle of a run, as
    long as a whole request's CPU time.

    Each sample is reported to `on_written` as soon as its file is written; one that batches
    (the ledger's indexer) is flushed whenever the writer waits for the next sample, so a run
    killed halfway has all but its last moments' samples indexed.
    """

    def __init__(self, store: Store, on_written: OnWritten | None) -> None:
        self._store = store
        self._on_written = on_written
        self._flush: Callable[[], None] | None = getattr(on_written, "flush", None)
        self._queue: queue.SimpleQueue[tuple[Pending, dict[str, Any]] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="noisefloor-writer", daemon=True)
        self._thread.start()

    def put(self, item: Pending, data: dict[str, Any]) -> None:
        """Queue one sample; raise the error of an earlier write, if one failed."""
        if self._error is not None:
            raise self._error
        self._queue.put((item, data))

    def add(self, arm: ArmPending, item: Pending, sample: RawSample) -> None:
        """Queue one of `arm`'s samples, redacted as the arm says."""
        data = arm.redactor.apply(sample.model_dump(mode="json"))
        if arm.redactor:
            kind_named(data["kind"]).after_redaction(data)
        self.put(item, data)

    def close(self) -> None:
        """Write everything queued (an interrupted run keeps what it finished), then stop."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _drain(self) -> None:
        held: float | None = None  # when `on_written` began to hold samples not yet flushed
        while True:
            try:
                queued = self._queue.get(timeout=IDLE_S) if held is not None else self._queue.get()
            except queue.Empty:
                self._flushed()
                held = None
                continue
            if queued is None:
                break
            if self._error is not None:
                continue
            item, data = queued
            try:
                path = item.path
                self._store.write_sample(path, data)
                if self._on_written is not None:
                    self._on_written(item, path, data)
                    if self._flush is not None and held is None:
                        held = time.monotonic()
            except BaseException as exc:  # handed to the loop's thread by put/close
                self._error = exc
            if held is not None and time.monotonic() - held >= FLUSH_S:
                self._flushed()
                held = None
        self._flushed()

    def _flushed(self) -> None:
        """Flush `on_written` (an error stops the run as a failed write would)."""
        if self._flush is not None and self._error is None:
            try:
                self._flush()
            except BaseException as exc:  # handed to the loop's thread by put/close
                self._error = exc


@dataclass(frozen=True)
class ArmPending:
    """The missing samples of one version of a target: one arm of an A/B comparison."""

    target: Target
    pending: Sequence[Pending]
    redactor: Redactor = field(default_factory=Redactor)
    """Applied to each of this arm's samples before it is written."""
    source: TargetSource | None = None
    """What a cluster's workers build the target from (a cluster executor needs it)."""


def _call_order(arms: Sequence[ArmPending]) -> list[tuple[int, Pending]]:
    """Every pending call with its arm's index, by repeat, then case, then arm: drift over the
    run hits every arm alike."""
    return sorted(
        ((index, item) for index, arm in enumerate(arms) for item in arm.pending),
        key=lambda pair: (pair[1].repeat, pair[1].case.case_id, pair[0]),
    )


def _take_blocking(
    store: Store,
    arms: Sequence[ArmPending],
    targets: Sequence[BlockingTarget],
    jobs: int,
    on_sample: Callable[[Pending, RawSample], None] | None,
    on_call: Callable[[Pending], None] | None,
    on_written: OnWritten | None,
) -> list[int]:
    """`_take` for targets that block: each call in a thread of its own (at one job, this one),
    without an event loop's hand-offs between a call and its sample."""
    calls = [0] * len(arms)
    writer = SampleWriter(store, on_written)
    lock = threading.Lock()
    stopping = threading.Event()

    def one(index: int, item: Pending) -> None:
        if stopping.is_set():
            return
        if on_call is not None:
            with lock:
                on_call(item)
        case = CaseInput(case_id=item.case.case_id, input=item.input)
        sample = targets[index].sample_blocking(case, item.repeat, jobs)
        with lock:
            if stopping.is_set():  # killed by the stop: not a sample of the program
                return
            calls[index] += sample.attempts
            writer.add(arms[index], item, sample)
            if on_sample is not None:
                on_sample(item, sample)

    order = _call_order(arms)
    try:
        if jobs == 1:
            for index, item in order:
                one(index, item)
        else:
            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="noisefloor-call") as pool:
                futures = [pool.submit(one, index, item) for index, item in order]
                try:
                    for future in futures:
                        future.result()
                except BaseException:
                    # calls in flight are killed and their samples dropped; queued ones never start
                    stopping.set()
                    pool.shutdown(wait=False, cancel_futures=True)
                    for target in targets:
                        target.kill_all()
                    raise
    finally:
        for target in targets:
            target.kill_all()
        writer.close()
    return calls


async def _take(
    store: Store,
    arms: Sequence[ArmPending],
    jobs: int,
    on_sample: Callable[[Pending, RawSample], None] | None,
    on_call: Callable[[Pending], None] | None,
    on_written: OnWritten | None,
    started: list[asyncio.Task[Any]],
) -> list[int]:
    import asyncio

    this = asyncio.current_task()
    assert this is not None
    started.append(this)
    # Blocking targets run in threads: one per job, not the default handful of threads.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=jobs))
    calls = [0] * len(arms)
    writer = SampleWriter(store, on_written)
    # `jobs` workers take the calls from one iterator, so they start in this order; a task per
    # call held a coroutine for every missing repeat from the start (about 1 KB each)
    order = iter(_call_order(arms))

    async def worker() -> None:
        for index, item in order:
            arm = arms[index]
            if on_call is not None:
                on_call(item)
            sample = await arm.target.sample(
                CaseInput(case_id=item.case.case_id, input=item.input), item.repeat, jobs
            )
            calls[index] += sample.attempts
            writer.add(arm, item, sample)
            if on_sample is not None:
                on_sample(item, sample)

    tasks = [asyncio.ensure_future(worker()) for _ in range(jobs)]
    started.extend(tasks)
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        try:
            await asyncio.gather(*(arm.target.aclose() for arm in arms))
        finally:
            writer.close()
    return calls


def take_interleaved(
    store: Store,
    arms: Sequence[ArmPending],
    *,
    jobs: int = 1,
    on_sample: Callable[[Pending, RawSample], None] | None = None,
    on_call: Callable[[Pending], None] | None = None,
    on_written: OnWritten | None = None,
    executor: str | None = None,
) -> list[int]:
    """Call each arm's target for its pending repeats, interleaved, at most `jobs` at once.

    Calls start by repeat, then case, then arm (arm 0 first): repeat 0 of case 0 on every arm,
    then repeat 0 of case 1, and so on. At one job at a time the arms strictly alternate when
    they miss the same repeats.

    `executor` is a Dask scheduler's address (`dask://HOST:PORT`) whose workers make the calls
    instead, as many at once as they have threads; None calls from here.

    Returns:
        The calls made per arm, in the order of `arms`.
    """
    if not any(arm.pending for arm in arms):
        return [0] * len(arms)
    if executor is not None:
        from noisefloor.executors.dask_client import take_on_dask

        return take_on_dask(
            executor, store, arms, on_sample=on_sample, on_call=on_call, on_written=on_written
        )
    blocking = [arm.target for arm in arms if isinstance(arm.target, BlockingTarget)]
    if len(blocking) == len(arms):
        return _take_blocking(store, arms, blocking, max(1, jobs), on_sample, on_call, on_written)
    import asyncio

    started: list[asyncio.Task[Any]] = []
    try:
        return asyncio.run(
            _take(store, arms, max(1, jobs), on_sample, on_call, on_written, started)
        )
    except BaseException:
        # An interruption (Ctrl-C, SIGTERM) raised inside a task is stored on that task as well as
        # raised here; mark it seen, or the collector later logs "Task exception was never
        # retrieved" from wherever it happens to run.
        for task in started:
            if task.done() and not task.cancelled():
                task.exception()
        raise


def take_samples(
    store: Store,
    target: Target,
    pending: Sequence[Pending],
    *,
    jobs: int = 1,
    redactor: Redactor | None = None,
    on_sample: Callable[[Pending, RawSample], None] | None = None,
    on_call: Callable[[Pending], None] | None = None,
    on_written: OnWritten | None = None,
    executor: str | None = None,
    source: TargetSource | None = None,
) -> int:
    """Call the target for every pending repeat, at most `jobs` at once; return the calls made.

    `on_call` hears of each call as it starts, `on_sample` of its sample as it returns (before
    redaction: progress reads its outcome and attempts); `on_written` of each sample once its
    file is written. `executor` and `source` are as `take_interleaved`'s and `ArmPending`'s.
    """
    arm = ArmPending(target, pending, redactor or Redactor(), source)
    (calls,) = take_interleaved(
        store,
        [arm],
        jobs=jobs,
        on_sample=on_sample,
        on_call=on_call,
        on_written=on_written,
        executor=executor,
    )
    return calls
