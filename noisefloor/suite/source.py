"""Reading suite sources: YAML with the line of every node, JSONL case lines (quarantine-lane
shape too), and pydantic errors turned into plain `file:line: where: what` words."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import yaml

from noisefloor.envvars import expand_value
from noisefloor.errors import SuiteError

__all__ = ["Loc", "LineMap", "jsonl_cases", "plain_error", "read_yaml", "render_problems", "where"]

Loc = tuple[Any, ...]


def where(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def plain_error(
    err: dict[str, Any], model_fields: dict[str, list[str]]
) -> tuple[tuple[Any, ...], str]:
    """Turn one pydantic error into plain words, dropping union-branch noise from the path."""
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in ("str",))))
    kind = err["type"]
    msg = str(err["msg"])
    if kind == "extra_forbidden":
        import difflib  # only for a suite with a problem

        key = loc[-1] if loc else "?"
        parent = where(loc[:-1])
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


class LineMap:
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


def read_yaml(path: Path) -> tuple[str, Any]:
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
        at = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        detail = f"{context}: {problem}" if context else problem
        if opened and gave_up and gave_up.line != opened.line:
            detail += f" (noticed at line {gave_up.line + 1})"
        raise SuiteError(f"invalid YAML: {detail}", where=at) from None
    if not isinstance(data, dict):
        raise SuiteError(
            "expected a mapping with `name`, `target` and `cases` at the top level",
            where=f"{path}:1",
        )
    return text, data


def jsonl_cases(path: Path, shown: str) -> tuple[list[tuple[int, Any, set[Loc]]], list[str]]:
    """Read a JSONL cases file; quarantine-lane lines become ordinary cases.

    Returns each line's number, object and the paths (as validated) of values whose `${...}`
    could not be filled in; and the problems, each a message with file:line.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SuiteError(f"cannot read cases file {shown}: {exc.strerror}") from None
    cases: list[tuple[int, Any, set[Loc]]] = []
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
        obj, env_problems = expand_value(obj, os.environ, lambda loc: loc == ("id",))
        problems.extend(f"{shown}:{number}: {where(loc)}: {msg}" for loc, msg in env_problems)
        failed = {loc for loc, _ in env_problems}
        if "prompt" in obj or "grader" in obj:
            obj = _from_quarantine_lane(obj)
            failed = {_lane_loc(loc) for loc in failed}
        cases.append((number, obj, failed))
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


def _lane_loc(loc: Loc) -> Loc:
    """Where a value of a quarantine-lane line ends up once the line is an ordinary case."""
    head, rest = loc[0], loc[1:]
    if head == "prompt":
        return ("input", *rest)
    if head == "grader":
        return ("scorers", 0, "type")
    if head == "expect":
        return ("scorers", 0, *rest)
    return loc


def render_problems(
    problems: list[tuple[str, Loc, str]],
    text: str,
    shown: str,
    given: dict[Loc, tuple[str, Any]],
) -> list[str]:
    """Each `(file, loc, message)` as one line: the flag that set the value, or file:line."""
    lines = LineMap(text)
    rendered = []
    for file, loc, msg in problems:
        flag = next((f for at, (f, _) in given.items() if loc[: len(at)] == at), None)
        if flag is not None:
            rendered.append(f"{flag}: {msg}")
            continue
        if not file:
            rendered.append(msg)
            continue
        at = where(loc)
        if file == shown:
            number = lines.line(loc)
            file = f"{shown}:{number}" if number else shown
        rendered.append(f"{file}: {at}: {msg}" if at else f"{file}: {msg}")
    return rendered
