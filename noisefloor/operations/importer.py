"""Importing a store written by the public noisefloor tool into ours: its runs, samples and pointer.

It never calls a target; public_store reads the source, and this writes only through our store.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from noisefloor.envvars import looks_secret
from noisefloor.errors import UsageError
from noisefloor.executors.redaction import REDACTED, Redactor
from noisefloor.model.records import (
    BaselinePointer,
    CaseRecord,
    ImportedFrom,
    RunRecord,
    TargetRecord,
)
from noisefloor.operations.public_inputs import taken_input
from noisefloor.pipeline.cases import case_key, scorer_uses
from noisefloor.pipeline.engine import band_tasks, run_tasks
from noisefloor.pipeline.indexing import index_run
from noisefloor.store.layout import short_hash
from noisefloor.store.public import (
    PublicInvocation,
    PublicPointer,
    PublicRun,
    PublicRunFile,
    read_public_store,
)
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.targets.base import Outcome, RawSample, decode_stream
from noisefloor.targets.command_kind import KIND as COMMAND
from noisefloor.targets.kinds import kind_of

__all__ = ["ImportResult", "import_store", "raw_sample", "target_record"]


@dataclass
class ImportResult:
    """What an import added, and what it left alone and why."""

    imported: list[RunRecord] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    samples: int = 0
    baseline: str | None = None
    warnings: list[str] = field(default_factory=list)


# -- mapping onto our records ----------------------------------------------------------------


def _timestamp(text: str) -> str:
    """The public tool's ISO time (`+00:00`) in ours (`Z`, microseconds)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def target_record(record: PublicRunFile) -> TargetRecord:
    """The target of an imported run: the same comparable spec a suite with this command and
    cwd builds, under a key of its own.

    The key hashes what the public tool knew of the target's version (command template, cwd,
    env, git sha). It is never a key our runs compute (those hash the code fingerprint too), so
    `check` never takes an imported sample for one of the current code: it samples afresh and
    compares against the imported baseline.
    """
    cwd = posixpath.normpath(record.target_cwd.replace(os.sep, "/")) or "."
    spec = {"command": list(record.target_command), "cwd": cwd}
    key = short_hash(
        {
            "kind": COMMAND.name,
            "imported": "noisefloor-public",
            "spec": spec,
            "env": dict(sorted(record.env.items())),
            "git_sha": record.git_sha,
        }
    )
    return TargetRecord(kind=COMMAND.name, key=key, spec=spec, fingerprint={})


def raw_sample(inv: PublicInvocation, jobs: int) -> RawSample:
    """One public call as our sample: stdout, stderr, parsed output, exit code, duration, argv."""
    outcome = {
        "ok": Outcome.OK,
        "error:exit": Outcome.EXIT,
        "error:timeout": Outcome.TIMEOUT,
        "error:parse": Outcome.PARSE,
    }[inv.outcome]
    error = None
    if outcome is Outcome.EXIT and inv.exit_code is None:
        # that tool records a program that could not start as error:exit with no status
        outcome = Outcome.SPAWN
        error = inv.stderr.strip() or "the program could not be started"
    elif outcome is Outcome.EXIT:
        error = f"exited with status {inv.exit_code}"
    elif outcome is Outcome.TIMEOUT:
        error = "timed out (the public tool's timeout_s)"
    elif outcome is Outcome.PARSE:
        error = "stdout is not JSON"
    return RawSample(
        kind=COMMAND.name,
        case_id=inv.case_id,
        repeat=inv.repeat,
        outcome=outcome,
        error=error,
        output=decode_stream(inv.stdout.encode("utf-8", "surrogatepass")),
        stderr=decode_stream(inv.stderr.encode("utf-8", "surrogatepass")),
        exit_code=inv.exit_code,
        argv=list(inv.argv),
        wall_s=inv.duration_s,
        concurrency=max(1, jobs),
        parsed=inv.parsed,
    )


def _used_epochs(store: Store, suite: str) -> dict[str, set[int]]:
    used: dict[str, set[int]] = {}
    for _, run_id in store.runs(suite):
        run = store.load_run(suite, run_id)
        used.setdefault(run.target.key, set()).add(run.epoch)
    return used


def _taken_inputs(suite: Suite, runs: list[PublicRun]) -> dict[tuple[str, str], str]:
    """The input each run's calls of each of the suite's cases were taken with, by (run id,
    case id); read before anything is written, so that one that cannot be read back writes
    nothing."""
    current = {c.id: c for c in suite.cases}
    return {
        (run.record.run_id, pcase.case_id): taken_input(
            run.record, pcase, run.invocations[pcase.case_id], current[pcase.case_id]
        )
        for run in runs
        for pcase in run.record.cases
        if pcase.case_id in current
    }


