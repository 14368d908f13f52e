"""Redaction of what a run stores: the suite's patterns and the target's known secret values,
replaced in every string of a sample before it is written, and in the inputs a record keeps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["Redactor"]


class Redactor:
    """Replaces matches of the suite's patterns, and known secret values, in every string."""

    def __init__(self, patterns: Sequence[str] = (), secrets: Sequence[str] = ()) -> None:
        parts = [f"(?:{p})" for p in patterns]
        parts += [re.escape(s) for s in secrets if len(s) >= 4]
        self._regex = re.compile("|".join(parts)) if parts else None

    def __bool__(self) -> bool:
        return self._regex is not None

    def text(self, value: str) -> str:
        """Redact one string."""
        return self._regex.sub("[REDACTED]", value) if self._regex else value

    def apply(self, obj: Any) -> Any:
        """Redact every string inside a JSON-like structure, keys included."""
        if self._regex is None:
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {
                self.text(k) if isinstance(k, str) else k: self.apply(v) for k, v in obj.items()
            }
        if isinstance(obj, list):
            return [self.apply(v) for v in obj]
        return obj
