"""Scorers: pure functions from one output to a value, a verdict and a detail, and their registry.

A program's bad output is a failed score with a detail; a scorer that raises is a scorer bug.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import inspect
import marshal
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict

from noisefloor.field_docs import describe

if TYPE_CHECKING:
    from noisefloor.targets.base import RawSample

__all__ = [
    "REGISTRY",
    "Registry",
    "ScoreInput",
    "ScoreResult",
    "Scorer",
    "ScorerDefinition",
    "ScorerSpec",
    "UnknownScorer",
    "scorer",
    "unmatched",
    "unmatched_in",
]

Kind = Literal["binary", "continuous"]
Direction = Literal["higher_is_better", "lower_is_better"]
P = TypeVar("P", bound=BaseModel)

#: Keys a suite file may put on any scorer entry; they belong to the gate, never to a scorer.
GATE_KEYS = ("min_effect", "suspect_drop")


class _Cache(enum.Enum):
    UNPARSED = enum.auto()
    NOT_JSON = enum.auto()


@dataclass(frozen=True)
class ScoreInput:
    """One output of a program, as a scorer sees it."""

    text: str
    wall_s: float = 0.0
    concurrency: int = 1
    _parsed: Any = field(default=_Cache.UNPARSED, init=False, repr=False, compare=False)

    @classmethod
    def from_sample(cls, sample: RawSample) -> ScoreInput:
        """The input for one stored sample, reusing the target's own JSON parse when it has one."""
        inp = cls(text=sample.output.text, wall_s=sample.wall_s, concurrency=sample.concurrency)
        if sample.parsed is not None:
            object.__setattr__(inp, "_parsed", sample.parsed)
        return inp

    def json(self) -> Any:
        """The whole text parsed as strict JSON, parsed once.

        Raises:
            ValueError: the text is not JSON.
        """
        if self._parsed is _Cache.UNPARSED:
            try:
                parsed = orjson.loads(self.text)
            except orjson.JSONDecodeError:
                parsed = _Cache.NOT_JSON
            object.__setattr__(self, "_parsed", parsed)
        if self._parsed is _Cache.NOT_JSON:
            raise ValueError("output is not JSON")
        return self._parsed


_UNMATCHED = re.compile(r"path (?:'.*'|\".*\") matched nothing$")


def unmatched(path: str) -> str:
    """The detail of a path that found nothing in an output (at the end of a longer detail, as
    a passing `not_contains` puts it): never worded as a wrong answer, so that a typo in a path
    shows for what it is, and bands can tell (`unmatched_in`)."""
    return f"path {path!r} matched nothing"


def unmatched_in(detail: str) -> str | None:
    """The words of `unmatched` that end a detail, or None."""
    found = _UNMATCHED.search(detail)
    return found.group(0) if found else None


@dataclass(frozen=True)
class ScoreResult:
    """What a scorer says about one output."""

    value: float | None
    passed: bool
    detail: str
    reliable: bool = True


ScorerFn = Callable[[ScoreInput, Any], ScoreResult]
_Fn = Callable[[ScoreInput, P], ScoreResult]


class ScorerSpec(BaseModel):
    """The stored identity of a built scorer: enough to know whether a stored score still holds."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    """The registered scorer name."""
    params: dict[str, Any]
    """Every parameter after validation, defaults included, as JSON."""
    impl_hash: str
    """First 16 hex digits of a sha256 over the scorer's source, params schema and kind."""


class UnknownScorer(KeyError):
    """A scorer name that is not registered."""

    def __init__(self, name: str, known: list[str], suggestion: str | None = None) -> None:
        super().__init__(name)
        self.name = name
        self.known = known
        self.suggestion = suggestion

    def __str__(self) -> str:
        if self.suggestion is not None:
            return f"unknown scorer {self.name!r} (did you mean {self.suggestion!r}?)"
        return f"unknown scorer {self.name!r} (known: {', '.join(self.known)})"


@dataclass(frozen=True)
class ScorerDefinition:
    """A registered scorer before its parameters are bound."""

    name: str
    fn: ScorerFn
    params: type[BaseModel]
    kind: Kind
    doc: str
    direction: Direction

    @functools.cached_property
    def impl_hash(self) -> str:
        """Hash of the scorer's code and params schema; computed on first use (it reads source)."""
        return _impl_hash(self.fn, self.params, self.kind)


class Scorer:
    """A scorer bound to validated parameters; call it on a `ScoreInput`."""

    def __init__(self, definition: ScorerDefinition, params: BaseModel) -> None:
        self.definition = definition
        self.name = definition.name
        self.kind: Kind = definition.kind
        self.params = params
        self.spec = ScorerSpec(
            name=definition.name,
            params=params.model_dump(mode="json"),
            impl_hash=definition.impl_hash,
        )
        chosen = getattr(params, "direction", None) if self.kind == "continuous" else None
        self.direction: Direction = chosen or definition.direction

    def __call__(self, inp: ScoreInput) -> ScoreResult:
        result = self.definition.fn(inp, self.params)
        if not isinstance(result, ScoreResult):
            raise TypeError(
                f"scorer {self.name!r} returned {type(result).__name__}, not ScoreResult"
            )
        return result

    def __repr__(self) -> str:
        fields = type(self.params).model_fields
        shown = [
            f"{key}={getattr(self.params, key)!r}"
            for key, info in fields.items()
            if info.is_required()
            or getattr(self.params, key) != info.get_default(call_default_factory=True)
        ]
        return f"{self.name}({', '.join(shown)})"


