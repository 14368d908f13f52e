"""Loading a suite: its YAML (or a JSONL cases file alone) read, filled in from the environment,
overridden by endpoint flags, and validated with its cases and scorers, every problem at once.

The files are read and problems worded by `suite/source.py`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from noisefloor.envvars import expand_value
from noisefloor.errors import SuiteError
from noisefloor.scorers.registry import REGISTRY, UnknownScorer
from noisefloor.suite.bindings import CaseScorers, scorers_of, unserved
from noisefloor.suite.model import (
    Case,
    CaseSpec,
    Defaults,
    Suite,
    SuiteFile,
    is_slug,
    known_keys,
    suite_model,
)
from noisefloor.suite.source import (
    LineMap,
    Loc,
    jsonl_cases,
    plain_error,
    read_yaml,
    render_problems,
    where,
)
from noisefloor.targets.kinds import TargetKind, kind_for, kind_of, kinds, spec_model
from noisefloor.targets.source import TargetPlace
from noisefloor.targets.templating import placeholder_problems

if TYPE_CHECKING:
    from noisefloor.targets.endpoint_flags import EndpointFlags

__all__ = ["cases_suite", "load_suite", "load_suite_plugins"]


def _under(loc: Loc, failed: set[Loc]) -> bool:
    """Whether `loc` lies in a value whose `${...}` failed: its problem is already reported."""
    return any(loc[: len(bad)] == bad for bad in failed)


def _literal(loc: Loc) -> bool:
    """The suite's name and its case ids key the store, so they are never filled in."""
    return loc == ("name",) or (len(loc) == 3 and loc[0] == "cases" and loc[2] == "id")


def _template_problems(target: Any, kind: TargetKind | None) -> list[tuple[tuple[Any, ...], str]]:
    """Unknown placeholders in the target's templates, read from the raw data so that they are
    reported together with every other problem, whatever else is wrong with the target (only
    `kind` has templates in it, when a kind is given)."""
    if not isinstance(target, dict):
        return []
    templates = [place for k in ([kind] if kind else kinds()) for place in k.templates(target)]
    return [
        ((*base, *loc), msg)
        for base, value in templates
        for loc, msg in placeholder_problems(value)
    ]


def _target_kind(spec: SuiteFile | None, target: Any, kind: TargetKind | None) -> TargetKind | None:
    """The kind of the suite's target: from the validated suite, or, when something else in the
    suite is wrong, from its `target` validated alone; None when the target itself is wrong
    (which is reported already)."""
    if spec is not None:
        return kind_of(spec.target)
    try:
        return kind_of(spec_model(kind).model_validate(target))
    except ValidationError:
        return None


def _brought(
    spec: SuiteFile | None, path: Path
) -> tuple[list[str | dict[str, Any]], list[dict[str, Any]]] | None:
    """The default scorers and the cases a suite's target brings itself (an Inspect task's
    samples), for a suite that lists none; None when its kind brings none, or the suite's
    target is wrong (which is reported already)."""
    if spec is None:
        return None
    kind = kind_of(spec.target)
    place = TargetPlace(path.absolute())
    cases = kind.cases(spec.target, place)
    if cases is None:
        return None
    return kind.default_scorers(spec.target, place), cases


def load_suite(path: Path | str, flags: EndpointFlags | None = None) -> Suite:
    """Load and validate a suite file, raising SuiteError listing every problem found.

    Args:
        path: The suite file (YAML).
        flags: Endpoint settings from the command line, over the suite's own; an endpoint
            suite only.

    Raises:
        SuiteError: Every problem of the suite and its cases file, each with file:line.
        UsageError: Endpoint flags given for a command target.
    """
    path = Path(path)
    text, data = read_yaml(path)
    given = flags.given() if flags else {}
    # a value a flag replaces is not filled in: its variable need not be set
    data, env_problems = expand_value(data, os.environ, lambda loc: _literal(loc) or loc in given)
    if flags is not None:
        flags.apply(data, path)
    return _validate(path, data, text, env_problems, given)


