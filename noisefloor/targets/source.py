"""A built target and where it comes from: the place a suite's target lives, the target built
there with the secrets it must never write, and as plain data what another process builds the
same target from and checks its version.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from noisefloor.errors import TargetConfigError
from noisefloor.model.records import TargetRecord

if TYPE_CHECKING:
    from noisefloor.model.usage import Price
    from noisefloor.targets.base import Target

__all__ = ["BuiltTarget", "Secret", "TargetBuilder", "TargetPlace", "TargetSource"]


@dataclass(frozen=True)
class Secret:
    """A value that must never reach disk, and the variable that holds it."""

    variable: str
    """The variable's name: what a warning names (never the value)."""
    value: str
    ambient: bool = False
    """A variable of the environment the target does not use itself (an endpoint's caller's
    other credentials): redacted like the others, but one too short to redact is left alone
    without a warning, since most such are not credentials at all (`KEYTIMEOUT=1`)."""


@dataclass(frozen=True)
class TargetPlace:
    """Where a suite's target lives: the suite file, against whose directory its relative paths
    resolve, and the files beside it that are the suite's, never the target's."""

    suite_path: Path
    cases_path: Path | None = None
    """The suite's `cases_file`, if any."""
    store_root: Path | None = None
    """The store the suite's runs go to (a committed baseline may lie in the target's tree)."""

    @property
    def base_dir(self) -> Path:
        """The directory relative paths of the target are resolved against."""
        return self.suite_path.parent

    def not_target(self) -> list[Path]:
        """The store and the suite's own files: what the suite says about the target is in its
        spec already, so none of them is part of the target's code."""
        return [p for p in (self.store_root, self.suite_path, self.cases_path) if p is not None]


@dataclass
class BuiltTarget:
    """A ready target, its record for the run, and values that must never reach disk."""

    target: Target
    record: TargetRecord
    secrets: list[Secret]
    tracked: dict[str, str] | None = None
    """The tracked files behind the record's `git:` fingerprint entry, kept in the store."""
    source: TargetSource | None = None
    """What another process builds the same target from; None for a target built in-process."""
    price: Price | None = None
    """What its calls cost per million tokens, when the suite says (`target.http.price`)."""


class TargetBuilder(Protocol):
    """What builds a target from its fields of a suite's `target`: its kind (`TargetKind`)."""

    @property
    def fields(self) -> type[BaseModel] | None:
        """The model of its fields."""

    def build(self, spec: BaseModel, place: TargetPlace) -> BuiltTarget:
        """The target `spec` names, living at `place`."""


@dataclass(frozen=True)
class TargetSource:
    """A picklable recipe of a suite's target and the version (`key`) it must build to."""

    suite: str
    """The suite's name."""
    suite_path: str
    """The suite file, absolute: relative paths of the target resolve against its directory."""
    kind: TargetBuilder
    """The target's kind, which builds it."""
    target: dict[str, Any]
    """The kind's fields of the suite's `target`, validated (placeholders of the environment
    already filled in)."""
    key: str
    """The target's version where the source was taken."""
    cases_path: str | None = None
    store_root: str | None = None

    @classmethod
    def of(
        cls, suite: str, kind: TargetBuilder, spec: BaseModel, place: TargetPlace, key: str
    ) -> TargetSource:
        """The source of the target `spec` of suite `suite`, living at `place`, built by `kind`
        to version `key`."""
        assert kind.fields is not None
        return cls(
            suite=suite,
            suite_path=str(place.suite_path.resolve()),
            kind=kind,
            target=spec.model_dump(mode="json", include=set(kind.fields.model_fields)),
            key=key,
            cases_path=str(place.cases_path.resolve()) if place.cases_path else None,
            store_root=str(place.store_root.resolve()) if place.store_root is not None else None,
        )

    def place(self) -> TargetPlace:
        """Where the target lives, as on the machine the source was taken."""
        return TargetPlace(
            suite_path=Path(self.suite_path),
            cases_path=Path(self.cases_path) if self.cases_path else None,
            store_root=Path(self.store_root) if self.store_root else None,
        )

    def build(self, where: str) -> BuiltTarget:
        """Build the target here and check it is the version the source was taken at.

        Raises:
            TargetConfigError: This machine computes another version (other code, other
                settings), or cannot build the target at all. `where` names this machine.
        """
        assert self.kind.fields is not None
        spec = self.kind.fields.model_validate(self.target)
        built = self.kind.build(spec, self.place())
        if built.record.key != self.key:
            raise TargetConfigError(
                f"{where} computes target version {built.record.key} of suite {self.suite!r}, "
                f"the client computes {self.key}: it refuses to take samples of another version",
                where=self.suite_path,
                hint="give every worker the same code, settings and environment as the client "
                "(the same checkout at the same path), or stop the stale worker",
            )
        return built
