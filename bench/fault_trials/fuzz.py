"""Fuzz trials: generated suite files, JSONL case files and target outputs, each through the code
that reads it; a bad input is a clean error (file:line) or a failed repeat, never a crash."""

from __future__ import annotations

import contextlib
import io
import math
import re
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis
import orjson
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fault_trials import Tally

__all__ = ["cases_files", "outputs", "suite_files", "trials"]

#: A valid suite, the seed that most generated suites mutate one field of.
BASE_SUITE: dict[str, Any] = {
    "name": "fuzzed",
    "target": {"command": ["python3", "t.py", "{{input}}"], "output": "json", "timeout_s": 10},
    "defaults": {"repeats": 3},
    "cases": [
        {
            "id": "one",
            "input": "hello",
            "scorers": ["json_valid", {"type": "contains", "needle": "x", "path": "answer"}],
        }
    ],
}

#: libyaml's loader and dumper, as the suite loader uses: the pure-Python ones take seconds on
#: deep nesting.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from([10**400, -(10**400), "{{input}}", "{{", "}}", "@", "../x", "", " " * 3]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _deep(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


_DEEP = st.integers(min_value=50, max_value=200).map(_deep)
#: Nesting deeper than any recursive reader goes, as text.
_DEEP_TEXT = st.integers(min_value=300, max_value=5000).map(
    lambda depth: "[" * depth + "1" + "]" * depth
)
#: Every place of the base suite a generated value replaces.
_FIELDS = (
    ("name",),
    ("target",),
    ("target", "command"),
    ("target", "command", 1),
    ("target", "output"),
    ("target", "timeout_s"),
    ("defaults",),
    ("defaults", "repeats"),
    ("cases",),
    ("cases", 0),
    ("cases", 0, "id"),
    ("cases", 0, "input"),
    ("cases", 0, "scorers"),
    ("cases", 0, "scorers", 0),
    ("cases", 0, "scorers", 1),
    ("cases", 0, "scorers", 1, "needle"),
    ("cases", 0, "scorers", 1, "path"),
    ("cases", 0, "repeats"),
)


def _with(doc: Any, where: tuple[Any, ...], value: Any) -> Any:
    doc = orjson.loads(orjson.dumps(doc))
    holder = doc
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = value
    return doc


def _dump(doc: Any) -> str:
    try:
        return yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, RecursionError):
        return "[" * 2000


def suite_files() -> st.SearchStrategy[bytes]:
    """Suite files: random bytes, random YAML documents, and the base suite with one field
    replaced by a random value (wrong types, huge numbers, NaN, inf, deep nesting)."""
    mutated = st.builds(
        _with, st.just(BASE_SUITE), st.sampled_from(_FIELDS), st.one_of(_VALUES, _DEEP)
    ).map(_dump)
    return st.one_of(
        st.binary(max_size=200),
        _VALUES.map(_dump),
        _DEEP.map(_dump),
        _DEEP_TEXT,
        _DEEP_TEXT.map(lambda text: f"name: x\ncases: {text}\n"),
        mutated,
        mutated,
        st.sampled_from(["a: [", "{{", "- - - -", "name: x\n\tbad", "!!python/object:os.system"]),
    ).map(lambda text: text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))


def cases_files() -> st.SearchStrategy[bytes]:
    """JSONL case files, line by line: valid cases, random JSON values, deep JSON, random
    bytes, blank lines, NaN and huge numbers."""
    good = st.builds(
        lambda i, text: {"id": f"c{i}", "prompt": text, "grader": "contains", "expect": "x"},
        st.integers(0, 5),
        st.text(max_size=10),
    )
    line = st.one_of(
        good.map(lambda v: orjson.dumps(v)),
        _VALUES.map(lambda v: orjson.dumps(v, default=str) if _json_safe(v) else b"NaN"),
        _DEEP.map(orjson.dumps),
        _DEEP_TEXT.map(str.encode),
        st.binary(max_size=40).filter(lambda b: b"\n" not in b),
        st.sampled_from([b"", b"   ", b'{"id": 1e999}', b'{"id": NaN}', b"[1,", b"\xff\xfe"]),
    )
    return st.lists(line, min_size=1, max_size=6).map(lambda lines: b"\n".join(lines) + b"\n")


def _json_safe(value: Any) -> bool:
    try:
        orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return True


def outputs() -> st.SearchStrategy[str]:
    """What a target may print: random bytes decoded, JSON of any shape, deep JSON, numbers
    past every range, NaN and infinities in the JSON text."""
    return st.one_of(
        st.binary(max_size=200).map(lambda b: b.decode("utf-8", "replace")),
        _VALUES.map(lambda v: orjson.dumps(v).decode() if _json_safe(v) else str(v)),
        _DEEP.map(lambda v: orjson.dumps(v).decode()),
        _DEEP_TEXT,
        st.sampled_from(
            [
                '{"answer": NaN}',
                '{"answer": Infinity, "confidence": -Infinity}',
                '{"answer": 1e999}',
                '{"answer": ' + "9" * 5000 + "}",
                '{"answer": "' + "x" * 100_000 + '"}',
                "\x00" * 50,
                "",
            ]
        ),
    )


