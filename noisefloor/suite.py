"""Suite files: the pydantic models, loading YAML and JSONL cases, and errors with file:line.

Every problem in a file is reported at once, in plain words, as `file:line: where: what`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from noisefloor.errors import SuiteError
from noisefloor.scorers import REGISTRY, Scorer, UnknownScorer

__all__ = [
    "Case",
    "CaseSpec",
    "HttpSpec",
    "ScorerBinding",
    "Suite",
    "SuiteFile",
    "load_suite",
    "suite_json_schema",
]

_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: Keys of a scorer entry that are gate settings, not scorer parameters.
GATE_KEYS = ("min_effect", "suspect_drop")


def _slug(value: str) -> str:
    if not _SLUG.fullmatch(value) or len(value) > 128:
        raise ValueError(
            f"{value!r} is not a safe name: use letters, digits, '.', '_' and '-', starting with a "
            "letter or digit (it becomes a file name)"
        )
    return value


Slug = Annotated[str, AfterValidator(_slug)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class HttpSpec(_Model):
    """An OpenAI-compatible chat-completions endpoint."""

    base_url: str
    """E.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is appended."""
    model: str
    api_key_env: str | None = None
    """Name of the environment variable holding the key; the key itself is never stored."""
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    system: str | None = None
    """A system message sent before the user message."""
    messages: list[dict[str, Any]] | None = None
    """Message template; default: one user message with `{{input}}`."""
    response_format: dict[str, Any] | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    extra_body: dict[str, Any] = {}
    """Further request fields, sent as they are."""
    max_retries: int = Field(default=5, ge=0)
    """Retries of one call on infrastructure errors (connection, timeout, 408/409/429/5xx)."""
    retry_budget: int | None = Field(default=None, ge=0)
    """Retries allowed across the whole run (default: as many as there are calls)."""


class TargetSpec(_Model):
    """Exactly one of `command` (with its settings) or `http`."""

    command: list[str] | None = Field(default=None, min_length=1)
    """The argv, never run through a shell; `{{input}}`, `{{case_id}}` and `{{repeat}}` are
    filled in per argument."""
    cwd: str | None = None
    """Working directory, relative to the suite file (default: the suite file's directory)."""
    env: dict[str, str] = {}
    """Variables set on top of the inherited environment."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds before the whole process group is killed and the repeat counts as a timeout."""
    fingerprint: list[str] | None = None
    """Globs (relative to the suite file) of the files that make up the target's version."""
    output: Literal["text", "json"] = "text"
    """`json`: output that does not parse is a failed repeat (`error:parse`)."""
    max_output_bytes: int = Field(default=10_000_000, gt=0)
    """Bytes kept per stream; the rest is counted and dropped, and the sample flagged."""
    http: HttpSpec | None = None
    """An OpenAI-compatible chat-completions endpoint instead of a command."""

    @model_validator(mode="after")
    def _one_kind(self) -> TargetSpec:
        if (self.command is None) == (self.http is None):
            raise ValueError("give exactly one of `command` (an argv list) or `http`")
        return self


class Defaults(_Model):
    """Settings every case inherits."""

    repeats: int = Field(default=5, ge=1)
    """Repeats per case."""
    scorers: list[str | dict[str, Any]] = []
    """Scorers for cases that list none."""
    min_effect: float | None = Field(default=None, ge=0)
    suspect_drop: float | None = Field(default=None, ge=0)


class CaseSpec(_Model):
    """One case: an input, how often to run it, and how to score it."""

    id: Slug
    input: str
    repeats: int | None = Field(default=None, ge=1)
    tags: list[str] = []
    scorers: list[str | dict[str, Any]] = []
    """Each a scorer name or `{type: name, ...params}`; plus `min_effect` and `suspect_drop`."""


class SuiteFile(_Model):
    """A suite file as written (YAML)."""

    name: Slug
    """The suite's name; it becomes a file name under the store root."""
    description: str | None = None
    target: TargetSpec
    defaults: Defaults = Defaults()
    cases: list[CaseSpec] = []
    cases_file: str | None = None
    """A JSONL file of cases, relative to the suite file; lines may also use the quarantine-lane
    shape `{id, prompt, grader, expect}`."""
    redact: list[str] = []
    """Regular expressions whose matches are replaced before anything reaches disk."""


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


@dataclass(frozen=True)
class Suite:
    """A validated suite: the file's settings plus its cases, scorers built."""

    name: str
    path: Path
    target: TargetSpec
    defaults: Defaults
    cases: tuple[Case, ...]
    redact: tuple[str, ...] = ()
    lines: dict[str, int] = field(default_factory=dict)
    cases_path: Path | None = None
    """The `cases_file` the cases came from, if any."""

    @property
    def base_dir(self) -> Path:
        """The directory relative paths in the suite are resolved against."""
        return self.path.parent


# -- error formatting ------------------------------------------------------------------------


def _where(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _plain(err: dict[str, Any], model_fields: dict[str, list[str]]) -> tuple[tuple[Any, ...], str]:
    """Turn one pydantic error into plain words, dropping union-branch noise from the path."""
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in ("str",))))
    kind = err["type"]
    msg = str(err["msg"])
    if kind == "extra_forbidden":
        key = loc[-1] if loc else "?"
        parent = _where(loc[:-1])
        known = model_fields.get(parent.split("[")[0].split(".")[-1] if parent else "", [])
        close = difflib.get_close_matches(str(key), known, n=1)
        msg = f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
        return loc, msg
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return loc, f"expected a mapping (key: value lines), got {type(err.get('input')).__name__}"
    if kind == "missing":
        return loc, f"missing required key {loc[-1]!r}" if loc else "missing required key"
    msg = msg.removeprefix("Value error, ")
    return loc, msg[0].lower() + msg[1:] if msg else msg


