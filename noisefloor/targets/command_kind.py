"""The command kind: a suite's `target.command` and its settings, how such a target builds and
versions itself (argv, settings and code fingerprint), and what of its samples the ledger shows.

The program runner itself is `targets/command.py`, imported only when a target is built.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, Field

from noisefloor.errors import TargetConfigError
from noisefloor.model.records import TargetRecord
from noisefloor.store.fingerprint import code_fingerprint, fingerprint_digest
from noisefloor.store.layout import short_hash
from noisefloor.targets.kinds import BuiltTarget, SpecFields, TargetKind, secret_values

if TYPE_CHECKING:
    from noisefloor.suite.suite import Suite

__all__ = ["KIND", "CommandFields", "CommandKind"]


class CommandFields(SpecFields):
    """A suite's `target` fields of a command."""

    command: list[str] | None = Field(default=None, min_length=1)
    """The argv, never run through a shell; `{{input}}`, `{{case_id}}` and `{{repeat}}` are
    filled in per argument."""
    cwd: str | None = None
    """Working directory, relative to the suite file (default: the suite file's directory)."""
    env: dict[str, str] = {}
    """Variables set on top of the inherited environment."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds before the whole process group is killed and the repeat counts as a timeout."""
    fingerprint: list[str] | None = None
    """Globs (relative to the suite file) of the files that make up the target's version."""
    output: Literal["text", "json"] = "text"
    """`json`: output that does not parse is a failed repeat (`error:parse`)."""
    max_output_bytes: int = Field(default=10_000_000, gt=0)
    """Bytes kept per stream; the rest is counted and dropped, and the sample flagged."""


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix() or "."
    except ValueError:
        return os.path.relpath(path.resolve(), base.resolve()).replace(os.sep, "/")


def _fields(spec: BaseModel) -> CommandFields:
    assert isinstance(spec, CommandFields)
    return spec


class CommandKind(TargetKind):
    """A program run once per sample, without a shell."""

    name = "command"
    fields = CommandFields
    choice = "`command` (an argv list)"
    output_name = "stdout"
    fingerprints_code = True

    def selected(self, spec: BaseModel) -> bool:
        """A `target` with `command`."""
        return isinstance(spec, CommandFields) and spec.command is not None

    def build(self, suite: Suite, store_root: Path | None) -> BuiltTarget:
        """The command, versioned by its argv, cwd, settings and the fingerprint of its code."""
        from noisefloor.targets.command import CommandTarget

        spec = _fields(suite.target)
        assert spec.command is not None
        cwd = (suite.base_dir / spec.cwd) if spec.cwd else suite.base_dir
        if not cwd.is_dir():
            raise TargetConfigError(
                f"target.cwd {spec.cwd!r} is not a directory (resolved against the suite file's directory)",
                where=str(suite.path),
            )
        comparable = {"command": list(spec.command), "cwd": _relative(cwd, suite.base_dir)}
        settings = {
            "env": dict(sorted(spec.env.items())),
            "timeout_s": spec.timeout_s,
            "output": spec.output,
            "max_output_bytes": spec.max_output_bytes,
        }
        # neither the store (a committed baseline included) nor the suite's own files are the
        # target: what the suite says about the target is in the spec and settings already
        code = code_fingerprint(
            base_dir=suite.base_dir,
            globs=spec.fingerprint,
            argv=spec.command,
            cwd=cwd,
            exclude=[p for p in (store_root, suite.path, suite.cases_path) if p is not None],
        )
        key = short_hash(
            {
                "kind": self.name,
                "spec": comparable,
                "settings": settings,
                "code": fingerprint_digest(code.entries),
            }
        )
        target = CommandTarget(
            argv=list(spec.command),
            cwd=cwd,
            env=dict(spec.env),
            timeout_s=spec.timeout_s,
            output_format=spec.output,
            max_output_bytes=spec.max_output_bytes,
            key=key,
            spec=comparable,
        )
        record = TargetRecord(kind=self.name, key=key, spec=comparable, fingerprint=code.entries)
        return BuiltTarget(target, record, secret_values(spec.env), code.tracked)

    def templates(self, target: dict[str, Any]) -> list[tuple[tuple[Any, ...], Any]]:
        """The argv."""
        return [(("target", "command"), target.get("command"))]

    def declared_secrets(self, spec: BaseModel) -> list[str]:
        """Values of the suite's `env` whose names look secret."""
        return secret_values(dict(_fields(spec).env))

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        """The prompt's hash: what a command receives is its rendered argv."""
        argv = sample.get("argv")
        if not isinstance(argv, list):
            return {}
        return {"prompt_sha": hashlib.sha256(orjson.dumps(argv)).hexdigest()}


KIND = CommandKind()