#: Scorers with parameters that reach into the output: each generated output goes through all.
SCORERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("json_valid", {}),
    ("contains", {"needle": "x"}),
    ("contains", {"needle": "x", "path": "answer"}),
    ("not_contains", {"needle": "x", "path": "answer"}),
    ("regex", {"pattern": "a+", "path": "answer"}),
    ("must_include", {"all": ["a"], "none": ["b"]}),
    ("json_fields", {"required": ["answer"], "types": {"answer": "str"}}),
    ("json_path_equals", {"path": "answer", "value": 1}),
    ("json_path_in", {"path": "answer", "values": [1, "x"]}),
    ("json_path_subset", {"path": "answer[*]", "allowed": [1]}),
    ("json_path_number", {"path": "answer", "min": 0, "max": 1}),
    ("json_path_number", {"path": "answer[*]", "aggregate": "mean"}),
    ("latency", {"max_s": 1.0}),
)


_CRASH = "crash: "


def _crash_note(what: str, exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1]
    return (
        f"{_CRASH}{what}: {type(exc).__name__}: {str(exc)[:160]} at {where.filename}:{where.lineno}"
    )


def check_suite_file(data: bytes, workdir: Path) -> str | None:
    """Load a generated suite file; None when it loads or is refused with its file named,
    else what went wrong."""
    from noisefloor.errors import NoisefloorError
    from noisefloor.suite.load import load_suite

    path = workdir / "suite.yaml"
    path.write_bytes(data)
    try:
        load_suite(path)
    except NoisefloorError as exc:
        text = exc.format_message()
        if not re.search(r"suite\.yaml(:\d+)?", text):
            return f"suite refused without naming its file: {text[:200]}"
        if _a_mapping(data) and not re.search(r"suite\.yaml:\d+", text):
            return f"suite refused without file:line: {text[:200]}"
    except Exception as exc:  # noqa: BLE001 (a crash is what a trial counts)
        return _crash_note("suite file", exc)
    return _through_cli(["rescore", str(path)], workdir)


def _a_mapping(data: bytes) -> bool:
    """Whether a suite file is a YAML mapping (its problems then have lines)."""
    try:
        return isinstance(yaml.load(data, Loader=_LOADER), dict)
    except (yaml.YAMLError, RecursionError, ValueError):
        return False


def _through_cli(args: list[str], workdir: Path) -> str | None:
    """The real command line, in-process: exit 0 or 3, never an internal error."""
    from noisefloor.cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(["--root", str(workdir / "store"), *args])
        except BaseException as exc:  # noqa: BLE001
            return _crash_note(f"`{args[0]}`", exc)
    if code not in (0, 3) or "internal error" in err.getvalue():
        return f"`{args[0]}` exited {code}: {err.getvalue()[-200:]}"
    return None


def check_cases_file(data: bytes, workdir: Path) -> str | None:
    """Load a generated JSONL cases file as `--cases` does; a refusal must name file:line."""
    from noisefloor.errors import NoisefloorError
    from noisefloor.suite.load import cases_suite
    from noisefloor.targets.endpoint_flags import EndpointFlags

    path = workdir / "cases.jsonl"
    path.write_bytes(data)
    flags = EndpointFlags(base_url="http://127.0.0.1:9/v1", model="m")
    try:
        cases_suite(path, flags)
    except NoisefloorError as exc:
        text = exc.format_message()
        if not re.search(r"cases\.jsonl:\d+", text) and "no cases in the file" not in text:
            return f"cases refused without file:line: {text[:200]}"
    except Exception as exc:  # noqa: BLE001
        return _crash_note("cases file", exc)
    return None


def check_output(text: str) -> str | None:
    """Parse an output as the command target does and put it through every scorer; each must
    give a result (a failed repeat says why), never raise."""
    from noisefloor.scorers.registry import REGISTRY
    from noisefloor.scorers.score import ScoreInput

    for name, params in SCORERS:
        scorer = REGISTRY.build(name, params)
        inp = ScoreInput(text=text, wall_s=0.5, concurrency=1)
        try:
            result = scorer(inp)
        except Exception as exc:  # noqa: BLE001
            return _crash_note(f"scorer {name}", exc)
        value = getattr(result, "value", None)
        if isinstance(value, float) and math.isnan(value):
            return f"scorer {name} scored NaN for an output"
        if getattr(result, "passed", True) is False and not getattr(result, "detail", ""):
            return f"scorer {name} failed a repeat without a reason"
    return None


_ROWS: dict[str, tuple[Callable[[], st.SearchStrategy[Any]], Callable[..., str | None]]] = {
    "fuzz, suites": (suite_files, check_suite_file),
    "fuzz, cases": (cases_files, check_cases_file),
    "fuzz, outputs": (outputs, lambda text, workdir: check_output(text)),
}


def _run_row(tally: Tally, n: int, workdir: Path, seed: int) -> None:
    strategy, check = _ROWS[tally.name]
    workdir.mkdir(parents=True, exist_ok=True)

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy())
    def one(value: Any) -> None:
        tally.trials += 1
        problem = check(value, workdir)
        if problem is not None:
            if problem.startswith(_CRASH):
                tally.tracebacks += 1
            tally.fail(problem)

    hypothesis.seed(seed)(one)()


def trials(n: int, workdir: Path, seed: int = 0) -> list[Tally]:
    """`n` generated inputs of each kind (suite files, case files, outputs), each through the
    code that reads it."""
    tallies = [Tally(name) for name in _ROWS]
    for tally in tallies:
        _run_row(tally, n, workdir / tally.name.split(", ")[1], seed)
    return tallies