def _import_run(
    store: Store,
    suite: Suite,
    public: PublicRun,
    epoch: int,
    redactor: Redactor,
    inputs: dict[tuple[str, str], str],
) -> tuple[RunRecord, int, list[str]]:
    record = public.record
    target = target_record(record)
    current = {c.id: c for c in suite.cases}
    cases: list[CaseRecord] = []
    warnings: list[str] = []
    written = 0
    for pcase in record.cases:
        case = current.get(pcase.case_id)
        if case is None:
            warnings.append(
                f"run {record.run_id}: case {pcase.case_id!r} is not in the suite "
                f"{suite.path.name}; its samples were not imported"
            )
            continue
        taken = inputs[record.run_id, case.id]
        if taken != case.input:
            warnings.append(
                f"run {record.run_id}: case {case.id!r} was taken with another input than the "
                f"suite's; its samples keep the input they were taken with, so a check says "
                "`input changed since the baseline`"
            )
        key = case_key(case, taken)
        sample_dir = store.sample_dir(suite.name, case.id, target.key, key, epoch)
        for inv in public.invocations[pcase.case_id]:
            data = redactor.sample(raw_sample(inv, record.jobs).model_dump(mode="json"))
            store.write_sample(store.sample_path(sample_dir, inv.repeat), data)
            written += 1
        cases.append(
            CaseRecord(
                case_id=case.id,
                case_key=key,
                input=redactor.text(taken),
                repeats=pcase.repeats,
                sample_dir=store.rel(sample_dir),
                tags=list(case.tags),
                scorers=scorer_uses(case),
                line=case.line,
            )
        )
    run = RunRecord(
        run_id=record.run_id,
        suite=suite.name,
        suite_file=suite.path.name,
        started_at=_timestamp(record.started_at),
        finished_at=_timestamp(record.finished_at),
        harness_version=record.harness_version,
        target=target,
        epoch=epoch,
        jobs=max(1, record.jobs),
        calls=sum(len(v) for v in public.invocations.values()),
        imported_from=ImportedFrom(
            tool=f"noisefloor {record.harness_version} (public)",
            run_id=record.run_id,
            suite_hash=record.suite_hash,
            git_sha=record.git_sha,
            target_cwd=record.target_cwd,
            # a credential's value is never copied, however short (too short to redact in text)
            env={
                k: REDACTED if looks_secret(k) else redactor.text(v)
                for k, v in sorted(record.env.items())
            },
            definition_hashes={c.case_id: c.definition_hash for c in record.cases},
        ),
        cases=cases,
    )
    return run, written, warnings


def _redefined(runs: list[PublicRun]) -> list[str]:
    """Cases whose definition the public tool saw change between runs (its `redefined`)."""
    seen: dict[str, tuple[str, str]] = {}
    out = []
    for run in runs:
        for case in run.record.cases:
            first = seen.setdefault(case.case_id, (case.definition_hash, run.record.run_id))
            if first[0] != case.definition_hash:
                out.append(
                    f"case {case.case_id!r} was redefined between runs {first[1]} and "
                    f"{run.record.run_id} (the public tool's definition hash "
                    f"{first[0]} -> {case.definition_hash}); both are scored with the suite's "
                    "scorers now"
                )
                seen[case.case_id] = (case.definition_hash, run.record.run_id)
    return out


def import_store(store: Store, suite: Suite, source: Path) -> ImportResult:
    """Import every run of the suite from a public noisefloor store, and its baseline pointer.

    Runs keep their ids, so importing again adds nothing. Samples are written under the target
    key of `target_record`, one epoch per run of that key; they are scored with the suite's
    scorers and indexed in the ledger. No target is called.

    Args:
        store: Our store (the destination).
        suite: The suite the runs were taken of (inputs and scorers come from it).
        source: The public tool's store root.

    Returns:
        What was imported, what was there already, and warnings.

    Raises:
        StoreError: The source is not such a store, or is corrupt; nothing is written then.
        UsageError: The source is our own store root.
    """
    source = Path(source)
    if source.resolve() == store.root.resolve():
        raise UsageError(
            f"{source} is this store's own root",
            hint="give the public tool's store directory, and --root for where to import to",
        )
    public = read_public_store(source, suite.name)
    result = ImportResult(warnings=_redefined(public.runs))
    if public.other_suites:
        result.warnings.append(
            f"runs of other suites were left alone: {', '.join(public.other_suites)}"
        )
    redactor = Redactor(suite.redact, kind_of(suite.target).declared_secrets(suite.target))
    inputs = _taken_inputs(suite, public.runs)
    store.ensure()
    with store.lock(suite.name):
        existing = {run_id for _, run_id in store.runs(suite.name)}
        used = _used_epochs(store, suite.name)
        for run in public.runs:
            if run.record.run_id in existing:
                result.already.append(run.record.run_id)
                continue
            key = target_record(run.record).key
            epoch = max(used.get(key, {-1})) + 1
            used.setdefault(key, set()).add(epoch)
            record, written, warnings = _import_run(store, suite, run, epoch, redactor, inputs)
            result.warnings += warnings
            if not record.cases:
                continue
            store.save_run(record)
            result.imported.append(record)
            result.samples += written
        if public.pointer is not None:
            result.baseline = _import_pointer(store, suite.name, public.pointer, result)
    result.warnings += redactor.warnings()
    for record in result.imported:
        run_tasks(store, band_tasks(store, suite.name, record.cases, {}).tasks)
        index_run(store, record)
    return result


def _import_pointer(
    store: Store, suite: str, pointer: PublicPointer, result: ImportResult
) -> str | None:
    """Adopt the public baseline where the suite has none; never move an existing one."""
    ours = store.baseline(suite)
    if ours is not None and ours.run_id != pointer.run_id:
        result.warnings.append(
            f"kept the baseline {ours.run_id}; the public store's baseline is {pointer.run_id} "
            f"(`noisefloor baseline set {pointer.run_id}` moves it)"
        )
        return ours.run_id
    if ours is None:
        if not store.run_path(suite, pointer.run_id).exists():
            return None
        store.write_json(
            store.baseline_path(suite),
            BaselinePointer(suite=suite, run_id=pointer.run_id, set_at=_timestamp(pointer.set_at)),
        )
        store.write_gitignore()
    return pointer.run_id
