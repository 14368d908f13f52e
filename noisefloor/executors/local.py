"""The local executor: the target calls made from this process, in threads for targets that
block (a command's) and on an asyncio loop for the others.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from noisefloor.executors.base import ArmPending, Pending, SampleHooks
from noisefloor.executors.schedule import call_order
from noisefloor.executors.writer import SampleWriter
from noisefloor.store.store import Store
from noisefloor.targets.base import BlockingTarget, CaseInput

if TYPE_CHECKING:
    import asyncio

__all__ = ["LOCAL", "LocalExecutor"]


@dataclass(frozen=True)
class LocalExecutor:
    """Takes samples here, at most `jobs` calls at once: each call in a thread of its own when
    every arm's target blocks, with no event loop between a call and its sample; otherwise
    `jobs` asyncio workers taking the calls in order."""

    def take(
        self, store: Store, arms: Sequence[ArmPending], hooks: SampleHooks, jobs: int, seed: int
    ) -> list[int]:
        order = call_order(arms, seed)
        blocking = [arm.target for arm in arms if isinstance(arm.target, BlockingTarget)]
        if len(blocking) == len(arms):
            return _take_blocking(store, arms, order, blocking, jobs, hooks)
        import asyncio  # a command suite's run never starts an event loop

        started: list[asyncio.Task[Any]] = []
        try:
            return asyncio.run(_take(store, arms, order, jobs, hooks, started))
        except BaseException:
            # An interruption (Ctrl-C, SIGTERM) raised inside a task is stored on that task as
            # well as raised here; mark it seen, or the collector later logs "Task exception was
            # never retrieved" from wherever it happens to run.
            for task in started:
                if task.done() and not task.cancelled():
                    task.exception()
            raise


#: The executor of a run that names none.
LOCAL = LocalExecutor()


def _take_blocking(
    store: Store,
    arms: Sequence[ArmPending],
    order: list[tuple[int, Pending]],
    targets: Sequence[BlockingTarget],
    jobs: int,
    hooks: SampleHooks,
) -> list[int]:
    """`_take` for targets that block: each call of `order` in a thread of its own (at one job,
    this one), without an event loop's hand-offs between a call and its sample."""
    calls = [0] * len(arms)
    writer = SampleWriter(store, hooks)
    lock = threading.Lock()
    stopping = threading.Event()

    def one(index: int, item: Pending) -> None:
        if stopping.is_set():
            return
        with lock:
            hooks.called(item)
        case = CaseInput(case_id=item.case.case_id, input=item.input)
        sample = targets[index].sample_blocking(case, item.repeat, jobs)
        with lock:
            if stopping.is_set():  # killed by the stop: not a sample of the program
                return
            calls[index] += sample.attempts
            writer.add(arms[index], item, sample)
            hooks.sampled(item, sample)

    try:
        if jobs == 1:
            for index, item in order:
                one(index, item)
        else:
            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="noisefloor-call") as pool:
                futures = [pool.submit(one, index, item) for index, item in order]
                try:
                    # the first call to fail stops the take, whichever call started first
                    done, _ = wait(futures, return_when=FIRST_EXCEPTION)
                    for future in done:
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
    order: list[tuple[int, Pending]],
    jobs: int,
    hooks: SampleHooks,
    started: list[asyncio.Task[Any]],
) -> list[int]:
    import asyncio

    this = asyncio.current_task()
    assert this is not None
    started.append(this)
    # Blocking targets run in threads: one per job, not the default handful of threads.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=jobs))
    calls = [0] * len(arms)
    writer = SampleWriter(store, hooks)
    # `jobs` workers take the calls from one iterator, so they start in this order; a task per
    # call held a coroutine for every missing repeat from the start (about 1 KB each)
    calls_left = iter(order)

    async def worker() -> None:
        for index, item in calls_left:
            arm = arms[index]
            hooks.called(item)
            sample = await arm.target.sample(
                CaseInput(case_id=item.case.case_id, input=item.input), item.repeat, jobs
            )
            calls[index] += sample.attempts
            writer.add(arm, item, sample)
            hooks.sampled(item, sample)

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
