"""Suite files: the pydantic models, and validating a suite with its cases and scorers.

Every problem is collected and reported at once; suite_source reads the files and words them.
"""

from __future__ import annotations

import os
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    create_model,
)

from noisefloor.envvars import expand_value
from noisefloor.errors import SuiteError
from noisefloor.field_docs import describe
from noisefloor.names import SAFE_NAME
from noisefloor.scorers.registry import GATE_KEYS, REGISTRY, Scorer, UnknownScorer
from noisefloor.settings import REPEATS, REPEATS_LIMIT
from noisefloor.suite.source import (
    LineMap,
    Loc,
    jsonl_cases,
    plain_error,
    read_yaml,
    render_problems,
    where,
)
from noisefloor.targets.kinds import TargetKind, TargetSpec, kind_for, kinds, spec_model
from noisefloor.targets.templating import placeholder_problems

if TYPE_CHECKING:
    from noisefloor.targets.endpoint_flags import EndpointFlags

__all__ = [
    "Case",
    "CaseSpec",
    "ScorerBinding",
    "Suite",
    "SuiteFile",
    "cases_suite",
    "load_suite",
    "load_suite_plugins",
    "suite_json_schema",
]

#: Names that become file names (suite names, case ids), as one regular expression that means
#: the same in Python and in JSON Schema (ECMA-262): Python's `$` also matches before a final
#: newline, which `(?!\n)` rules out. The schema carries it as `pattern`, so editors and the
#: loader accept exactly the same names.
SLUG_PATTERN = SAFE_NAME + r"(?!\n)"
#: The longest such name, in characters.
SLUG_MAX = 128
_SLUG = re.compile(SLUG_PATTERN)


def _slug(value: str) -> str:
    if not _SLUG.search(value) or len(value) > SLUG_MAX:
        raise ValueError(
            f"{value!r} is not a safe name: use letters, digits, '.', '_' and '-', starting with a "
            "letter or digit (it becomes a file name)"
        )
    return value


