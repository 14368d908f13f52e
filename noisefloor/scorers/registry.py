"""Scorers: pure functions from one output to a value, a verdict and a detail, and their registry.

A program's bad output is a failed score with a detail; a scorer that raises is a scorer bug.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import marshal
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict

from noisefloor.field_docs import describe
from noisefloor.scorers.calls import DEFAULT_TIMEOUT_S, Origin, guarded, result_of, shown
from noisefloor.scorers.score import Direction, Kind, NoParams, ScoreInput, ScoreResult
from noisefloor.targets.provisions import PROVISIONS, Provision

if TYPE_CHECKING:
    pass

__all__ = [
    "REGISTRY",
    "Origin",
    "Registry",
    "ScoreInput",
    "ScoreResult",
    "Scorer",
    "ScorerDefinition",
    "ScorerSpec",
    "UnknownScorer",
    "scorer",
]

P = TypeVar("P", bound=BaseModel)

#: Keys a suite file may put on any scorer entry; they belong to the gate, never to a scorer.
GATE_KEYS = ("min_effect", "suspect_drop")


#: A binary scorer's True and False: results are immutable, so one of each serves every call.
_PASSED = ScoreResult(value=1.0, passed=True, detail="returned True")
_FAILED = ScoreResult(value=0.0, passed=False, detail="returned False")

#: What a scorer may return: a `ScoreResult`, a bool (binary) or a number (continuous).
Returned = ScoreResult | bool | float
ScorerFn = Callable[[ScoreInput, Any], Returned]
_Fn = Callable[[ScoreInput, P], Returned]

#: The package the built-in scorers live in: a scorer defined anywhere else is a user's.
_BUILTIN_PREFIX = "noisefloor."


class ScorerSpec(BaseModel):
    """The stored identity of a built scorer: enough to know whether a stored score still holds."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    """The registered scorer name."""
    params: dict[str, Any]
    """Every parameter after validation, defaults included, as JSON."""
    impl_hash: str
    """First 16 hex digits of a sha256 over the scorer's source, params schema and kind; for a
    user's scorer, also the content of its file and of its `depends_on` files, and its
    package's version."""


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
    timeout_s: float | None = None
    """Seconds one call may take (user scorers; None: no limit)."""
    thread_safe: bool = True
    """False: called from one thread at a time."""
    depends_on: tuple[Path, ...] = ()
    """Files besides its own whose content is part of a user scorer's identity."""
    origin: Origin | None = None
    """The plugin it came from; None for a built-in or a scorer registered by code."""
    needs: frozenset[Provision] = frozenset()
    """What it reads of a sample besides the output: a suite whose target's kind does not
    provide it all is refused when it loads."""
    calls: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    """Held by each call of a user scorer that is not thread-safe, whatever its params."""

    @property
    def builtin(self) -> bool:
        """Defined in noisefloor itself: called directly, its identity its own source."""
        return self.fn.__module__.startswith(_BUILTIN_PREFIX)

    @property
    def defined_at(self) -> str:
        """`file:line in function` where the scorer is defined, for messages."""
        code = inspect.unwrap(self.fn).__code__
        return f"{shown(code.co_filename)}:{code.co_firstlineno} in {code.co_name}"

    @functools.cached_property
    def impl_hash(self) -> str:
        """Hash of the scorer's code and params schema (and, for a user's scorer, of its files
        and its package's version); computed on first use (it reads source)."""
        extra: list[str] = []
        if not self.builtin:
            for path in (_source_file(self.fn), *self.depends_on):
                if path is not None:
                    extra.append(f"{path.name}:{_file_digest(path)}")
            if self.origin is not None and self.origin.version is not None:
                extra.append(f"version:{self.origin.version}")
        return _impl_hash(self.fn, self.params, self.kind, extra)


