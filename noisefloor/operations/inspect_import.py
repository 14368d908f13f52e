"""Importing Inspect AI logs (`.eval` and `.json`, read by Inspect's `read_eval_log`): each log a
run of a suite, its samples the cases, its epochs the repeats, its scores read by the scorers.

It never calls a target: `diff`, `compare` and `report` then judge the logs offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from noisefloor.errors import StoreError, SuiteError, UsageError
from noisefloor.executors.redaction import Redactor
from noisefloor.model.records import CaseRecord, ImportedFrom, RunRecord, TargetRecord
from noisefloor.names import SAFE_NAME
from noisefloor.pipeline.cases import case_key, scorer_uses
from noisefloor.pipeline.engine import band_tasks, run_tasks
from noisefloor.pipeline.indexing import index_run
from noisefloor.store.layout import short_hash
from noisefloor.store.store import Store
from noisefloor.suite.bindings import scorers_of
from noisefloor.suite.model import Case, Suite
from noisefloor.targets.inspect_samples import KIND_NAME, raw_sample
from noisefloor.targets.inspect_task import case_input, require_inspect

__all__ = ["LogsImported", "import_logs"]


@dataclass
class LogsImported:
    """What an import of logs added, and what it left alone and why."""

    suite: str
    imported: list[RunRecord] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    samples: int = 0
    warnings: list[str] = field(default_factory=list)


def _read(path: Path) -> Any:
    require_inspect(str(path))
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise UsageError(f"no Inspect log {path}", hint="give `.eval` or `.json` log files")
    try:
        log = read_eval_log(str(path))
    except Exception as exc:
        raise StoreError(
            f"{path}: not an Inspect log Inspect can read ({type(exc).__name__}: {exc})"
        ) from None
    if not log.samples:
        raise StoreError(
            f"{path}: the log holds no samples (status {log.status})",
            hint="import a log written with samples (`inspect eval` logs them by default)",
        )
    return log


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = datetime.now(UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _stamp(created: str) -> str:
    """A log's creation time as the start of a run id."""
    return _moment(created).strftime("%Y%m%dT%H%M%S.%fZ")


def _time(text: str | None, fallback: str) -> str:
    """Inspect's ISO time (`+00:00`) in a run record's form (`Z`, microseconds)."""
    return _moment(text or fallback).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _suite_name(log: Any) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", str(log.eval.task).rsplit("/", 1)[-1]).strip("-._")
    if not name or re.fullmatch(SAFE_NAME, name) is None:
        raise UsageError(
            f"the task's name {log.eval.task!r} cannot name a suite", hint="give --suite SUITE.yaml"
        )
    return name


def _cases(log: Any, suite: Suite | None, path: Path) -> tuple[list[Case], list[str]]:
    """The log's samples as cases: the suite's (its scorers), or made from the log (one
    `inspect_score` per scorer in its results)."""
    warnings: list[str] = []
    ids = list(dict.fromkeys(str(s.id) for s in log.samples))
    if suite is not None:
        known = {c.id: c for c in suite.cases}
        missing = [i for i in ids if i not in known]
        if missing:
            warnings.append(
                f"{path.name}: samples not in suite {suite.name!r} were not imported: "
                + ", ".join(missing[:10])
            )
        return [known[i] for i in ids if i in known], warnings
    names = [s.name for s in (log.results.scores if log.results else [])]
    entries: list[str | dict[str, Any]] = (
        [{"type": "inspect_score", "scorer": n} for n in dict.fromkeys(names)]
        if names
        else ["inspect_score"]
    )
    bindings, problems = scorers_of(entries, {})
    if problems:
        raise SuiteError(f"{path}: {problems[0][1]}")
    first = {str(s.id): s for s in reversed(log.samples)}
    cases = [
        Case(
            id=i,
            input=case_input(first[i]),
            repeats=1,
            tags=(),
            scorers=tuple(bindings),
        )
        for i in ids
        if re.fullmatch(SAFE_NAME, i)
    ]
    return cases, warnings


