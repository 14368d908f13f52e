"""Building a suite's target through its kind, and computing its version (`target_key`) and
comparable spec.

The key changes exactly when old samples may no longer stand for the target; the spec is what two
runs must share to be compared at all. Each kind builds its own (`targets/kinds.py`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from noisefloor.suite.model import Suite
from noisefloor.targets.kinds import kind_of
from noisefloor.targets.source import BuiltTarget, TargetPlace, TargetSource

__all__ = ["build_target"]


def build_target(suite: Suite, store_root: Path | None = None) -> BuiltTarget:
    """The suite's target, with its version computed from spec, settings and code, and the
    source another process (a cluster's worker) builds the same target from."""
    place = TargetPlace(suite.path, suite.cases_path, store_root)
    kind = kind_of(suite.target)
    built = kind.build(suite.target, place)
    source = TargetSource.of(suite.name, kind, suite.target, place, built.record.key)
    return dataclasses.replace(built, source=source)
