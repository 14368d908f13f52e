"""Target kinds and their registry: what each kind brings (its fields of a suite's `target`, how
it builds, its checks after a run, what of its envelope the ledger and `show` present).

A kind is one module under `targets/` plus one registration: a line in `_BUILTIN`, or `register`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, create_model, model_validator

from noisefloor.envvars import looks_secret
from noisefloor.records import RunRecord, TargetRecord

if TYPE_CHECKING:
    from noisefloor.suite import Suite
    from noisefloor.targets.base import RawSample, Target
    from noisefloor.targets.source import TargetSource

__all__ = [
    "BuiltTarget",
    "SpecFields",
    "TargetKind",
    "TargetSpec",
    "kind_named",
    "kind_of",
    "kinds",
    "register",
    "secret_values",
    "spec_model",
]

#: The kinds noisefloor ships, by module: each module's `KIND`. Loaded on first use.
_BUILTIN = (
    "noisefloor.targets.command_kind",
    "noisefloor.targets.http_kind",
    "noisefloor.targets.function",
)


@dataclass
class BuiltTarget:
    """A ready target, its record for the run, and values that must never reach disk."""

    target: Target
    record: TargetRecord
    secrets: list[str]
    tracked: dict[str, str] | None = None
    """The tracked files behind the record's `git:` fingerprint entry, kept in the store."""
    source: TargetSource | None = None
    """What another process builds the same target from; None for a target built in-process."""


def secret_values(env: dict[str, str]) -> list[str]:
    """Values of variables whose names look like secrets."""
    return [v for k, v in env.items() if looks_secret(k) and v]


class SpecFields(BaseModel):
    """The fields a kind adds to a suite's `target` (each kind's own model derives from this).

    Built on first use: suites validate the model of every kind's fields (`spec_model`) alone.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)


class TargetKind:
    """One kind of target. The defaults suit a kind with no envelope and no checks after a run."""

    #: The kind's name in run records and samples (`TargetRecord.kind`, `RawSample.kind`).
    name: str = ""
    #: Its fields of a suite's `target`; None for a kind that suites cannot name (in-process).
    fields: type[SpecFields] | None = None
    #: How the "give exactly one of ..." error of a suite's `target` names it.
    choice: str = ""
    #: How `noisefloor show` names the stored output stream.
    output_name: str = "output"
    #: Whether its version moves with a fingerprint of code files, whose changes a comparison
    #: can then name (`version_change`).
    fingerprints_code: bool = False
    #: Target calls at once when neither `--jobs` nor NOISEFLOOR_JOBS says: one, so that
    #: latencies are measured alone.
    default_jobs: int = 1

    def selected(self, spec: BaseModel) -> bool:
        """Whether a validated `target` of a suite is of this kind."""
        return False

    def build(self, suite: Suite, store_root: Path | None) -> BuiltTarget:
        """The suite's target, with its version (`target_key`) and comparable spec."""
        raise NotImplementedError(f"a {self.name} target is not built from a suite")

    def templates(self, target: dict[str, Any]) -> list[tuple[tuple[Any, ...], Any]]:
        """Where in a suite's raw `target` values with `{{...}}` placeholders lie, and the values."""
        return []

    def declared_secrets(self, spec: BaseModel) -> list[str]:
        """Values the suite's own `target` sets that must never reach disk."""
        return []

    def check_run(self, samples: Iterator[RawSample]) -> dict[str, int]:
        """Check a run's samples once taken (raise to refuse the run); return the count of each
        model an endpoint served, for the run record."""
        return {}

    def run_warnings(self, run: RunRecord, side: str) -> list[str]:
        """Warnings a comparison gives about one side's run (`side`: baseline, candidate, run)."""
        return []

    def after_redaction(self, sample: dict[str, Any]) -> None:
        """Recompute, in place, what the envelope derived from text that redaction changed."""

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        """The ledger's columns this kind fills from a stored sample: any of model,
        served_model, base_host, harness_version, finish_reason, prompt_sha, request_sha,
        raw_json. Those not given are NULL."""
        return {}


class TargetSpec(SpecFields):
    """Exactly one of `command` (with its settings) or `http`."""

    @model_validator(mode="after")
    def _one_kind(self) -> TargetSpec:
        named = [k for k in kinds() if k.fields is not None]
        if sum(k.selected(self) for k in named) != 1:
            choices = [k.choice for k in named]
            listed = " or ".join(
                [", ".join(choices[:-1]), choices[-1]] if len(choices) > 1 else choices
            )
            raise ValueError(f"give exactly one of {listed}")
        return self


_kinds: dict[str, TargetKind] = {}
_spec: type[TargetSpec] | None = None


def _load() -> dict[str, TargetKind]:
    if not _kinds:
        for module in _BUILTIN:
            kind: TargetKind = importlib.import_module(module).KIND
            _kinds.setdefault(kind.name, kind)
    return _kinds


def register(kind: TargetKind) -> None:
    """Add a kind (or replace the one of the same name): suites can name it from now on."""
    global _spec
    _load()[kind.name] = kind
    _spec = None


def kinds() -> Sequence[TargetKind]:
    """Every registered kind, built-in kinds first."""
    return list(_load().values())


def kind_named(name: str) -> TargetKind:
    """The kind of a run record or sample; an unknown name (a kind not registered in this
    process) gets the defaults: no checks, no envelope."""
    return _load().get(name) or TargetKind()


def kind_of(spec: BaseModel) -> TargetKind:
    """The kind a suite's validated `target` names."""
    return next(k for k in kinds() if k.fields is not None and k.selected(spec))


def spec_model() -> type[TargetSpec]:
    """The model of a suite's `target`: every registered kind's fields, in registration order."""
    global _spec
    if _spec is None:
        # pydantic orders fields from the last base to the first
        bases: tuple[Any, ...] = (
            *reversed([k.fields for k in kinds() if k.fields is not None]),
            TargetSpec,
        )
        _spec = create_model(
            "TargetSpec",
            __base__=bases,
            __doc__=TargetSpec.__doc__,
            __module__=TargetSpec.__module__,
        )
    return _spec