def import_logs(
    store: Store, paths: list[Path], suite: Suite | None = None, label: str | None = None
) -> LogsImported:
    """Import each Inspect log as a run of `suite` (or of a suite named after the logs' task,
    its cases the logged samples, scored by `inspect_score` per scorer of the log).

    A log's run keeps the log's eval id, so importing it again adds nothing. Its target is
    keyed by the log's eval (never a version a check computes: a check samples afresh).

    Raises:
        StoreError: A file is not an Inspect log, or holds no samples; nothing is written then.
        UsageError: Logs of different tasks without a suite, or a task name that is no suite
            name.
    """
    logs = [(path, _read(path)) for path in paths]  # every log read before anything is written
    name = suite.name if suite is not None else _suite_name(logs[0][1])
    others = {_suite_name(log) for _, log in logs} if suite is None else {name}
    if len(others) > 1:
        raise UsageError(
            f"the logs are of several tasks ({', '.join(sorted(others))})",
            hint="import each task's logs on their own, or give --suite",
        )
    result = LogsImported(suite=name)
    redactor = Redactor(suite.redact if suite is not None else ())
    store.ensure()
    imported_ids: list[str] = []
    with store.lock(name):
        existing = {run_id for _, run_id in store.runs(name)}
        for path, log in logs:
            run_id = f"{_stamp(log.eval.created)}-{log.eval.eval_id}"
            if run_id in existing:
                result.already.append(run_id)
                imported_ids.append(run_id)
                continue
            cases, warnings = _cases(log, suite, path)
            result.warnings += warnings
            run, written = _import_log(store, name, path, log, run_id, cases, redactor)
            if not run.cases:
                continue
            store.save_run(run)
            existing.add(run_id)
            imported_ids.append(run_id)
            result.imported.append(run)
            result.samples += written
        if label is not None and imported_ids:
            store.set_label(name, label, imported_ids)
    result.warnings += redactor.warnings()
    for run in result.imported:
        run_tasks(store, band_tasks(store, name, run.cases, {}).tasks)
        index_run(store, run)
    return result


def _import_log(
    store: Store,
    suite: str,
    path: Path,
    log: Any,
    run_id: str,
    cases: list[Case],
    redactor: Redactor,
) -> tuple[RunRecord, int]:
    spec = {
        "task": f"{Path(log.eval.task_file or log.eval.task).name}@{log.eval.task}",
        "args": dict(log.eval.task_args or {}),
        "model": log.eval.model,
    }
    key = short_hash({"kind": KIND_NAME, "imported": "inspect-log", "eval_id": log.eval.eval_id})
    by_case: dict[str, list[Any]] = {}
    for sample in log.samples:
        by_case.setdefault(str(sample.id), []).append(sample)
    records: list[CaseRecord] = []
    written = 0
    for case in cases:
        samples = sorted(by_case.get(case.id, []), key=lambda s: s.epoch)
        directory = store.sample_dir(suite, case.id, key, case_key(case), 0)
        for repeat, sample in enumerate(samples):
            raw = raw_sample(
                sample,
                case.id,
                repeat,
                model=log.eval.model,
                concurrency=1,
                log=path.name,
                version=log.eval.packages.get("inspect_ai", "") if log.eval.packages else "",
            )
            data = redactor.sample(raw.model_dump(mode="json"))
            store.write_sample(store.sample_path(directory, repeat), data)
            written += 1
        records.append(
            CaseRecord(
                case_id=case.id,
                case_key=case_key(case),
                input=redactor.text(case.input),
                repeats=len(samples),
                sample_dir=store.rel(directory),
                tags=list(case.tags),
                scorers=scorer_uses(case),
                line=case.line,
            )
        )
    revision = getattr(log.eval, "revision", None)
    run = RunRecord(
        run_id=run_id,
        suite=suite,
        suite_file=path.name,
        started_at=_time(log.stats.started_at, log.eval.created),
        finished_at=_time(log.stats.completed_at, log.eval.created),
        harness_version=log.eval.packages.get("inspect_ai", "") if log.eval.packages else "",
        target=TargetRecord(kind=KIND_NAME, key=key, spec=spec, fingerprint={}),
        epoch=0,
        jobs=1,
        calls=written,
        imported_from=ImportedFrom(
            tool=f"inspect_ai {log.eval.packages.get('inspect_ai', '')}".strip(),
            run_id=log.eval.eval_id,
            suite_hash=log.eval.task_id,
            git_sha=getattr(revision, "commit", None),
            target_cwd=str(Path(log.eval.task_file or ".").parent),
        ),
        cases=records,
    )
    return run, written