def cases_suite(path: Path | str, flags: EndpointFlags, api_key_env: str | None = None) -> Suite:
    """An endpoint suite in memory around a JSONL cases file: the quarantine-lane `--cases`.

    The suite is named after the file's stem; the flags must give at least the base URL and
    the model.

    Args:
        path: The JSONL cases file.
        flags: The endpoint's settings.
        api_key_env: The variable holding the endpoint's key, if any.

    Raises:
        SuiteError: The file's name is no suite name, or the file has problems (file:line).
    """
    path = Path(path)
    if not is_slug(path.stem):
        raise SuiteError(
            f"the suite takes its name from the cases file, and {path.stem!r} is not a safe name",
            where=str(path),
            hint="rename the file: letters, digits, '.', '_' and '-', starting with a letter or digit",
        )
    target = flags.target(api_key_env)
    data: dict[str, Any] = {"name": path.stem, "target": target, "cases_file": path.name}
    given = flags.given()
    flags.apply(data, path)
    return _validate(path, data, "", [], given)


def _validate(
    path: Path,
    data: dict[str, Any],
    text: str,
    env_problems: list[tuple[Loc, str]],
    given: dict[Loc, tuple[str, Any]],
) -> Suite:
    """Validate a suite's raw data (filled in, flags applied), listing every problem at once."""
    shown = str(path)
    failed = {loc for loc, _ in env_problems}
    problems: list[tuple[str, tuple[Any, ...], str]] = []  # (file, loc, message)
    problems.extend((shown, loc, msg) for loc, msg in env_problems)

    from_jsonl: list[tuple[int, Any, set[Loc]]] = []
    cases_file = data.get("cases_file")
    cases_shown = ""
    if isinstance(cases_file, str) and ("cases_file",) not in failed:
        cases_path = path.parent / cases_file
        cases_shown = str(cases_path)
        from_jsonl, jsonl_problems = jsonl_cases(cases_path, cases_shown)
        problems.extend(("", (), p) for p in jsonl_problems)

    kind = kind_for(data.get("target"))
    try:
        spec = suite_model(kind).model_validate(data)
    except ValidationError as exc:
        spec = None
        for err in exc.errors(include_url=False):
            loc, msg = plain_error(dict(err), known_keys())
            if len(loc) > 1 and loc[0] == "cases":
                continue  # each case is validated on its own below, with its line
            if not _under(loc, failed):
                problems.append((shown, loc, msg))

    problems.extend((shown, loc, msg) for loc, msg in _template_problems(data.get("target"), kind))

    raw_cases: list[tuple[str, tuple[Any, ...], int | None, Any, set[Loc]]] = []
    if isinstance(data.get("cases"), list):
        raw_cases.extend(
            (shown, ("cases", i), None, c, failed) for i, c in enumerate(data["cases"])
        )
    raw_cases.extend((cases_shown, (), line, c, bad) for line, c, bad in from_jsonl)
    brought = _brought(spec, path) if not raw_cases and not cases_shown else None
    if brought is not None:
        raw_cases.extend((shown, ("cases", i), None, c, failed) for i, c in enumerate(brought[1]))
    if not raw_cases and not cases_shown and brought is None:
        problems.append(
            (shown, ("cases",), "the suite has no cases: add `cases:` or `cases_file:`")
        )
    elif not raw_cases and not any(file == "" for file, _, _ in problems):
        # the cases file read, and held no case (a problem of its lines is reported already)
        problems.append(
            (
                "",
                (),
                f"{cases_shown}: no cases in the file: add one JSON object per line, e.g. "
                '{"id": "first", "input": "...", "scorers": ["json_valid"]}',
            )
        )

    _load_plugins(data.get("plugins"), path, text)
    target_kind = _target_kind(spec, data.get("target"), kind)
    defaults = spec.defaults if spec else Defaults()
    cases: list[Case] = []
    seen: dict[str, str] = {}
    built: dict[bytes, CaseScorers] = {}
    for file, base_loc, line, raw, bad in raw_cases:
        try:
            case_spec = CaseSpec.model_validate(raw)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                loc, msg = plain_error(dict(err), known_keys() | {"": list(CaseSpec.model_fields)})
                if not _under((*base_loc, *loc), bad):
                    problems.append((f"{file}:{line}" if line else file, (*base_loc, *loc), msg))
            continue
        place = f"{file}:{line}" if line else file
        if case_spec.id in seen:
            problems.append(
                (
                    place,
                    (*base_loc, "id"),
                    f"duplicate case id {case_spec.id!r} (first at {seen[case_spec.id]})",
                )
            )
            continue
        seen[case_spec.id] = place if line else where((*base_loc,))
        entries = case_spec.scorers or defaults.scorers or (brought[0] if brought else [])
        if not entries:
            problems.append(
                (
                    place,
                    (*base_loc, "scorers"),
                    "the case has no scorers (and `defaults.scorers` is empty)",
                )
            )
            continue
        bindings, scorer_problems = scorers_of(entries, built)
        if target_kind is not None:
            inherited = not case_spec.scorers
            scorer_problems = [
                *scorer_problems,
                *unserved(case_spec.id, bindings, target_kind, inherited),
            ]
        problems.extend(
            (place, (*base_loc, "scorers", *loc), msg)
            for loc, msg in scorer_problems
            if not _under((*base_loc, "scorers", *loc), bad)
        )
        cases.append(
            Case(
                id=case_spec.id,
                input=case_spec.input,
                repeats=case_spec.repeats or defaults.repeats,
                tags=tuple(case_spec.tags),
                scorers=tuple(bindings),
                line=line,
                written_scorers=tuple(entries),
            )
        )

    if problems:
        rendered = render_problems(problems, text, shown, given)
        count = len(rendered)
        raise SuiteError(
            f"{count} problem{'s' if count > 1 else ''} in suite {shown}",
            details=rendered,
            hint="`noisefloor schema` prints the JSON Schema of suite files; `noisefloor scorers` lists scorers",
        )
    assert spec is not None
    for i, pattern in enumerate(spec.redact):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SuiteError(
                f"redact[{i}]: invalid regular expression {pattern!r}: {exc}", where=shown
            ) from None
    return Suite(
        name=spec.name,
        path=path.absolute(),
        target=spec.target,
        defaults=spec.defaults,
        cases=tuple(cases),
        redact=tuple(spec.redact),
        cases_path=(path.parent / spec.cases_file).absolute() if spec.cases_file else None,
    )


