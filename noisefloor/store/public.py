"""The public noisefloor tool's store as it writes it: the models of its files, and reading them,
checked, from disk (runs, their calls and the baseline pointer); nothing here writes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from noisefloor.errors import StoreError
from noisefloor.names import SAFE_NAME

__all__ = [
    "PublicCase",
    "PublicInvocation",
    "PublicPointer",
    "PublicRun",
    "PublicRunFile",
    "PublicStore",
    "read_public_store",
]

_LAYOUT = (
    "give the directory the public noisefloor used as --root (default .noisefloor): it holds "
    "runs/<run_id>/run.json, scores.json and cases/<case_id>/<repeat>.json, and "
    "baselines/<suite>.json"
)
_REPEAT_FILE = re.compile(r"^(0|[1-9][0-9]*)\.json$")


class _Public(BaseModel):
    # fields that tool may add later are ignored; the ones read here must be as it writes them
    model_config = ConfigDict(extra="ignore", defer_build=True)


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
