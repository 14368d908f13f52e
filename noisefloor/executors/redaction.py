"""Redaction of what a run stores: the suite's patterns, and the target's secrets long enough to
be told from text, replaced in every string of a sample before its write; what it did, as warnings.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from noisefloor.settings import SECRET_MIN_CHARS
from noisefloor.targets.source import Secret

__all__ = ["REDACTED", "Redactor"]

#: What a redacted value is replaced by.
REDACTED = "[REDACTED]"


class Redactor:
    """Replaces matches of the suite's patterns, and the values of secrets of at least
    `SECRET_MIN_CHARS` characters, in every string; keeps count of the secrets it found in the
    samples it was given, for the warnings of the run that took them.

    A shorter secret is replaced nowhere: the values local servers take as keys (`x`, `none`,
    `ollama`) are pieces of words, and replacing them would rewrite what the target printed.
    """

    def __init__(self, patterns: Sequence[str] = (), secrets: Sequence[Secret] = ()) -> None:
        # each on its own, as the suite file checked it: joined, one pattern's groups would
        # renumber the next one's backreferences, and two groups of one name would not compile
        self._patterns = [re.compile(p) for p in patterns]
        holders: dict[str, str] = {}
        # a value the target uses itself is named by its own variable, not by an ambient one
        for secret in sorted(secrets, key=lambda s: s.ambient):
            holders.setdefault(secret.value, secret.variable)
        # the longest first: a secret holding another is replaced whole
        self._secrets = sorted(
            ((value, variable) for value, variable in holders.items() if _redactable(value)),
            key=lambda pair: -len(pair[0]),
        )
        self._too_short = sorted(
            {s.variable for s in secrets if not s.ambient and s.value and not _redactable(s.value)}
        )
        self._found: Counter[str] = Counter()

    def __bool__(self) -> bool:
        return bool(self._patterns or self._secrets)

    def text(self, value: str) -> str:
        """Redact one string."""
        return self._redact(value, set())

    def sample(self, data: dict[str, Any]) -> dict[str, Any]:
        """Redact a sample as dumped (`RawSample.model_dump(mode="json")`), keys included, and
        name in its `redacted` every variable whose value it held, as the target found them too.

        Called by one thread at a time: the takes' writers add samples in turn."""
        found = set(data.get("redacted") or ())
        redacted = self._walk(data, found) if self else data
        redacted["redacted"] = sorted(found) or None
        self._found.update(found)
        return redacted

    def warnings(self) -> list[str]:
        """What a report of the samples given says: the secrets too short to redact, once; each
        secret found, with the samples it was found in."""
        notes = []
        if self._too_short:
            many = len(self._too_short) > 1
            holds, it = ("hold secrets", "them") if many else ("holds a secret", "it")
            notes.append(
                f"{' and '.join(self._too_short)} {holds} too short to redact (under "
                f"{SECRET_MIN_CHARS} characters, a secret reads as a piece of ordinary text): "
                f"noisefloor stores {it} nowhere, and keeps what the target printed as it was"
            )
        for variable, samples in sorted(self._found.items()):
            plural = "sample" if samples == 1 else "samples"
            notes.append(
                f"the value of {variable} was found in {samples} {plural} taken and replaced "
                f"there by {REDACTED} before the write: their scorers read the replacement"
            )
        return notes

    def _redact(self, value: str, found: set[str]) -> str:
        for secret, variable in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
                found.add(variable)
        for pattern in self._patterns:
            value = pattern.sub(REDACTED, value)
        return value

    def _walk(self, obj: Any, found: set[str]) -> Any:
        """Redact every string inside a JSON-like structure, keys included."""
        if isinstance(obj, str):
            return self._redact(obj, found)
        if isinstance(obj, dict):
            return {
                self._redact(k, found) if isinstance(k, str) else k: self._walk(v, found)
                for k, v in obj.items()
            }
        if isinstance(obj, list):
            return [self._walk(v, found) for v in obj]
        return obj


def _redactable(value: str) -> bool:
    """Whether a secret is long enough to be told from text (`SECRET_MIN_CHARS`)."""
    return len(value) >= SECRET_MIN_CHARS
