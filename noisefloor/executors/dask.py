"""The Dask executor: one task per pending sample, made by a cluster's workers (`dask_worker`);
this process alone writes the store and the ledger, in arrival order.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from noisefloor.errors import ExecutorError, TargetConfigError, UsageError
from noisefloor.executors.base import ArmPending, Pending, SampleHooks
from noisefloor.executors.dask_worker import sample_on_worker
from noisefloor.executors.schedule import call_order
from noisefloor.executors.writer import SampleWriter
from noisefloor.store.store import Store
from noisefloor.targets.base import RawSample

__all__ = ["DaskExecutor"]

#: Seconds to reach the scheduler, and for its first worker to join.
CONNECT_TIMEOUT_S = 30


def _client(executor: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            f"--executor {executor} needs Dask's distributed package, which is not installed",
            hint="pip install 'noisefloor[dask]' (on the client and on every worker)",
        ) from None
    address = "tcp://" + executor.removeprefix("dask://")
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {executor}: {exc}",
            hint="start one (`dask scheduler`) and its workers (`dask worker HOST:PORT`), "
            "or drop --executor to take the samples here",
        ) from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:
        client.close()
        raise ExecutorError(
            f"the Dask scheduler at {executor} has no worker",
            hint=f"start workers: `dask worker {address}` on each machine",
        ) from None
    return client


def _lost(executor: str, written: int, total: int) -> ExecutorError:
    return ExecutorError(
        f"lost the Dask scheduler at {executor} after {written} of {total} samples",
        hint="every sample written is kept: start the scheduler again and rerun (it takes only "
        "the missing samples), or drop --executor to take them here",
    )


def _raise_error_of(future: Any, item: Pending) -> None:
    """Raise a failed task's error: the one a worker raised, or the cluster's giving up."""
    from distributed import KilledWorker

    try:
        future.result()
    except KilledWorker as exc:
        raise ExecutorError(
            f"the cluster gave up on case {item.case.case_id!r} repeat {item.repeat}: "
            f"the workers running it died ({exc})",
            hint="see the workers' logs (memory limits, a target that kills its parent); every "
            "sample written is kept, and the next run takes only the missing ones",
        ) from None


@dataclass(frozen=True)
class DaskExecutor:
    """Takes samples on the Dask cluster whose scheduler is at `address` (`dask://HOST:PORT`)."""

    address: str

    def take(
        self, store: Store, arms: Sequence[ArmPending], hooks: SampleHooks, jobs: int, seed: int
    ) -> list[int]:
        """Submit every arm's pending samples to the cluster, in the order `seed` draws
        (`call_order`, as Dask's priorities); write each as it arrives. Returns the calls made
        per arm. The workers make as many calls at once as they have threads, whatever `jobs`
        says.

        A worker that dies mid-sample has its tasks rerun by Dask; a sample that arrives twice
        is written once; an interruption cancels the tasks not yet done.

        Raises:
            UsageError: An arm has no source a worker can build (an in-process target).
            TargetConfigError: A worker computes another target version than this process.
            ExecutorError: The scheduler cannot be reached or went away.
        """
        executor = self.address
        for arm in arms:
            if arm.source is None:
                raise UsageError(
                    f"a {arm.target.kind} target runs in this process: --executor {executor} "
                    "takes samples of command and http targets only",
                    hint="drop --executor",
                )
        from distributed import as_completed  # Dask is imported only when a cluster is used

        client = _client(executor)
        run = uuid.uuid4().hex
        concurrency = max(1, sum(client.nthreads().values()))
        order = call_order(arms, seed)
        submitted: dict[str, tuple[int, Pending]] = {}
        futures: dict[str, Any] = {}
        calls = [0] * len(arms)
        written: set[str] = set()
        writer = SampleWriter(store, hooks)
        arrivals = as_completed(loop=client.loop, with_results=True, raise_errors=False)
        try:
            for rank, (index, item) in enumerate(order):
                future = client.submit(
                    sample_on_worker,
                    arms[index].source,
                    run,
                    item.case.case_id,
                    item.input,
                    item.repeat,
                    concurrency,
                    key=f"noisefloor-{run}-{rank}",
                    priority=len(order) - rank,
                    pure=False,
                )
                submitted[future.key] = (index, item)
                futures[future.key] = future
                arrivals.add(future)
            for future, result in arrivals:
                index, item = submitted[future.key]
                if future.status == "cancelled":
                    raise _lost(executor, len(written), len(order))
                if future.status == "error":
                    _raise_error_of(future, item)
                # once fetched, the cluster forgets it: a worker that dies later holds nothing of
                # this run that it would have to take again
                futures.pop(future.key).release()
                if "refused" in result:
                    raise TargetConfigError(str(result["refused"]))
                if item.file in written:
                    continue
                written.add(item.file)
                sample = RawSample.model_validate(result["sample"])
                hooks.called(item)
                calls[index] += sample.attempts
                writer.add(arms[index], item, sample)
                hooks.sampled(item, sample)
        finally:
            try:
                arrivals.clear()
                client.cancel(list(futures.values()))
                client.close()
            finally:
                writer.close()
        return calls