def _source_file(fn: Callable[..., Any]) -> Path | None:
    filename = inspect.unwrap(fn).__code__.co_filename
    return Path(filename) if os.path.isfile(filename) else None


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ValueError(f"cannot read {path} for a scorer's identity: {exc.strerror}") from None


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
        self._fn: Callable[[ScoreInput, Any], object] = (
            definition.fn
            if definition.builtin
            else guarded(
                definition.fn,
                definition.timeout_s,
                None if definition.thread_safe else definition.calls,
            )
        )

    def __call__(self, inp: ScoreInput) -> ScoreResult:
        """The scorer's result on one output.

        Raises:
            TypeError: it returned something that is not a result of its kind.
            ScorerTimeout: a user's scorer ran past its timeout.
        """
        result = self._fn(inp, self.params)
        if isinstance(result, ScoreResult):
            return result
        if result is True and self.kind == "binary":
            return _PASSED
        if result is False and self.kind == "binary":
            return _FAILED
        value, passed, detail = result_of(result, self.name, self.kind == "continuous")
        return ScoreResult(value=value, passed=passed, detail=detail)

    def __repr__(self) -> str:
        fields = type(self.params).model_fields
        shown = [
            f"{key}={getattr(self.params, key)!r}"
            for key, info in fields.items()
            if info.is_required()
            or getattr(self.params, key) != info.get_default(call_default_factory=True)
        ]
        return f"{self.name}({', '.join(shown)})"


def _impl_hash(fn: ScorerFn, params: type[BaseModel], kind: str, extra: Sequence[str]) -> str:
    try:
        source = inspect.getsource(fn)
    except OSError:  # defined where no source file exists: fall back to the compiled code
        source = marshal.dumps(fn.__code__).hex()
    described = describe(params).model_json_schema()
    schema = orjson.dumps(described, option=orjson.OPT_SORT_KEYS).decode()
    return hashlib.sha256("\n".join([source, schema, kind, *extra]).encode()).hexdigest()[:16]


def _source(d: ScorerDefinition) -> str:
    version = d.origin.version if d.origin is not None else None
    return f"{d.defined_at} ({version})" if version else d.defined_at


def _signature(params: type[BaseModel]) -> str:
    parts = []
    for key, info in params.model_fields.items():
        default = info.get_default(call_default_factory=True)
        parts.append(
            key if info.is_required() else f"{key}?" if default is None else f"{key}={default!r}"
        )
    return ", ".join(parts)


def _needs_sentence(d: ScorerDefinition) -> list[str]:
    """What the scorer needs of a target, as a sentence its schema's description ends with."""
    if not d.needs:
        return []
    needed = "; ".join(f"{p} ({meaning})" for p, meaning in PROVISIONS.items() if p in d.needs)
    return [f"Needs from its target: {needed}."]