Slug = Annotated[
    str,
    AfterValidator(_slug),
    WithJsonSchema({"type": "string", "pattern": SLUG_PATTERN, "maxLength": SLUG_MAX}),
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Defaults(_Model):
    """Settings every case inherits."""

    repeats: int = Field(default=REPEATS, ge=1, le=REPEATS_LIMIT)
    """Repeats per case."""
    scorers: list[str | dict[str, Any]] = []
    """Scorers for cases that list none."""
    min_effect: float | None = Field(default=None, ge=0)
    """As `--min-effect`, which wins over it: a pass rate for rules exact and wilson, score
    units for band. Rules exact and band take a scorer's own `min_effect` first."""
    suspect_drop: float | None = Field(default=None, ge=0)
    """As `--suspect-drop`, which wins over it; a scorer's own `suspect_drop` comes first."""
    max_repeats: int | None = Field(default=None, ge=1, le=REPEATS_LIMIT)
    """As `--max-repeats`: candidate repeats per case a sequential check takes at most."""
    baseline_repeats: int | None = Field(default=None, ge=1, le=REPEATS_LIMIT)
    """As `--baseline-repeats`: the deep baseline's repeats per case, at most."""
    baseline_max_age: str | None = None
    """As `--baseline-max-age`: baseline samples older than this (e.g. `7d`) are left out."""


class CaseSpec(_Model):
    """One case: an input, how often to run it, and how to score it."""

    id: Slug
    input: str
    repeats: int | None = Field(default=None, ge=1, le=REPEATS_LIMIT)
    tags: list[str] = []
    scorers: list[str | dict[str, Any]] = []
    """Each a scorer name or `{type: name, ...params}`; plus `min_effect` and `suspect_drop`."""


class SuiteFile(_Model):
    """A suite file as written (YAML)."""

    # built on first use: a suite is validated with `_suite_model()`, with every kind's target
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: Slug
    """The suite's name; it becomes a file name under the store root."""
    description: str | None = None
    target: TargetSpec
    defaults: Defaults = Defaults.model_construct()
    cases: list[CaseSpec] = []
    cases_file: str | None = None
    """A JSONL file of cases, relative to the suite file; lines may also use the quarantine-lane
    shape `{id, prompt, grader, expect}`."""
    redact: list[str] = []
    """Regular expressions whose matches are replaced before anything reaches disk."""
    plugins: list[str] = []
    """Python files (relative to the suite file) or importable modules, imported before the
    scorers are built: they register scorers with `@noisefloor.scorer(name)`. Their code runs
    in noisefloor's process."""


@dataclass(frozen=True)
class ScorerBinding:
    """A built scorer and the gate settings of its entry."""

    label: str
    scorer: Scorer
    min_effect: float | None = None
    suspect_drop: float | None = None


@dataclass(frozen=True)
class Case:
    """A validated case, ready to run."""

    id: str
    input: str
    repeats: int
    tags: tuple[str, ...]
    scorers: tuple[ScorerBinding, ...]
    line: int | None = None
    written_scorers: tuple[str | dict[str, Any], ...] = field(default=(), compare=False)
    """The scorer entries as the suite wrote them (the public tool's definition hash)."""


@dataclass(frozen=True)
class Suite:
    """A validated suite: the file's settings plus its cases, scorers built."""

    name: str
    path: Path
    target: TargetSpec
    defaults: Defaults
    cases: tuple[Case, ...]
    redact: tuple[str, ...] = ()
    cases_path: Path | None = None
    """The `cases_file` the cases came from, if any."""

    @property
    def base_dir(self) -> Path:
        """The directory relative paths in the suite are resolved against."""
        return self.path.parent


def _suite_model(kind: TargetKind | None = None) -> type[SuiteFile]:
    """SuiteFile with the `target` of every registered target kind, or of `kind` alone."""
    spec = spec_model(kind)
    cached = _models.get(kind)
    if cached is None or cached[0] is not spec:
        model = create_model(
            "SuiteFile",
            __base__=SuiteFile,
            __doc__=SuiteFile.__doc__,
            __module__=SuiteFile.__module__,
            target=(spec, ...),
        )
        cached = _models[kind] = (spec, model)
    return cached[1]


#: Suite models by the kind of target they hold (None: every kind), with that target's model.
_models: dict[TargetKind | None, tuple[type[TargetSpec], type[SuiteFile]]] = {}


def _nested(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (`X` or `X | None`), if any."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _fields() -> dict[str, list[str]]:
    """Known keys by the parent key they sit under, for "did you mean" hints."""
    spec = spec_model()
    out = {
        "": list(SuiteFile.model_fields),
        "target": list(spec.model_fields),
        "defaults": list(Defaults.model_fields),
        "cases": list(CaseSpec.model_fields),
    }
    for name, info in spec.model_fields.items():
        nested = _nested(info.annotation)
        if nested is not None:
            out[name] = list(nested.model_fields)
    return out


def _under(loc: Loc, failed: set[Loc]) -> bool:
    """Whether `loc` lies in a value whose `${...}` failed: its problem is already reported."""
    return any(loc[: len(bad)] == bad for bad in failed)


def _literal(loc: Loc) -> bool:
    """The suite's name and its case ids key the store, so they are never filled in."""
    return loc == ("name",) or (len(loc) == 3 and loc[0] == "cases" and loc[2] == "id")


#: A case's built scorers, and the problems of its entries (each at its path in the list).
_Scorers = tuple[list[ScorerBinding], list[tuple[tuple[Any, ...], str]]]


def _build_scorers(entries: list[str | dict[str, Any]]) -> _Scorers:
    bindings: list[ScorerBinding] = []
    problems: list[tuple[tuple[Any, ...], str]] = []
    for index, entry in enumerate(entries):
        if isinstance(entry, str):
            entry = {"type": entry}
        params = dict(entry)
        name = params.pop("type", None)
        if not isinstance(name, str):
            problems.append(((index,), "a scorer needs `type: <name>` (see `noisefloor scorers`)"))
            continue
        gate: dict[str, float | None] = {}
        for key in GATE_KEYS:
            value = params.pop(key, None)
            if value is not None and (
                not isinstance(value, int | float) or isinstance(value, bool) or value < 0
            ):
                problems.append(((index, key), f"must be a number >= 0, got {value!r}"))
                value = None
            gate[key] = float(value) if value is not None else None
        try:
            built = REGISTRY.build(name, params)
        except UnknownScorer as exc:
            problems.append(((index, "type"), str(exc)))
            continue
        except ValidationError as exc:
            known = {"": [*REGISTRY.get(name).params.model_fields, *GATE_KEYS]}
            for err in exc.errors(include_url=False):
                loc, msg = plain_error(dict(err), known)
                problems.append(((index, *loc), f"scorer {name!r}: {msg}"))
            continue
        bindings.append(
            ScorerBinding(f"{index}:{name}", built, gate["min_effect"], gate["suspect_drop"])
        )
    return bindings, problems


def _scorers_of(
    entries: list[str | dict[str, Any]],
    built: dict[bytes, _Scorers],
) -> _Scorers:
    """`_build_scorers(entries)`, made once per suite for each distinct list of entries: cases
    mostly share `defaults.scorers`, and a built scorer never changes (2,000 cases: 2,000
    validations of the same params)."""
    try:
        key = orjson.dumps(entries, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a YAML value JSON has no form for: built on its own, and reported
        return _build_scorers(entries)
    if key not in built:
        built[key] = _build_scorers(entries)
    return built[key]


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
    if _SLUG.search(path.stem) is None or len(path.stem) > SLUG_MAX:
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
        spec = _suite_model(kind).model_validate(data)
    except ValidationError as exc:
        spec = None
        for err in exc.errors(include_url=False):
            loc, msg = plain_error(dict(err), _fields())
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
    if not raw_cases and not cases_shown:
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
    defaults = spec.defaults if spec else Defaults()
    cases: list[Case] = []
    seen: dict[str, str] = {}
    built: dict[bytes, _Scorers] = {}
    for file, base_loc, line, raw, bad in raw_cases:
        try:
            case_spec = CaseSpec.model_validate(raw)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                loc, msg = plain_error(dict(err), _fields() | {"": list(CaseSpec.model_fields)})
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
        entries = case_spec.scorers or defaults.scorers
        if not entries:
            problems.append(
                (
                    place,
                    (*base_loc, "scorers"),
                    "the case has no scorers (and `defaults.scorers` is empty)",
                )
            )
            continue
        bindings, scorer_problems = _scorers_of(entries, built)
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


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of suite files, scorer entries included, for editors."""
    schema = describe(_suite_model()).model_json_schema()
    scorer_schema = REGISTRY.json_schema()
    defs = schema.setdefault("$defs", {})
    defs["ScorerEntry"] = scorer_schema
    for model in ("CaseSpec", "Defaults"):
        props = defs.get(model, {}).get("properties", {})
        if "scorers" in props:
            props["scorers"] = {
                "type": "array",
                "items": {"$ref": "#/$defs/ScorerEntry"},
                "description": props["scorers"].get("description", ""),
            }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "noisefloor suite"
    return schema
