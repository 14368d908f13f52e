"""An Inspect AI task as noisefloor sees it before any eval: the extra that runs it, its file and
name, its samples as cases, its scorers' names, and the directories under the store root that
Inspect writes to.

Nothing here imports inspect_ai until a task is loaded; loading one runs its task function.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

from noisefloor.errors import TargetConfigError
from noisefloor.names import SAFE_NAME

__all__ = [
    "EXTRA_HINT",
    "TaskSamples",
    "case_input",
    "inspect_dirs",
    "load_task",
    "require_inspect",
    "split_task",
]

#: What a user without the extra is told to run.
EXTRA_HINT = "install the extra that runs Inspect AI tasks: pip install 'noisefloor[inspect]'"


def require_inspect(where: str | None = None) -> ModuleType:
    """inspect_ai, imported.

    Raises:
        TargetConfigError: It is not installed (exit 3, naming the extra).
    """
    try:
        import inspect_ai
    except ImportError as exc:
        raise TargetConfigError(
            f"this needs Inspect AI, and it cannot be imported ({exc})",
            where=where,
            hint=EXTRA_HINT,
        ) from None
    return inspect_ai


def split_task(task: str) -> tuple[str, str | None]:
    """`file.py@name` as its file and name (None: the file's one task)."""
    file, at, name = task.rpartition("@")
    return (file, name) if at and file else (task, None)


@contextlib.contextmanager
def inspect_dirs(store_root: Path) -> Iterator[Path]:
    """Inspect's own data and cache directories (traces, its sample buffer, the viewer's notes),
    which it puts under the user's home through platformdirs, kept under `store_root` while
    the block runs; yields the directory its logs go to."""
    base = store_root / "inspect"
    saved = {name: os.environ.get(name) for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME")}
    os.environ["XDG_DATA_HOME"] = str(base / "data")
    os.environ["XDG_CACHE_HOME"] = str(base / "cache")
    try:
        yield base / "logs"
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def case_input(sample: Any) -> str:
    """What a sample gives its model, as a case's input (its key): the input text, or the JSON
    of its messages (without their random ids), and its choices when it has any."""
    raw = sample.input
    if isinstance(raw, str) and not sample.choices:
        return raw
    messages = (
        raw
        if isinstance(raw, str)
        else [m.model_dump(mode="json", exclude={"id"}, exclude_none=True) for m in raw]
    )
    shown: dict[str, Any] = {"input": messages}
    if sample.choices:
        shown["choices"] = list(sample.choices)
    return orjson.dumps(shown, option=orjson.OPT_SORT_KEYS).decode()


@dataclass(frozen=True)
class TaskSamples:
    """A task as loaded: its name, its samples' ids by case id with their inputs, and the names
    its scorers give their scores."""

    name: str
    ids: dict[str, str | int]
    """Each case id (the sample id as text) and the sample's id as Inspect has it."""
    inputs: dict[str, str]
    scorers: tuple[str, ...]


_loaded: dict[bytes, TaskSamples] = {}


def load_task(path: Path, name: str | None, args: dict[str, Any], where: str) -> TaskSamples:
    """The task `name` of the file `path`, made with `args` in the file's directory (as Inspect
    makes it), and its samples; loaded once per process for the same file content and args.

    Raises:
        TargetConfigError: No such file or task, the task function raised, or a sample's id
            cannot name a case.
    """
    require_inspect(where)
    if not path.is_file():
        raise TargetConfigError(
            f"target.inspect.task: no task file {path}",
            where=where,
            hint="give the task file relative to the suite file, as `tasks.py@task_name`",
        )
    content = hashlib.sha256(path.read_bytes()).hexdigest()
    cache = orjson.dumps([str(path), content, name, args], default=str)
    if cache not in _loaded:
        _loaded[cache] = _load(path, name, args, where)
    return _loaded[cache]


def _task_function(path: Path, name: str | None, where: str) -> tuple[str, Any]:
    from inspect_ai import list_tasks

    names = [info.name for info in list_tasks(path.name, root_dir=path.parent)]
    if name is None and len(names) != 1:
        raise TargetConfigError(
            f"target.inspect.task: {path.name} holds {len(names)} tasks "
            f"({', '.join(names) or 'none'}): name one",
            where=where,
            hint=f"write `{path.name}@TASK`",
        )
    chosen = name or names[0]
    if chosen not in names:
        raise TargetConfigError(
            f"target.inspect.task: {path.name} has no task {chosen!r} "
            f"(it has: {', '.join(names) or 'none'})",
            where=where,
        )
    module = _module(path, where)
    function = getattr(module, chosen, None)
    if function is None:  # a task renamed by `@task(name=...)`: find it by its registered name
        function = next(
            (
                f
                for f in vars(module).values()
                if getattr(f, "__registry_info__", None)
                and getattr(f.__registry_info__, "name", None) == chosen
            ),
            None,
        )
    if not callable(function):
        raise TargetConfigError(
            f"target.inspect.task: cannot find the function of task {chosen!r} in {path.name}",
            where=where,
        )
    return chosen, function


def _module(path: Path, where: str) -> ModuleType:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(f"_noisefloor_task_{digest}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # in sys.modules as an import puts it: a dataclass or pickle in the task looks itself up there
    sys.modules[spec.name] = module
    with _in_directory(path.parent):
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise TargetConfigError(
                f"target.inspect.task: importing {path.name} raised {type(exc).__name__}: {exc}",
                where=where,
            ) from None
    return module


@contextlib.contextmanager
def _in_directory(directory: Path) -> Iterator[None]:
    """The task's directory as the working directory and first on `sys.path`, as Inspect runs it."""
    sys.path.insert(0, str(directory))
    try:
        with contextlib.chdir(directory):
            yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(directory))


def _load(path: Path, name: str | None, args: dict[str, Any], where: str) -> TaskSamples:
    chosen, function = _task_function(path, name, where)
    with _in_directory(path.parent):
        try:
            task = function(**args)
            samples = list(task.dataset)
        except Exception as exc:
            raise TargetConfigError(
                f"target.inspect: task {chosen!r} raised {type(exc).__name__}: {exc}",
                where=where,
                hint="run it alone with `inspect eval` to see the traceback",
            ) from None
    ids: dict[str, str | int] = {}
    inputs: dict[str, str] = {}
    for index, sample in enumerate(samples):
        sample_id = sample.id if sample.id is not None else index + 1  # as Inspect numbers them
        case_id = str(sample_id)
        if not _safe(case_id):
            raise TargetConfigError(
                f"target.inspect: sample id {sample_id!r} of task {chosen!r} cannot name a case "
                "(it becomes a file name)",
                where=where,
                hint="give the task's samples ids of letters, digits, '.', '_' and '-'",
            )
        if case_id in ids:
            raise TargetConfigError(
                f"target.inspect: task {chosen!r} has two samples of id {case_id!r}", where=where
            )
        ids[case_id] = sample_id
        inputs[case_id] = case_input(sample)
    return TaskSamples(chosen, ids, inputs, _scorer_names(task))


def _safe(case_id: str) -> bool:
    return re.fullmatch(SAFE_NAME, case_id) is not None and len(case_id) <= 128


def _scorer_names(task: Any) -> tuple[str, ...]:
    """The names Inspect gives the task's scores (the scorers' registered names, unqualified);
    none when they cannot be read (then the sample's only score is read)."""
    try:
        from inspect_ai._util.registry import registry_unqualified_name

        names = [registry_unqualified_name(s) for s in task.scorer or []]
    except Exception:
        return ()
    return tuple(names) if len(set(names)) == len(names) else ()
