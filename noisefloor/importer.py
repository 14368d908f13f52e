"""Reading a store written by the public noisefloor tool into ours: its runs, samples and pointer.

It never calls a target, and writes only through the store (under its root), never into the source.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from noisefloor.engine import band_tasks, run_tasks
from noisefloor.errors import StoreError, UsageError
from noisefloor.indexing import index_run
from noisefloor.operations.run import case_key, scorer_uses
from noisefloor.records import BaselinePointer, CaseRecord, ImportedFrom, RunRecord, TargetRecord
from noisefloor.sampling import Redactor
from noisefloor.store import SAFE_NAME, Store, short_hash
from noisefloor.suite import Suite
from noisefloor.targets.base import Outcome, RawSample, decode_stream
from noisefloor.targets.command_kind import KIND as COMMAND
from noisefloor.targets.kinds import kind_of

__all__ = [
    "ImportResult",
    "PublicCase",
    "PublicInvocation",
    "PublicPointer",
    "PublicRun",
    "PublicRunFile",
    "PublicStore",
    "import_store",
    "raw_sample",
    "read_public_store",
    "target_record",
]

_LAYOUT = (
    "give the directory the public noisefloor used as --root (default .noisefloor): it holds "
    "runs/<run_id>/run.json, scores.json and cases/<case_id>/<repeat>.json, and "
    "baselines/<suite>.json"
)
_REPEAT_FILE = re.compile(r"^(0|[1-9][0-9]*)\.json$")


class _Public(BaseModel):
    # fields that tool may add later are ignored; the ones read here must be as it writes them
    model_config = ConfigDict(extra="ignore")


class PublicCase(_Public):
    """One entry of `cases` in the public tool's run.json."""

    case_id: str = Field(pattern=SAFE_NAME)
    definition_hash: str
    outcome: Literal["ok", "degraded", "error"]
    """ok: every repeat ok; degraded: some; error: none."""
    repeats: int = Field(ge=1)


class PublicRunFile(_Public):
    """The public tool's run.json."""

    run_id: str = Field(pattern=SAFE_NAME)
    suite_name: str
    suite_hash: str
    target_command: list[str] = Field(min_length=1)
    target_cwd: str = "."
    git_sha: str | None = None
    repeats: int
    jobs: int
    started_at: str
    finished_at: str
    harness_version: str
    env: dict[str, str] = {}
    """Absent in the tool's earlier versions."""
    cases: list[PublicCase]


class PublicInvocation(_Public):
    """The public tool's cases/<case_id>/<repeat>.json: one call of the target."""

    argv: list[str]
    case_id: str
    duration_s: float
    exit_code: int | None
    outcome: Literal["ok", "error:exit", "error:timeout", "error:parse"]
    parsed: Any = None
    repeat: int
    stderr: str
    stdout: str


class PublicPointer(_Public):
    """The public tool's baselines/<suite>.json."""

    run_id: str
    set_at: str


@dataclass
class PublicRun:
    """A run read and checked from a public store: its record and every call, by case."""

    record: PublicRunFile
    invocations: dict[str, list[PublicInvocation]]


@dataclass
class PublicStore:
    """The runs of one suite in a public store, oldest first, and its baseline pointer."""

    runs: list[PublicRun]
    pointer: PublicPointer | None
    other_suites: list[str]


@dataclass
class ImportResult:
    """What an import added, and what it left alone and why."""

    imported: list[RunRecord] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    samples: int = 0
    baseline: str | None = None
    warnings: list[str] = field(default_factory=list)


def _fail(message: str, where: Path | None = None, hint: str | None = None) -> StoreError:
    return StoreError(message, where=str(where) if where else None, hint=hint or _LAYOUT)


def _incomplete(run_dir: Path) -> str:
    return (
        f"the public tool saves run.json, then the calls, then scores.json: remove runs/"
        f"{run_dir.name} if that save never finished, and import the other runs"
    )


