"""Where a target comes from, as plain data: a suite's validated `target`, the suite's place and
the store it excludes; enough for another process to build the same target and check its version.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noisefloor.errors import TargetConfigError

if TYPE_CHECKING:
    from noisefloor.suite.suite import Suite
    from noisefloor.targets.kinds import BuiltTarget

__all__ = ["TargetSource"]


@dataclass(frozen=True)
class TargetSource:
    """A picklable recipe of a suite's target and the version (`key`) it must build to."""

    suite: str
    """The suite's name."""
    suite_path: str
    """The suite file, absolute: relative paths of the target resolve against its directory."""
    target: dict[str, Any]
    """The suite's `target`, validated (placeholders of the environment already filled in)."""
    key: str
    """The target's version where the source was taken."""
    cases_path: str | None = None
    store_root: str | None = None

    @classmethod
    def of(cls, suite: Suite, store_root: Path | None, key: str) -> TargetSource:
        """The source of `suite`'s target, whose version is `key`."""
        return cls(
            suite=suite.name,
            suite_path=str(suite.path.resolve()),
            target=suite.target.model_dump(mode="json"),
            key=key,
            cases_path=str(suite.cases_path.resolve()) if suite.cases_path else None,
            store_root=str(store_root.resolve()) if store_root is not None else None,
        )

    def build(self, where: str) -> BuiltTarget:
        """Build the target here and check it is the version the source was taken at.

        Raises:
            TargetConfigError: This machine computes another version (other code, other
                settings), or cannot build the target at all. `where` names this machine.
        """
        from noisefloor.suite.suite import Defaults, Suite
        from noisefloor.targets.kinds import kind_of, spec_model

        spec = spec_model().model_validate(self.target)
        suite = Suite(
            name=self.suite,
            path=Path(self.suite_path),
            target=spec,
            defaults=Defaults(),
            cases=(),
            cases_path=Path(self.cases_path) if self.cases_path else None,
        )
        built = kind_of(spec).build(suite, Path(self.store_root) if self.store_root else None)
        if built.record.key != self.key:
            raise TargetConfigError(
                f"{where} computes target version {built.record.key} of suite {self.suite!r}, "
                f"the client computes {self.key}: it refuses to take samples of another version",
                where=self.suite_path,
                hint="give every worker the same code, settings and environment as the client "
                "(the same checkout at the same path), or stop the stale worker",
            )
        return built
