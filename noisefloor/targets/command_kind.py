"""The command kind: how a target of a suite's `target.command` (`targets/command_spec.py`)
builds and versions itself (argv, settings and code fingerprint), and what the ledger shows of it.

The program runner itself is `targets/command.py`, imported only when a target is built.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from noisefloor.errors import TargetConfigError
from noisefloor.model.records import TargetRecord
from noisefloor.store.fingerprint import code_fingerprint
from noisefloor.targets.command_spec import LEDGER_FIELDS, CommandFields
from noisefloor.targets.kinds import TargetKind, secrets_in
from noisefloor.targets.source import BuiltTarget, Secret, TargetPlace

__all__ = ["KIND", "CommandKind"]


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
    ledger_fields = LEDGER_FIELDS

    def selected(self, spec: BaseModel) -> bool:
        """A `target` with `command`."""
        return isinstance(spec, CommandFields) and spec.command is not None

    def build(self, spec: BaseModel, place: TargetPlace) -> BuiltTarget:
        """The command, versioned by its argv, cwd, settings and the fingerprint of its code."""
        from noisefloor.targets.command import CommandTarget

        command = _fields(spec)
        assert command.command is not None
        base_dir = place.base_dir
        cwd = (base_dir / command.cwd) if command.cwd else base_dir
        if not cwd.is_dir():
            raise TargetConfigError(
                f"target.cwd {command.cwd!r} is not a directory (resolved against the suite file's directory)",
                where=str(place.suite_path),
            )
        comparable = {"command": list(command.command), "cwd": _relative(cwd, base_dir)}
        settings = {
            "env": dict(sorted(command.env.items())),
            "timeout_s": command.timeout_s,
            "output": command.output,
            "max_output_bytes": command.max_output_bytes,
        }
        code = code_fingerprint(
            base_dir=base_dir,
            globs=command.fingerprint,
            argv=command.command,
            cwd=cwd,
            exclude=place.not_target(),
        )
        key = self.version_key(comparable, settings, code.entries)
        target = CommandTarget(
            argv=list(command.command),
            cwd=cwd,
            env=dict(command.env),
            timeout_s=command.timeout_s,
            output_format=command.output,
            max_output_bytes=command.max_output_bytes,
            key=key,
            spec=comparable,
        )
        record = TargetRecord(kind=self.name, key=key, spec=comparable, fingerprint=code.entries)
        return BuiltTarget(target, record, secrets_in(command.env), code.tracked)

    def templates(self, target: dict[str, Any]) -> list[tuple[tuple[Any, ...], Any]]:
        """The argv."""
        return [(("target", "command"), target.get("command"))]

    def declared_secrets(self, spec: BaseModel) -> list[Secret]:
        """The variables of the suite's `env` whose names look secret."""
        return secrets_in(_fields(spec).env)

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        """The prompt's hash: what a command receives is its rendered argv."""
        argv = sample.get("argv")
        if not isinstance(argv, list):
            return {}
        return {"prompt_sha": hashlib.sha256(orjson.dumps(argv)).hexdigest()}


KIND = CommandKind()