_FIELDS = {
    "": list(SuiteFile.model_fields),
    "target": list(TargetSpec.model_fields),
    "http": list(HttpSpec.model_fields),
    "defaults": list(Defaults.model_fields),
    "cases": list(CaseSpec.model_fields),
}


class _LineMap:
    """Line numbers of YAML nodes by their path, computed only when there is an error."""

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[Any, ...], int] = {}
        try:
            node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            node = None
        if node is not None:
            self._walk(node, ())

    def _walk(self, node: yaml.Node, path: tuple[Any, ...]) -> None:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                sub = (*path, key.value)
                self._walk(value, sub)
                self.lines[sub] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self._walk(item, (*path, i))

    def line(self, loc: tuple[Any, ...]) -> int | None:
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.lines:
                return self.lines[loc[:end]]
        return None


# -- loading ---------------------------------------------------------------------------------


def _read_yaml(path: Path) -> tuple[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(f"no suite file at {path}", hint="check the path you passed") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"cannot read {path}: {exc}") from None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        # the line that opened an unclosed construct is where the fix goes; the parser only
        # gives up further down
        opened = getattr(exc, "context_mark", None)
        gave_up = getattr(exc, "problem_mark", None)
        mark = opened or gave_up
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        detail = f"{context}: {problem}" if context else problem
        if opened and gave_up and gave_up.line != opened.line:
            detail += f" (noticed at line {gave_up.line + 1})"
        raise SuiteError(f"invalid YAML: {detail}", where=where) from None
    if not isinstance(data, dict):
        raise SuiteError(
            "expected a mapping with `name`, `target` and `cases` at the top level",
            where=f"{path}:1",
        )
    return text, data


def _jsonl_cases(path: Path, shown: str) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Read a JSONL cases file; quarantine-lane lines become ordinary cases."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SuiteError(f"cannot read cases file {shown}: {exc.strerror}") from None
    cases: list[tuple[int, dict[str, Any]]] = []
    problems: list[str] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith(b"#"):
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            problems.append(f"{shown}:{number}: not a JSON object: {exc}")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{shown}:{number}: expected a JSON object per line")
            continue
        if "prompt" in obj or "grader" in obj:
            obj = _from_quarantine_lane(obj)
        cases.append((number, obj))
    return cases, problems


