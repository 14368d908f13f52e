"""Target kinds and their registry: what each kind brings (its fields of a suite's `target`, how
it builds from them and the place they live, what its samples give scorers, its checks after a
run, what of its envelope the ledger and `show` present).

A kind registers with `register`; a built-in one is its module and its data module (fields, ledger
columns) under `targets/`, named in `_BUILTIN` and `_DATA`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, create_model, model_validator

from noisefloor.envvars import looks_secret
from noisefloor.model.records import RunRecord
from noisefloor.settings import JOBS
from noisefloor.store.fingerprint import fingerprint_digest
from noisefloor.store.layout import short_hash
from noisefloor.targets.provisions import Provision
from noisefloor.targets.source import BuiltTarget, Secret, TargetPlace

if TYPE_CHECKING:
    from noisefloor.targets.base import RawSample

__all__ = [
    "LedgerField",
    "SpecFields",
    "TargetKind",
    "TargetSpec",
    "kind_for",
    "kind_named",
    "kind_of",
    "kinds",
    "ledger_fields",
    "register",
    "secrets_in",
    "spec_model",
]

#: The kinds noisefloor ships, by name: each module's `KIND`, loaded on first use.
_BUILTIN = {
    "command": "noisefloor.targets.command_kind",
    "http": "noisefloor.targets.http_kind",
    "function": "noisefloor.targets.function",
    "inspect": "noisefloor.targets.inspect_kind",
}
#: The built-in kind each key of a suite's `target` names: a target holding one kind's fields
#: alone is validated with that kind's model (`spec_model(kind)`), the other kinds not loaded.
_NAMED_BY = {"command": "command", "http": "http", "inspect": "inspect"}
#: The module of each built-in kind's data (its fields, its `LEDGER_FIELDS`): the ledger reads
#: their columns without loading the kinds themselves (a command's run never loads HTTP's).
_DATA = {
    "command": "noisefloor.targets.command_spec",
    "http": "noisefloor.targets.http_spec",
    "inspect": "noisefloor.targets.inspect_spec",
}


@dataclass(frozen=True)
class LedgerField:
    """A column of the ledger's `samples` table that a kind fills from its samples (text)."""

    name: str
    after: str | None = None
    """The column it follows in the table; None: after the last one."""