def _read(path: Path, model: type[Any], what: str) -> Any:
    """One JSON file of the public store, validated; every problem names the file."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise _fail(f"missing {path.name}", path.parent) from None
    except orjson.JSONDecodeError as exc:
        raise _fail(
            f"not valid JSON ({exc}): the file is truncated or corrupt",
            path,
            hint="restore it from where the store came from, or remove its run directory to "
            "import the other runs",
        ) from None
    if model is dict:
        if not isinstance(data, dict):
            raise _fail(f"expected the {what} as a JSON object, got {type(data).__name__}", path)
        return data
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        ]
        raise StoreError(
            f"not the public noisefloor's {what}",
            where=str(path),
            details=problems[:5],
            hint=_LAYOUT,
        ) from None


def _run_dirs(source: Path) -> list[Path]:
    runs = source / "runs"
    if not runs.is_dir():
        raise _fail(f"no runs/ directory in {source}: this is not a store of the public noisefloor")
    found = sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not found:
        raise _fail(f"{runs} holds no run directories: there is nothing to import")
    return found


def _invocations(run_dir: Path, case: PublicCase) -> list[PublicInvocation]:
    """Every repeat file of one case, checked against run.json as the public tool checks them."""
    case_dir = run_dir / "cases" / case.case_id
    if not case_dir.is_dir():
        raise _fail(
            f"case {case.case_id!r} of run.json has no directory", case_dir, _incomplete(run_dir)
        )
    names = sorted(p.name for p in case_dir.glob("*.json"))
    stray = [n for n in names if not _REPEAT_FILE.match(n)]
    if stray:
        raise _fail(
            f"stray file {stray[0]!r} among the repeats (0.json, 1.json, ...)",
            case_dir,
            hint="move it out of the case directory; only the repeat files belong there",
        )
    expected = {f"{i}.json" for i in range(case.repeats)}
    if set(names) != expected:
        raise _fail(
            f"case {case.case_id!r}: run.json says {case.repeats} repeat(s), found files "
            f"{', '.join(names) or 'none'}: the run is incomplete",
            case_dir,
            _incomplete(run_dir),
        )
    out = []
    for repeat in range(case.repeats):
        path = case_dir / f"{repeat}.json"
        inv: PublicInvocation = _read(path, PublicInvocation, "record of one call")
        if inv.case_id != case.case_id or inv.repeat != repeat:
            raise _fail(
                f"holds case {inv.case_id!r} repeat {inv.repeat}, not {case.case_id!r} "
                f"repeat {repeat}",
                path,
                _incomplete(run_dir),
            )
        out.append(inv)
    ok = sum(1 for inv in out if inv.outcome == "ok")
    said = "error" if ok == 0 else "ok" if ok == len(out) else "degraded"
    if said != case.outcome:
        raise _fail(
            f"case {case.case_id!r} is {case.outcome!r} in run.json but {ok}/{len(out)} of "
            f"its repeats are ok ({said!r}): the run is inconsistent",
            run_dir / "run.json",
            _incomplete(run_dir),
        )
    return out


def _read_run(run_dir: Path, record: PublicRunFile) -> PublicRun:
    if record.run_id != run_dir.name:
        raise _fail(
            f"run.json names run {record.run_id!r}, not its directory",
            run_dir,
            hint=f"rename the directory to {record.run_id}, as the public tool names it",
        )
    if not (run_dir / "scores.json").exists():
        raise _fail("missing scores.json", run_dir, _incomplete(run_dir))
    scores = _read(run_dir / "scores.json", dict, "scores by case")
    invocations = {}
    for case in record.cases:
        invocations[case.case_id] = _invocations(run_dir, case)
        listed = scores.get(case.case_id)
        if not isinstance(listed, list) or len(listed) != case.repeats:
            got = len(listed) if isinstance(listed, list) else "no"
            raise _fail(
                f"case {case.case_id!r}: {case.repeats} repeat(s) but {got} score list(s) in "
                "scores.json: the run is incomplete or inconsistent",
                run_dir / "scores.json",
                _incomplete(run_dir),
            )
    return PublicRun(record, invocations)


def read_public_store(source: Path, suite_name: str) -> PublicStore:
    """Read and check every run of one suite in a public store, before anything is written.

    Args:
        source: The public tool's store root (its `--root`, default `.noisefloor`).
        suite_name: The suite whose runs to read.

    Returns:
        The suite's runs, oldest first, its baseline pointer, and the names of other suites.

    Raises:
        StoreError: The directory is not such a store, or a file of the suite's runs is
            missing, corrupt or inconsistent.
    """
    if not source.is_dir():
        raise _fail(f"{source} is not a directory")
    runs: list[PublicRun] = []
    others: set[str] = set()
    for run_dir in _run_dirs(source):
        head: PublicRunFile = _read(run_dir / "run.json", PublicRunFile, "run record")
        if head.suite_name != suite_name:
            others.add(head.suite_name)
            continue
        runs.append(_read_run(run_dir, head))
    if not runs:
        raise StoreError(
            f"{source} holds no runs of suite {suite_name!r}"
            + (f" (it holds runs of {', '.join(sorted(others))})" if others else ""),
            hint="pass --suite the suite file whose `name:` is the one those runs were taken of",
        )
    pointer_path = source / "baselines" / f"{suite_name}.json"
    pointer: PublicPointer | None = None
    if pointer_path.exists():
        pointer = _read(pointer_path, PublicPointer, "baseline pointer")
        if pointer.run_id not in {r.record.run_id for r in runs}:
            raise _fail(
                f"points at run {pointer.run_id!r}, which is not under runs/",
                pointer_path,
                hint="restore that run, or delete the pointer to import the runs without one",
            )
    return PublicStore(runs, pointer, sorted(others))


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


def _import_run(
    store: Store, suite: Suite, public: PublicRun, epoch: int, redactor: Redactor
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
        key = case_key(case)
        sample_dir = store.sample_dir(suite.name, case.id, target.key, key, epoch)
        for inv in public.invocations[pcase.case_id]:
            data = redactor.apply(raw_sample(inv, record.jobs).model_dump(mode="json"))
            store.write_sample(store.sample_path(sample_dir, inv.repeat), data)
            written += 1
        cases.append(
            CaseRecord(
                case_id=case.id,
                case_key=key,
                input=redactor.text(case.input),
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
            env={k: redactor.text(v) for k, v in sorted(record.env.items())},
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
            record, written, warnings = _import_run(store, suite, run, epoch, redactor)
            result.warnings += warnings
            if not record.cases:
                continue
            store.save_run(record)
            result.imported.append(record)
            result.samples += written
        if public.pointer is not None:
            result.baseline = _import_pointer(store, suite.name, public.pointer, result)
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
