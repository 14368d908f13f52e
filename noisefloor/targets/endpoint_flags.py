"""The endpoint flags (`--base-url`, `--model`, ...): an HTTP target's settings given on the
command line, over a suite's own `target.http`; plain data, loaded without the HTTP kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from noisefloor.errors import UsageError

__all__ = ["EndpointFlags"]

Loc = tuple[Any, ...]


@dataclass(frozen=True)
class EndpointFlags:
    """Endpoint settings given on the command line, each overriding the suite's `target.http`.

    A field left None is not given; each field's flag is its name in dashes (`--max-tokens`).
    """

    base_url: str | None = None
    model: str | None = None
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    system: str | None = None

    def given(self) -> dict[Loc, tuple[str, Any]]:
        """The path in the suite, the flag and the value of each setting given."""
        return {
            ("target", "http", name): ("--" + name.replace("_", "-"), value)
            for name, value in vars(self).items()
            if value is not None
        }

    def apply(self, data: dict[str, Any], path: Path) -> None:
        """Put the flags' values into a suite's raw data, over its own."""
        given = self.given()
        target = data.get("target")
        if not given or not isinstance(target, dict):
            return
        if isinstance(target.get("http"), dict):
            target["http"].update({loc[-1]: value for loc, (_, value) in given.items()})
        elif "http" not in target and "command" in target:
            flags = ", ".join(flag for flag, _ in given.values())
            raise UsageError(
                f"{flags} set values of an endpoint target, and the target of {path} is a command",
                hint="drop them, or give a suite whose target is `http:`",
            )

    @staticmethod
    def target(api_key_env: str | None) -> dict[str, Any]:
        """The raw `target` of a suite made of flags alone (the quarantine-lane `--cases`)."""
        return {"http": {"api_key_env": api_key_env} if api_key_env else {}}
