"""Building a target from a suite, and computing its version (`target_key`) and comparable spec.

The key changes exactly when old samples may no longer stand for the target; the spec is what two
runs must share to be compared at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from noisefloor.envvars import looks_secret
from noisefloor.errors import TargetConfigError
from noisefloor.fingerprint import code_fingerprint, fingerprint_digest
from noisefloor.records import TargetRecord
from noisefloor.store import short_hash
from noisefloor.suite import Suite
from noisefloor.targets.base import Target

__all__ = ["BuiltTarget", "build_target", "secret_values"]


@dataclass
class BuiltTarget:
    """A ready target, its record for the run, and values that must never reach disk."""

    target: Target
    record: TargetRecord
    secrets: list[str]
    tracked: dict[str, str] | None = None
    """The tracked files behind the record's `git:` fingerprint entry, kept in the store."""


def secret_values(env: dict[str, str]) -> list[str]:
    """Values of variables whose names look like secrets."""
    return [v for k, v in env.items() if looks_secret(k) and v]


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix() or "."
    except ValueError:
        return os.path.relpath(path.resolve(), base.resolve()).replace(os.sep, "/")


def build_target(suite: Suite, store_root: Path | None = None) -> BuiltTarget:
    """The suite's target, with its version computed from spec, settings and code."""
    spec = suite.target
    if spec.http is not None:
        return _build_http(suite)
    from noisefloor.targets.command import CommandTarget

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
            "kind": "command",
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
    record = TargetRecord(kind="command", key=key, spec=comparable, fingerprint=code.entries)
    return BuiltTarget(target, record, secret_values(spec.env), code.tracked)


def _build_http(suite: Suite) -> BuiltTarget:
    from noisefloor.targets.http import HttpTarget
    from noisefloor.targets.http_env import proxy_secrets

    http = suite.target.http
    assert http is not None
    api_key = None
    if http.api_key_env:
        api_key = os.environ.get(http.api_key_env)
        if not api_key:
            raise TargetConfigError(
                f"the variable {http.api_key_env} named by target.http.api_key_env is not set",
                where=str(suite.path),
                hint=f"export {http.api_key_env}=... (the key is never written to disk)",
            )
    host = urlsplit(http.base_url).netloc
    comparable: dict[str, Any] = {"host": host, "model": http.model}
    accept_finish = sorted(set(http.accept_finish))
    if accept_finish != ["stop"]:
        # what passes changes with it; left out by default, so that runs from before it stay
        # comparable
        comparable["accept_finish"] = accept_finish
    generation = http.model_dump(
        exclude={"api_key_env", "timeout_s", "max_retries", "retry_budget", "accept_finish"}
    )
    # in the version even by default: samples taken when a null finish failed are not reused
    generation["accept_finish"] = accept_finish
    key = short_hash({"kind": "http", "spec": comparable, "generation": generation})
    target = HttpTarget(http, key=key, spec=comparable, api_key=api_key)
    record = TargetRecord(kind="http", key=key, spec=comparable, fingerprint={})
    secrets = [api_key] if api_key else []
    # a proxy URL's credentials go to the proxy only; an endpoint that quotes them back must not
    # get them into a sample
    secrets += proxy_secrets()
    return BuiltTarget(target, record, secrets + secret_values(dict(os.environ)))
