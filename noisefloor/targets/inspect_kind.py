"""The Inspect kind: a suite's `target.inspect` (`targets/inspect_spec.py`), its cases the task's
samples, versioned by the task's files, its model and generation settings; its runs checked.

The task is loaded by `targets/inspect_task.py` and run by `targets/inspect_eval.py`, both of
which import inspect_ai only when used: a suite of another kind never loads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from noisefloor.errors import TargetConfigError
from noisefloor.model.records import TargetRecord
from noisefloor.store.fingerprint import code_fingerprint
from noisefloor.targets.base import Outcome
from noisefloor.targets.inspect_samples import KIND_NAME
from noisefloor.targets.inspect_spec import LEDGER_FIELDS, InspectFields, InspectSpec
from noisefloor.targets.inspect_task import TaskSamples, load_task, split_task
from noisefloor.targets.kinds import TargetKind, secrets_in
from noisefloor.targets.source import BuiltTarget, TargetPlace

__all__ = ["KIND", "InspectKind"]

#: Generation settings that say how fast, not what: left out of the version.
_NOT_VERSION = ("max_connections", "max_retries", "timeout", "attempt_timeout", "batch")

#: Calls one `eval()` takes at most when neither `--jobs` nor NOISEFLOOR_JOBS says: a look of
#: 200 samples at 5 repeats in one eval (how many run at once is Inspect's `max_samples`).
INSPECT_JOBS = 1000


def _spec(spec: BaseModel) -> InspectSpec:
    assert isinstance(spec, InspectFields) and spec.inspect is not None
    return spec.inspect


class InspectKind(TargetKind):
    """An Inspect AI task: each case one of its samples, each repeat one epoch of it."""

    name = KIND_NAME
    fields = InspectFields
    choice = "`inspect` (an Inspect AI task)"
    output_name = "completion"
    fingerprints_code = True
    default_jobs = INSPECT_JOBS
    checks_runs = True
    provides = frozenset({"latency", "usage", "scores"})
    ledger_fields = LEDGER_FIELDS

    def selected(self, spec: BaseModel) -> bool:
        """A `target` with `inspect`."""
        return isinstance(spec, InspectFields) and spec.inspect is not None

    def task(self, spec: BaseModel, place: TargetPlace) -> TaskSamples:
        """The suite's task as loaded (its samples, its scorers' names), with `samples:` checked.

        Raises:
            TargetConfigError: Inspect is not installed, the task does not load, or `samples:`
                names a sample the task does not have.
        """
        inspect = _spec(spec)
        file, name = split_task(inspect.task)
        task = load_task(place.base_dir / file, name, inspect.args, str(place.suite_path))
        for wanted in inspect.samples or []:
            if str(wanted) not in task.ids:
                known = ", ".join(list(task.ids)[:10]) + (", ..." if len(task.ids) > 10 else "")
                raise TargetConfigError(
                    f"target.inspect.samples: task {task.name!r} has no sample {wanted!r} "
                    f"(its ids: {known})",
                    where=str(place.suite_path),
                )
        return task

    def cases(self, spec: BaseModel, place: TargetPlace) -> list[dict[str, Any]]:
        """The task's samples (those `samples:` lists, or all) as cases: id and input."""
        task = self.task(spec, place)
        chosen = [str(s) for s in _spec(spec).samples or task.ids]
        return [{"id": case_id, "input": task.inputs[case_id]} for case_id in chosen]

    def default_scorers(self, spec: BaseModel, place: TargetPlace) -> list[str | dict[str, Any]]:
        """One `inspect_score` per scorer of the task (the sample's only score when their
        names cannot be read)."""
        names = self.task(spec, place).scorers
        if not names:
            return ["inspect_score"]
        return [{"type": "inspect_score", "scorer": name} for name in names]

    def build(self, spec: BaseModel, place: TargetPlace) -> BuiltTarget:
        """The task against its model, versioned by the task's reference and arguments, the
        model and its settings, the generation settings and the task's files."""
        from noisefloor.targets.inspect_eval import InspectTarget

        inspect = _spec(spec)
        task = self.task(spec, place)
        file, _ = split_task(inspect.task)
        task_path = place.base_dir / file
        generate = _checked_generate(inspect.generate, str(place.suite_path))
        comparable: dict[str, Any] = {
            "task": f"{file}@{task.name}",
            "args": inspect.args,
            "model": inspect.model,
        }
        settings = {
            "model_base_url": inspect.model_base_url,
            "model_args": inspect.model_args,
            "generate": {k: v for k, v in sorted(generate.items()) if k not in _NOT_VERSION},
        }
        code = code_fingerprint(
            base_dir=place.base_dir,
            globs=inspect.fingerprint,
            argv=[str(task_path)],
            cwd=task_path.parent,
            exclude=place.not_target(),
        )
        key = self.version_key(comparable, settings, code.entries)
        root = place.store_root if place.store_root is not None else place.base_dir
        target = InspectTarget(
            task=f"{task_path}@{task.name}",
            task_args=inspect.args,
            model=inspect.model,
            model_base_url=inspect.model_base_url,
            model_args=inspect.model_args,
            generate=generate,
            max_samples=inspect.max_samples,
            sample_ids=task.ids,
            store_root=root,
            where=str(place.suite_path),
            key=key,
            spec=comparable,
        )
        record = TargetRecord(kind=self.name, key=key, spec=comparable, fingerprint=code.entries)
        # the model's keys live in the environment, as Inspect's providers read them
        return BuiltTarget(target, record, secrets_in(os.environ, ambient=True), code.tracked)

    def run_fact(self, sample: Any) -> tuple[bool, bool, str | None]:
        """Whether the sample raised, whether it got any score, and its error."""
        envelope = sample.envelope or {}
        return sample.outcome is Outcome.EXIT, bool(envelope.get("scores")), sample.error

    def check_run(self, facts: Iterator[tuple[bool, bool, str | None]]) -> dict[str, int]:
        """Refuse a run that measured nothing: every sample raised, or none got a score.

        Raises:
            TargetConfigError: Such a run (exit 3): nothing of it is saved, nor made a baseline.
        """
        total = raised = scored = 0
        first: str | None = None
        for did_raise, got_score, error in facts:
            total += 1
            raised += did_raise
            scored += got_score
            first = first or error
        if total and raised == total:
            raise TargetConfigError(
                f"every sample of the Inspect task raised: {first}",
                hint="fix the task (`inspect eval` shows the traceback); nothing was compared",
            )
        if total and not scored:
            raise TargetConfigError(
                "the Inspect task's scorers gave no sample a score (a scorer returned None)",
                hint="make each scorer return a Score; nothing was compared",
            )
        return {}

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        """The model the eval ran against."""
        envelope = sample.get("envelope")
        return {"model": envelope.get("model")} if isinstance(envelope, dict) else {}


def _checked_generate(generate: dict[str, Any], where: str) -> dict[str, Any]:
    """The generation settings, checked against Inspect's `GenerateConfig`.

    Raises:
        TargetConfigError: A setting Inspect does not know, or a bad value.
    """
    from inspect_ai.model import GenerateConfig
    from pydantic import ValidationError

    try:
        config = GenerateConfig(**generate)
    except (ValidationError, TypeError) as exc:
        first = str(exc).strip().splitlines()
        raise TargetConfigError(
            f"target.inspect.generate: {' '.join(first[:3])}",
            where=where,
            hint="give Inspect's GenerateConfig fields (temperature, max_tokens, seed, ...)",
        ) from None
    return config.model_dump(exclude_none=True, include=set(generate))


KIND = InspectKind()