class Registry:
    """Scorer definitions by name."""

    def __init__(self) -> None:
        self._defs: dict[str, ScorerDefinition] = {}
        self._origin: Origin | None = None
        self._loaded: set[str] | None = None
        #: Registrations so far: a scorer built before a plugin was loaded anew may be stale.
        self.generation = 0

    @contextmanager
    def loading(self, origin: Origin) -> Iterator[list[str]]:
        """Scorers registered inside the block come from `origin`; yields their names."""
        before, self._origin, self._loaded = (self._origin, self._loaded), origin, set()
        names: list[str] = []
        try:
            yield names
        finally:
            names.extend(sorted(self._loaded))
            self._origin, self._loaded = before

    def scorer(
        self,
        name: str,
        *,
        params: type[P] | None = None,
        kind: Kind | None = None,
        direction: Direction | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        thread_safe: bool = False,
        depends_on: Sequence[str | os.PathLike[str]] = (),
        needs: Provision | Sequence[Provision] = (),
    ) -> Callable[[_Fn[P]], _Fn[P]]:
        """Register `fn(inp, p)` under `name`; its docstring is its documentation.

        `fn` returns a `ScoreResult`, a bool (a binary scorer) or a number (a continuous one).

        Args:
            name: The name suite files use.
            params: The pydantic model validating the scorer's parameters; none by default.
            kind: `binary` (values 1.0/0.0) or `continuous`; continuous when a `direction`
                is given, else binary.
            direction: Which way is better for a continuous scorer; a `direction` param overrides.
            timeout_s: Seconds one call may take before it is stopped (a scorer error); None:
                no limit. Built-in scorers are never stopped.
            thread_safe: True lets several threads call it at once; else one at a time.
            depends_on: Files (relative to the scorer's own file) whose content is part of its
                identity besides its own file's: editing one re-scores its cases.
            needs: What it reads of a sample besides the output, one or several of `latency`,
                `usage` and `scores`: a suite whose target cannot give it is refused when it loads.

        Raises:
            ValueError: a duplicate name, a missing docstring, a params model that cannot work,
                or a need that is none of the known ones.
        """
        chosen: Kind = kind or ("continuous" if direction is not None else "binary")
        way: Direction = direction or "higher_is_better"
        model: type[BaseModel] = params if params is not None else NoParams
        if chosen not in ("binary", "continuous"):
            raise ValueError(f"scorer {name!r}: kind must be 'binary' or 'continuous'")
        if chosen == "binary" and way != "higher_is_better":
            raise ValueError(f"scorer {name!r}: a binary scorer is always higher_is_better")
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"scorer {name!r}: timeout_s must be a number of seconds > 0")
        wanted: tuple[Provision, ...] = (needs,) if isinstance(needs, str) else tuple(needs)
        unknown = [need for need in wanted if need not in PROVISIONS]
        if unknown:
            raise ValueError(
                f"scorer {name!r}: needs {', '.join(map(repr, unknown))}: a scorer may need "
                + " or ".join(PROVISIONS)
            )
        clashes = {"type", *GATE_KEYS} & set(model.model_fields)
        if clashes:
            raise ValueError(
                f"scorer {name!r}: params may not be named {', '.join(sorted(clashes))}"
            )

        def register(fn: _Fn[P]) -> _Fn[P]:
            doc = (inspect.getdoc(fn) or "").strip()
            if not doc:
                raise ValueError(f"scorer {name!r} needs a docstring: it is its documentation")
            home = _source_file(fn)
            extra = tuple(
                (home.parent if home is not None else Path()) / Path(f) for f in depends_on
            )
            for path in extra:
                if not path.is_file():
                    raise ValueError(f"scorer {name!r}: depends_on names no file at {path}")
            definition = ScorerDefinition(
                name,
                fn,
                model,
                chosen,
                doc,
                way,
                timeout_s,
                thread_safe,
                extra,
                self._origin,
                frozenset(wanted),
            )
            self._check_new(definition)
            self._defs[name] = definition
            self.generation += 1
            if self._loaded is not None:
                self._loaded.add(name)
            return fn

        return register

    def _check_new(self, new: ScorerDefinition) -> None:
        """A name is registered once; the same file may register it again (a plugin edited and
        loaded anew), but not twice in one load."""
        old = self._defs.get(new.name)
        if old is None:
            return
        again = self._loaded is not None and new.name in self._loaded
        if again or old.builtin or _source_file(old.fn) != _source_file(new.fn):
            raise ValueError(
                f"scorer {new.name!r} is already registered ({old.defined_at}): "
                "give this one another name"
            )

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
            from noisefloor.scorers import plugins  # only for a name not registered

            plugins.load_entry_point(name, self)
        if name not in self._defs:
            import difflib

            from noisefloor.scorers import plugins  # (the entry points, read for an error only)

            known = sorted({*self.names(), *plugins.entry_point_names()})
            close = difflib.get_close_matches(name, known, n=1)
            raise UnknownScorer(name, known, close[0] if close else None)
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
        """One row per scorer (`name`, `kind`, `params`, `doc`, `needs`: what it needs of a
        target, comma-separated, and `source`: `built-in` or where a user's scorer is defined),
        for listing them to users."""
        return [
            {
                "name": d.name,
                "kind": d.kind,
                "params": _signature(d.params),
                "doc": d.doc.splitlines()[0].strip(),
                "needs": ", ".join(p for p in PROVISIONS if p in d.needs),
                "source": "built-in" if d.builtin else _source(d),
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
                    "description": " ".join([row["doc"], *_needs_sentence(d)]),
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


REGISTRY = Registry()
scorer = REGISTRY.scorer
