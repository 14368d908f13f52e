"""Suite files as pydantic models (the YAML as written, with every registered kind's `target`),
and the validated suite ready to run: its cases with their scorers built.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from noisefloor.names import SAFE_NAME
from noisefloor.scorers.registry import Scorer
from noisefloor.settings import REPEATS, REPEATS_LIMIT
from noisefloor.targets.kinds import TargetKind, TargetSpec, spec_model

__all__ = [
    "SLUG_MAX",
    "SLUG_PATTERN",
    "Case",
    "CaseSpec",
    "Defaults",
    "ScorerBinding",
    "Slug",
    "Suite",
    "SuiteFile",
    "is_slug",
    "known_keys",
    "suite_model",
]

#: Names that become file names (suite names, case ids), as one regular expression that means
#: the same in Python and in JSON Schema (ECMA-262): Python's `$` also matches before a final
#: newline, which `(?!\n)` rules out. The schema carries it as `pattern`, so editors and the
#: loader accept exactly the same names.
SLUG_PATTERN = SAFE_NAME + r"(?!\n)"
#: The longest such name, in characters.
SLUG_MAX = 128
_SLUG = re.compile(SLUG_PATTERN)


def is_slug(value: str) -> bool:
    """Whether `value` is a safe name (`Slug`)."""
    return _SLUG.search(value) is not None and len(value) <= SLUG_MAX


def _slug(value: str) -> str:
    if not is_slug(value):
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
    remote: str | None = None
    """As `--remote` (and `NOISEFLOOR_REMOTE`, which win over it): the store a team shares,
    `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX`, `az://CONTAINER/PREFIX` or
    `file:///SHARED/PATH`."""
    remote_writes: Literal["conditional", "single-writer"] | None = None
    """As NOISEFLOOR_REMOTE_WRITES, which wins over it: `conditional` (the default: the remote's
    server must honour conditional writes, probed on first use), or `single-writer` for a
    server that does not, written by one writer at a time (each write read back)."""
    default_branch: str | None = None
    """The branch whose baseline in the remote a check falls back to (NOISEFLOOR_DEFAULT_BRANCH
    wins over it); unset: the repository's default branch (its remote's HEAD, else git's
    `init.defaultBranch`, else whichever of main and master it has)."""


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

    # built on first use: a suite is validated with `suite_model()`, with every kind's target
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

    index: int
    """Its entry's place in the case's list of scorers."""
    scorer: Scorer
    min_effect: float | None = None
    suspect_drop: float | None = None

    @property
    def label(self) -> str:
        """How runs, scores and reports name it within its case: `index:name`."""
        return f"{self.index}:{self.scorer.name}"


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


def suite_model(kind: TargetKind | None = None) -> type[SuiteFile]:
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


def known_keys() -> dict[str, list[str]]:
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