def secrets_in(env: Mapping[str, str], *, ambient: bool = False) -> list[Secret]:
    """The variables of `env` whose names look like secrets, with their values (`ambient`: as
    `Secret.ambient`)."""
    return [Secret(k, v, ambient) for k, v in env.items() if looks_secret(k) and v]


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
    #: Target calls at once when neither `--jobs` nor NOISEFLOOR_JOBS says: `settings.JOBS`
    #: (one, so that latencies are measured alone) unless the kind says otherwise.
    default_jobs: int = JOBS
    #: Whether a run's record asks `check_run` about its samples; False: no sample is looked at.
    checks_runs: bool = False
    #: What its samples give scorers besides the output (`targets/provisions.py`): a suite whose
    #: scorers need more is refused when it loads. Every kind times its calls (`wall_s`) unless
    #: it says otherwise; one whose answers report token usage (an OpenAI `usage` object in the
    #: envelope) adds `usage`, which reports then sum (`noisefloor.model.usage`): without it,
    #: reports show none.
    provides: frozenset[Provision] = frozenset({"latency"})
    #: Why another version of its target cannot run beside the candidate in one session (a
    #: concurrent control, `operations/baseline_version.py`), or None when it can be built again.
    cannot_run_beside: str | None = None

    def selected(self, spec: BaseModel) -> bool:
        """Whether a validated `target` of a suite is of this kind."""
        return False

    #: The ledger's columns it fills (`ledger_columns`); a name no kind declared before adds a
    #: column to the ledger's `samples`.
    ledger_fields: tuple[LedgerField, ...] = ()

    def build(self, spec: BaseModel, place: TargetPlace) -> BuiltTarget:
        """The target a suite's validated `target` names, with its version (`target_key`) and
        comparable spec."""
        raise NotImplementedError(f"a {self.name} target is not built from a suite")

    def version_key(
        self, spec: Mapping[str, Any], settings: Mapping[str, Any], code: dict[str, str]
    ) -> str:
        """A version's key (`TargetRecord.key`): the kind, what its samples are compared by, the
        settings a sample depends on, and the digest of the code files it fingerprints."""
        digest = fingerprint_digest(code)
        return short_hash({"kind": self.name, "spec": spec, "settings": settings, "code": digest})

    def cases(self, spec: BaseModel, place: TargetPlace) -> list[dict[str, Any]] | None:
        """The cases a target brings itself (an Inspect task's samples: each `id` and `input`),
        for a suite that lists none; None: a suite lists its own."""
        return None

    def default_scorers(self, spec: BaseModel, place: TargetPlace) -> list[str | dict[str, Any]]:
        """The scorers of a case when neither it nor `defaults.scorers` names any."""
        return []

    def templates(self, target: dict[str, Any]) -> list[tuple[tuple[Any, ...], Any]]:
        """Where in a suite's raw `target` values with `{{...}}` placeholders lie, and the values."""
        return []

    def declared_secrets(self, spec: BaseModel) -> list[Secret]:
        """Values the suite's own `target` sets that must never reach disk."""
        return []

    def run_fact(self, sample: RawSample) -> Any:
        """What `check_run` needs of one sample (when `checks_runs`): a small, hashable value.
        A run keeps it for each sample it writes, instead of reading the sample back."""
        return None

    def check_run(self, facts: Iterator[Any]) -> dict[str, int]:
        """Check a run once taken, from the `run_fact` of each of its samples (raise to refuse
        the run); return the count of each model an endpoint served, for the run record.
        Called only for a kind that `checks_runs`."""
        return {}

    def run_warnings(self, run: RunRecord, side: str) -> list[str]:
        """Warnings a comparison gives about one side's run (`side`: baseline, candidate, run)."""
        return []

    def after_redaction(self, sample: dict[str, Any]) -> None:
        """Recompute, in place, what the envelope derived from text that redaction changed."""

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        """The ledger's columns this kind fills from a stored sample, of those it declares
        (`ledger_fields`). Those not given are NULL."""
        return {}

    def probe(self, settings: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        """For a target built again from kept `settings` (an endpoint, for a concurrent
        control): the same settings making one attempt per call, and where the calls go, so
        that one call shows whether it answers before a control leans on it; None when there is
        nothing to probe."""
        return None


class TargetSpec(SpecFields):
    """Exactly one of `command` (with its settings) or `http`."""

    @model_validator(mode="after")
    def _one_kind(self) -> TargetSpec:
        held = [k for k in list(_kinds.values()) if k.fields and isinstance(self, k.fields)]
        if sum(k.selected(self) for k in held) != 1:
            choices = [k.choice for k in kinds() if k.fields is not None]
            listed = " or ".join(
                [", ".join(choices[:-1]), choices[-1]] if len(choices) > 1 else choices
            )
            raise ValueError(f"give exactly one of {listed}")
        return self


_kinds: dict[str, TargetKind] = {}
_spec: type[TargetSpec] | None = None
_single: dict[TargetKind, type[TargetSpec]] = {}


def _builtin(name: str) -> TargetKind:
    kind: TargetKind = importlib.import_module(_BUILTIN[name]).KIND
    return _kinds.setdefault(kind.name, kind)


def _load() -> dict[str, TargetKind]:
    """Every kind, the built-in ones first in their order, then those registered."""
    if list(_kinds)[: len(_BUILTIN)] != list(_BUILTIN):
        for name in _BUILTIN:
            _builtin(name)
        ordered = {name: _kinds[name] for name in _BUILTIN} | _kinds
        _kinds.clear()
        _kinds.update(ordered)
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
    if name in _kinds:
        return _kinds[name]
    return _builtin(name) if name in _BUILTIN else TargetKind()


def ledger_fields() -> list[LedgerField]:
    """The ledger columns of every kind, each named once (where a kind first declares it): the
    built-in kinds' from their data modules, then those of kinds registered in this process."""
    declared = [
        field
        for module in _DATA.values()
        for field in importlib.import_module(module).LEDGER_FIELDS
    ]
    declared += [
        f for k in list(_kinds.values()) if k.name not in _BUILTIN for f in k.ledger_fields
    ]
    first: dict[str, LedgerField] = {}
    for field in declared:
        first.setdefault(field.name, field)
    return list(first.values())


def kind_of(spec: BaseModel) -> TargetKind:
    """The kind a suite's validated `target` names (looked for among the kinds loaded first)."""
    loaded = [k for k in list(_kinds.values()) if k.fields is not None and k.selected(spec)]
    return loaded[0] if loaded else next(k for k in kinds() if k.fields and k.selected(spec))


def kind_for(target: Any) -> TargetKind | None:
    """The one built-in kind a suite's raw `target` names, when it holds that kind's fields
    alone and no kind is registered besides the built-in ones; None when validating it (and
    wording what is wrong with it) takes every kind's model."""
    if not isinstance(target, dict) or not all(
        getattr(sys.modules.get(_BUILTIN.get(name, "")), "KIND", None) is kind
        for name, kind in _kinds.items()
    ):
        return None
    named = [name for key, name in _NAMED_BY.items() if key in target]
    if len(named) != 1:
        return None
    kind = kind_named(named[0])
    assert kind.fields is not None
    return kind if set(target) <= set(kind.fields.model_fields) else None


def spec_model(kind: TargetKind | None = None) -> type[TargetSpec]:
    """The model of a suite's `target`: every registered kind's fields, in registration order;
    or `kind`'s alone, the keys naming the other built-in kinds held as None."""
    global _spec
    if kind is not None:
        if kind not in _single:
            others: dict[str, Any] = {
                key: (None, None) for key, name in _NAMED_BY.items() if name != kind.name
            }
            own: tuple[Any, ...] = (kind.fields, TargetSpec)
            _single[kind] = create_model(
                "TargetSpec",
                __base__=own,
                __doc__=TargetSpec.__doc__,
                __module__=TargetSpec.__module__,
                **others,
            )
        return _single[kind]
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