def load_suite_plugins(path: Path | str) -> None:
    """Import a suite file's plugins, and the installed packages' scorers its cases name
    (`noisefloor scorers SUITE`), the rest unvalidated.

    Raises:
        SuiteError: The file does not read, or a plugin fails to import.
    """
    path = Path(path)
    text, data = read_yaml(path)
    plugins = data.get("plugins")
    if plugins is not None and (
        not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins)
    ):
        raise SuiteError("plugins: must be a list of file or module names", where=str(path))
    _load_plugins(plugins, path, text)
    cases = data.get("cases") if isinstance(data.get("cases"), list) else []
    defaults = data.get("defaults") if isinstance(data.get("defaults"), dict) else {}
    lists = [c.get("scorers") for c in cases if isinstance(c, dict)] + [defaults.get("scorers")]
    for entries in lists:
        for entry in entries if isinstance(entries, list) else []:
            name = entry.get("type") if isinstance(entry, dict) else entry
            if isinstance(name, str):
                try:
                    REGISTRY.get(name)  # an installed package's is imported here
                except UnknownScorer:
                    continue  # validating the suite reports it


def _load_plugins(plugins: Any, path: Path, text: str) -> None:
    """Import the suite's plugins before its scorers are built (a list of strings; any other
    value is reported by validation)."""
    if not isinstance(plugins, list) or not plugins or not all(isinstance(p, str) for p in plugins):
        return
    from noisefloor.scorers.plugins import load_plugins

    lines = LineMap(text)

    def where(index: int) -> str:
        line = lines.line(("plugins", index))
        return f"{path}:{line}: plugins[{index}]" if line else f"{path}: plugins[{index}]"

    load_plugins(plugins, path.parent, where, REGISTRY)
