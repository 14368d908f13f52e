"""Building a target from a suite, and computing its version (`target_key`) and comparable spec.

The key changes exactly when old samples may no longer stand for the target; the spec is what two
runs must share to be compared at all. Each kind builds its own (`targets/kinds.py`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from noisefloor.suite.suite import Suite
from noisefloor.targets.kinds import BuiltTarget, kind_of
from noisefloor.targets.source import TargetSource

__all__ = ["BuiltTarget", "build_target"]


def build_target(suite: Suite, store_root: Path | None = None) -> BuiltTarget:
    """The suite's target, with its version computed from spec, settings and code, and the
    source another process (a cluster's worker) builds the same target from."""
    built = kind_of(suite.target).build(suite, store_root)
    return dataclasses.replace(built, source=TargetSource.of(suite, store_root, built.record.key))