def _from_quarantine_lane(obj: dict[str, Any]) -> dict[str, Any]:
    """`{id, prompt, grader, expect}` -> `{id, input, scorers: [{type: grader, **expect}]}`."""
    out = {k: v for k, v in obj.items() if k not in ("prompt", "grader", "expect")}
    if "prompt" in obj:
        out["input"] = obj["prompt"]
    if "grader" in obj:
        expect = obj.get("expect") or {}
        entry = {"type": obj["grader"], **expect} if isinstance(expect, dict) else obj["grader"]
        out.setdefault("scorers", [entry])
    return out


def _build_scorers(
    entries: list[str | dict[str, Any]],
) -> tuple[list[ScorerBinding], list[tuple[tuple[Any, ...], str]]]:
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
            for err in exc.errors(include_url=False):
                loc, msg = _plain(dict(err), {"": []})
                problems.append(((index, *loc), f"scorer {name!r}: {msg}"))
            continue
        bindings.append(
            ScorerBinding(f"{index}:{name}", built, gate["min_effect"], gate["suspect_drop"])
        )
    return bindings, problems


def load_suite(path: Path | str) -> Suite:
    """Load and validate a suite file, raising SuiteError listing every problem found."""
    path = Path(path)
    shown = str(path)
    text, data = _read_yaml(path)
    problems: list[tuple[str, tuple[Any, ...], str]] = []  # (file, loc, message)
    file_lines: dict[str, _LineMap | dict[int, int]] = {}

    jsonl_cases: list[tuple[int, dict[str, Any]]] = []
    cases_file = data.get("cases_file")
    cases_shown = ""
    if isinstance(cases_file, str):
        cases_path = path.parent / cases_file
        cases_shown = str(cases_path)
        jsonl_cases, jsonl_problems = _jsonl_cases(cases_path, cases_shown)
        problems.extend(("", (), p) for p in jsonl_problems)

    try:
        spec = SuiteFile.model_validate(data)
    except ValidationError as exc:
        spec = None
        for err in exc.errors(include_url=False):
            loc, msg = _plain(dict(err), _FIELDS)
            if len(loc) > 1 and loc[0] == "cases":
                continue  # each case is validated on its own below, with its line
            problems.append((shown, loc, msg))

    raw_cases: list[tuple[str, tuple[Any, ...], int | None, Any]] = []
    if isinstance(data.get("cases"), list):
        raw_cases.extend((shown, ("cases", i), None, c) for i, c in enumerate(data["cases"]))
    raw_cases.extend((cases_shown, (), line, c) for line, c in jsonl_cases)
    if not raw_cases:
        problems.append(
            (shown, ("cases",), "the suite has no cases: add `cases:` or `cases_file:`")
        )

    defaults = spec.defaults if spec else Defaults()
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for file, base_loc, line, raw in raw_cases:
        try:
            case_spec = CaseSpec.model_validate(raw)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                loc, msg = _plain(dict(err), _FIELDS | {"": list(CaseSpec.model_fields)})
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
        seen[case_spec.id] = place if line else _where((*base_loc,))
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
        bindings, scorer_problems = _build_scorers(entries)
        problems.extend((place, (*base_loc, "scorers", *loc), msg) for loc, msg in scorer_problems)
        cases.append(
            Case(
                id=case_spec.id,
                input=case_spec.input,
                repeats=case_spec.repeats or defaults.repeats,
                tags=tuple(case_spec.tags),
                scorers=tuple(bindings),
                line=line,
            )
        )

    if problems:
        lines = _LineMap(text)
        file_lines[shown] = lines
        rendered = []
        for file, loc, msg in problems:
            if not file:
                rendered.append(msg)
                continue
            where = _where(loc)
            if file == shown:
                number = lines.line(loc)
                file = f"{shown}:{number}" if number else shown
            rendered.append(f"{file}: {where}: {msg}" if where else f"{file}: {msg}")
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


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of suite files, scorer entries included, for editors."""
    schema = SuiteFile.model_json_schema()
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
