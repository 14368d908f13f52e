"""The Inspect target: a take's calls gathered into as few `eval()` calls as Inspect allows (every
case that needs the same number of repeats in one call: its sample ids, that many epochs).

Calls that arrive together (every worker of a take starts at once) wait for one batch; `eval()`
runs in a daemon thread of its own, one at a time in the process, its logs and data under the
store root.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from noisefloor.errors import TargetConfigError
from noisefloor.targets.base import CaseInput, Outcome, RawSample, VersionedTarget
from noisefloor.targets.inspect_samples import KIND_NAME, raw_sample
from noisefloor.targets.inspect_task import inspect_dirs

__all__ = ["EvalCall", "InspectTarget", "eval_calls"]

#: Inspect keeps process-wide state while an eval runs: two are never run at once here.
_ONE_EVAL = threading.Lock()

#: Every `eval()` call made in this process (its sample ids and epochs): what the tests count.
eval_calls: list[EvalCall] = []


@dataclass(frozen=True)
class EvalCall:
    """One `eval()` call: the samples it took, and how many epochs of each."""

    sample_ids: tuple[str | int, ...]
    epochs: int


@dataclass
class _Pending:
    case: CaseInput
    repeat: int
    future: asyncio.Future[RawSample] = field(repr=False)


class InspectTarget(VersionedTarget):
    """An Inspect task against a model: one sample is one epoch of one of its samples."""

    kind = KIND_NAME

    def __init__(
        self,
        *,
        task: str,
        task_args: dict[str, Any],
        model: str,
        model_base_url: str | None,
        model_args: dict[str, Any],
        generate: dict[str, Any],
        max_samples: int | None,
        sample_ids: dict[str, str | int],
        store_root: Path,
        where: str,
        key: str,
        spec: dict[str, Any],
    ) -> None:
        super().__init__(key, spec)
        self._eval_args: dict[str, Any] = {
            "tasks": task,
            "task_args": task_args,
            "model": model,
            "model_base_url": model_base_url,
            "model_args": model_args,
            "max_samples": max_samples,
            **generate,
        }
        self._model = model
        self._ids = sample_ids
        self._root = store_root
        self._where = where
        self._queue: list[_Pending] = []
        self._batch: asyncio.Task[None] | None = None

    async def sample(self, case: CaseInput, repeat: int, concurrency: int) -> RawSample:
        """One epoch of the case's sample, taken in one `eval()` with every call that arrives
        with it."""
        future: asyncio.Future[RawSample] = asyncio.get_running_loop().create_future()
        self._queue.append(_Pending(case, repeat, future))
        if self._batch is None:
            self._batch = asyncio.ensure_future(self._take_batch())
        return await future

    async def _take_batch(self) -> None:
        # every worker of a take starts on the same turn of the loop: wait until no more arrive
        seen = -1
        while seen != len(self._queue):
            seen = len(self._queue)
            await asyncio.sleep(0)
        batch, self._queue, self._batch = self._queue, [], None
        loop = asyncio.get_running_loop()
        done: asyncio.Future[list[RawSample]] = loop.create_future()

        def settle(samples: list[RawSample] | None, exc: BaseException | None) -> None:
            if done.done():
                return
            if exc is not None:
                done.set_exception(exc)
            else:
                done.set_result(samples or [])

        def run() -> None:
            try:
                samples, exc = self._eval_batch(batch), None
            except BaseException as raised:
                samples, exc = None, raised
            # the loop is gone when the take was interrupted: the eval's samples go with it
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, samples, exc)

        # a daemon thread: an interrupted take exits without waiting for the eval to end
        threading.Thread(target=run, name="noisefloor-inspect-eval", daemon=True).start()
        try:
            samples = await done
        except BaseException as exc:
            for item in batch:
                if item.future.done():
                    continue
                if isinstance(exc, asyncio.CancelledError):
                    item.future.cancel()
                else:
                    item.future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for item, sample in zip(batch, samples, strict=True):
            if not item.future.done():
                item.future.set_result(sample)

    def _eval_batch(self, batch: list[_Pending]) -> list[RawSample]:
        """The samples of `batch`, in its order: one `eval()` per distinct count of repeats a
        case needs (one in all, in a look where every case takes the same number)."""
        wanted: dict[str, list[int]] = defaultdict(list)
        for item in batch:
            wanted[item.case.case_id].append(item.repeat)
        by_count: dict[int, list[str]] = defaultdict(list)
        for case_id, repeats in wanted.items():
            repeats.sort()
            by_count[len(repeats)].append(case_id)
        taken: dict[tuple[str, int], RawSample] = {}
        for epochs, case_ids in sorted(by_count.items()):
            taken.update(self._eval(case_ids, epochs, wanted, len(batch)))
        return [taken[item.case.case_id, item.repeat] for item in batch]

    def _eval(
        self, case_ids: list[str], epochs: int, wanted: dict[str, list[int]], concurrency: int
    ) -> dict[tuple[str, int], RawSample]:
        from inspect_ai import __version__, eval

        unknown = [c for c in case_ids if c not in self._ids]
        if unknown:
            raise TargetConfigError(
                f"target.inspect: the task has no sample {unknown[0]!r}", where=self._where
            )
        ids = tuple(self._ids[c] for c in case_ids)
        with _ONE_EVAL, inspect_dirs(self._root) as log_dir:
            eval_calls.append(EvalCall(ids, epochs))
            try:
                logs = eval(
                    **self._eval_args,
                    sample_id=list(ids),
                    epochs=epochs,
                    log_dir=str(log_dir),
                    display="none",
                    fail_on_error=False,
                    score=True,
                )
            except Exception as exc:
                raise TargetConfigError(
                    f"Inspect refused to run the task: {type(exc).__name__}: {_line(exc)}",
                    where=self._where,
                    hint="check target.inspect (task, args, model, generate); "
                    "`inspect eval` with the same settings shows the traceback",
                ) from None
        (log,) = logs
        if log.status != "success" and log.error is not None:
            raise TargetConfigError(
                f"the Inspect task failed: {_line(log.error.message)}",
                where=self._where,
                hint=f"its log is {log.location}",
            )
        case_of = {self._ids[c]: c for c in case_ids}
        where_log = _relative(log.location, self._root)
        out: dict[tuple[str, int], RawSample] = {}
        for sample in log.samples or []:
            case_id = case_of.get(sample.id)
            if case_id is None or not 1 <= sample.epoch <= epochs:
                continue
            repeat = wanted[case_id][sample.epoch - 1]
            out[case_id, repeat] = raw_sample(
                sample,
                case_id,
                repeat,
                model=self._model,
                concurrency=concurrency,
                log=where_log,
                version=__version__,
            )
        for case_id in case_ids:  # a sample the log lacks (an eval cancelled part way)
            for repeat in wanted[case_id]:
                out.setdefault((case_id, repeat), _lost(case_id, repeat, log.location))
        return out

    async def aclose(self) -> None:
        """Nothing to release: each eval closes its own models."""


def _line(message: object) -> str:
    """Inspect's message on one line, without its console markup (`[bold]...[/bold]`)."""
    text = " ".join(line.strip() for line in str(message).splitlines() if line.strip())
    text = re.sub(r"\[/?(?:bold|italic|red|yellow|green|blue|dim)\]", "", text)
    return (text[:400] + "...") if len(text) > 400 else text or "(no message)"


def _relative(location: str, root: Path) -> str:
    try:
        return Path(location).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return location


def _lost(case_id: str, repeat: int, location: str) -> RawSample:
    return RawSample(
        kind=KIND_NAME,
        case_id=case_id,
        repeat=repeat,
        outcome=Outcome.INFRA,
        error=f"Inspect's log {Path(location).name} holds no such epoch of the sample",
    )
