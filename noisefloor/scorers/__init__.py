"""Scorers: the registry, the built-in scorers, the guarded calls into them and users' plugins.

Importing the package registers the built-in scorers; its names are what a user's scorer uses.
"""

from __future__ import annotations

# The built-ins register through the same decorator as any other scorer, on the package's import.
from noisefloor.scorers import builtin as _builtin  # noqa: F401
from noisefloor.scorers.registry import REGISTRY, scorer
from noisefloor.scorers.score import NoParams, NotJson, Params, ScoreInput, ScoreResult

__all__ = ["REGISTRY", "NoParams", "NotJson", "Params", "ScoreInput", "ScoreResult", "scorer"]