def _impl_hash(fn: ScorerFn, params: type[BaseModel], kind: str) -> str:
    try:
        source = inspect.getsource(fn)
    except OSError:  # defined where no source file exists: fall back to the compiled code
        source = marshal.dumps(fn.__code__).hex()
    described = describe(params).model_json_schema()
    schema = orjson.dumps(described, option=orjson.OPT_SORT_KEYS).decode()
    return hashlib.sha256("\n".join([source, schema, kind]).encode()).hexdigest()[:16]


def _signature(params: type[BaseModel]) -> str:
    parts = []
    for key, info in params.model_fields.items():
        default = info.get_default(call_default_factory=True)
        parts.append(
            key if info.is_required() else f"{key}?" if default is None else f"{key}={default!r}"
        )
    return ", ".join(parts)


class Registry:
    """Scorer definitions by name."""

    def __init__(self) -> None:
        self._defs: dict[str, ScorerDefinition] = {}

    def scorer(
        self,
        name: str,
        *,
        params: type[P],
        kind: Kind = "binary",
        direction: Direction = "higher_is_better",
    ) -> Callable[[_Fn[P]], _Fn[P]]:
        """Register `fn(inp, p) -> ScoreResult` under `name`; its docstring is its documentation.

        Args:
            name: The name suite files use.
            params: The pydantic model validating the scorer's parameters.
            kind: `binary` (values 1.0/0.0) or `continuous`.
            direction: Which way is better for a continuous scorer; a `direction` param overrides.

        Raises:
            ValueError: a duplicate name, a missing docstring, or a params model that cannot work.
        """
        if name in self._defs:
            raise ValueError(f"scorer {name!r} is already registered")
        if kind not in ("binary", "continuous"):
            raise ValueError(f"scorer {name!r}: kind must be 'binary' or 'continuous'")
        if kind == "binary" and direction != "higher_is_better":
            raise ValueError(f"scorer {name!r}: a binary scorer is always higher_is_better")
        clashes = {"type", *GATE_KEYS} & set(params.model_fields)
        if clashes:
            raise ValueError(
                f"scorer {name!r}: params may not be named {', '.join(sorted(clashes))}"
            )

        def register(fn: _Fn[P]) -> _Fn[P]:
            doc = (inspect.getdoc(fn) or "").strip()
            if not doc:
                raise ValueError(f"scorer {name!r} needs a docstring: it is its documentation")
            self._defs[name] = ScorerDefinition(name, fn, params, kind, doc, direction)
            return fn

        return register

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._defs)

    def get(self, name: str) -> ScorerDefinition:
        """The definition registered under `name`, its params' fields described by their
        docstrings (read here, on first use, rather than for every scorer at import).

        Raises:
            UnknownScorer: no scorer has that name.
        """
        if name not in self._defs:
            import difflib  # only for a name not registered

            close = difflib.get_close_matches(name, self.names(), n=1)
            raise UnknownScorer(name, self.names(), close[0] if close else None)
        definition = self._defs[name]
        describe(definition.params)
        return definition

    def build(self, name: str, params: Mapping[str, Any] | None = None) -> Scorer:
        """Bind the scorer `name` to validated `params`.

        Raises:
            UnknownScorer: no scorer has that name.
            pydantic.ValidationError: the params do not validate.
        """
        definition = self.get(name)
        return Scorer(definition, definition.params.model_validate(dict(params or {})))

    def table(self) -> list[dict[str, str]]:
        """One row per scorer (`name`, `kind`, `params`, `doc`), for listing them to users."""
        return [
            {
                "name": d.name,
                "kind": d.kind,
                "params": _signature(d.params),
                "doc": d.doc.splitlines()[0].strip(),
            }
            for d in (self._defs[n] for n in self.names())
        ]

    def json_schema(self) -> dict[str, Any]:
        """A JSON Schema (2020-12) for one scorer entry of a suite file: a name or an object."""
        gate = {"type": "number", "minimum": 0, "description": "a gate setting, not a param"}
        defs: dict[str, Any] = {}
        variants = []
        for row, d in zip(self.table(), (self._defs[n] for n in self.names()), strict=True):
            schema = describe(d.params).model_json_schema(
                ref_template=f"#/$defs/{d.name}.{{model}}"
            )
            defs.update({f"{d.name}.{k}": v for k, v in schema.get("$defs", {}).items()})
            props = {"type": {"const": d.name}, **schema.get("properties", {})}
            variants.append(
                {
                    "title": d.name,
                    "description": row["doc"],
                    "type": "object",
                    "properties": props | {key: gate for key in GATE_KEYS},
                    "required": ["type", *schema.get("required", [])],
                    "additionalProperties": False,
                }
            )
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "noisefloor scorer",
            "anyOf": [{"type": "string", "enum": self.names()}, {"oneOf": variants}],
            "$defs": defs,
        }


class Params(BaseModel):
    """The base of a scorer's params model: unknown keys are errors; field docstrings document.

    Each model is built on its first use: a suite uses a few of the scorers registered.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class NoParams(Params):
    """A scorer without parameters."""


REGISTRY = Registry()
scorer = REGISTRY.scorer

# The built-ins register through the same decorator as any other scorer, so they load last.
from noisefloor import builtin_scorers  # noqa: E402, F401
