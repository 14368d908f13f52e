"""Targets: the programs under test, and the one protocol every kind of target implements.

Names load on first use, so that reading samples never imports subprocess or HTTP machinery.
"""

from __future__ import annotations

from noisefloor.lazy import lazy_exports

_EXPORTS = {
    "CaseInput": "noisefloor.targets.base",
    "CommandTarget": "noisefloor.targets.command",
    "FunctionTarget": "noisefloor.targets.function",
    "HttpTarget": "noisefloor.targets.http",
    "Outcome": "noisefloor.targets.base",
    "RawSample": "noisefloor.targets.base",
    "Stream": "noisefloor.targets.base",
    "Target": "noisefloor.targets.base",
    "TargetFunction": "noisefloor.targets.function",
    "VersionedTarget": "noisefloor.targets.base",
    "decode_stream": "noisefloor.targets.base",
    "describe_status": "noisefloor.targets.command",
    "utc_now_iso": "noisefloor.targets.command",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
