"""Building a suite's target through its kind, and computing its version (`target_key`) and
comparable spec.

The key changes exactly when old samples may no longer stand for the target; the spec is what two
runs must share to be compared at all. Each kind builds its own (`targets/kinds.py`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from noisefloor.settings import SECRET_MIN_CHARS
from noisefloor.suite.model import Suite
from noisefloor.targets.kinds import TargetKind, kind_of
from noisefloor.targets.source import BuiltTarget, Secret, TargetPlace, TargetSource

__all__ = ["build_target", "built_again"]


def build_target(suite: Suite, store_root: Path | None = None) -> BuiltTarget:
    """The suite's target, with its version computed from spec, settings and code, and the
    source another process (a cluster's worker) builds the same target from."""
    place = TargetPlace(suite.path, suite.cases_path, store_root)
    kind = kind_of(suite.target)
    built = kind.build(suite.target, place)
    source = TargetSource.of(suite.name, kind, suite.target, place, built.record.key)
    if not kind.fingerprints_code and not _holds_secret(source.target, built.secrets):
        record = built.record.model_copy(update={"settings": source.target})
        return dataclasses.replace(built, record=record, source=source)
    return dataclasses.replace(built, source=source)


def built_again(
    suite: str, kind: TargetKind, settings: dict[str, Any], place: TargetPlace
) -> BuiltTarget:
    """The target of a kind whose version is its settings, built from a run record's
    `settings` (a baseline's, for a concurrent control) at `place`, for suite `suite`."""
    assert kind.fields is not None
    spec = kind.fields.model_validate(settings)
    built = kind.build(spec, place)
    source = TargetSource.of(suite, kind, spec, place, built.record.key)
    return dataclasses.replace(built, source=source)


def _holds_secret(value: Any, secrets: list[Secret]) -> bool:
    """Whether a secret's value stands in `value`: as a whole string, or inside one when it is
    long enough to be a credential."""
    if isinstance(value, dict):
        return any(_holds_secret(v, secrets) for v in value.values())
    if isinstance(value, list):
        return any(_holds_secret(v, secrets) for v in value)
    if isinstance(value, str):
        return any(
            s.value == value or (len(s.value) >= SECRET_MIN_CHARS and s.value in value)
            for s in secrets
        )
    return False
