"""The pipeline on doit: sample, score, band and compare as tasks that recompute only what changed.

`suite_tasks`, the tasks of a suite for a user's own dodo.py, loads on first use.
"""

from __future__ import annotations

from noisefloor.lazy import lazy_exports

_EXPORTS = {"suite_tasks": "noisefloor.pipeline.tasks"}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
