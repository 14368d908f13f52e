"""Targets: the programs under test, and the one protocol every kind of target implements.

Re-exports the public names of `base`, `command` and `function`.
"""

from __future__ import annotations

from noisefloor.targets.base import CaseInput, Outcome, RawSample, Stream, Target, decode_stream
from noisefloor.targets.command import CommandTarget, describe_status, utc_now_iso
from noisefloor.targets.function import FunctionTarget, TargetFunction

__all__ = [
    "CaseInput",
    "CommandTarget",
    "FunctionTarget",
    "Outcome",
    "RawSample",
    "Stream",
    "Target",
    "TargetFunction",
    "decode_stream",
    "describe_status",
    "utc_now_iso",
]
