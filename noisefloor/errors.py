"""Exit codes and the one error hierarchy every harness fault belongs to.

A program's failure is data (a field of a sample); these exceptions are the harness's own faults.

    NoisefloorError                 exit 3, "the harness, its configuration or its invocation"
     ├── SuiteError                 a suite or cases file that does not validate
     ├── TargetConfigError          a target that cannot be built from its configuration
     ├── StoreError                 a corrupt, missing or foreign file under the store root
     ├── RemoteError                a shared remote store unreachable, refusing, or misconfigured
     │    └── PointerMoved          a baseline pointer another runner moved first
     ├── BaselineMissing            no baseline where one is required
     ├── TargetChanged              two runs of different target specs compared without consent
     └── UsageError                 a command line that is wrong (unknown flag, bad value)
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

__all__ = [
    "BaselineMissing",
    "CorruptFile",
    "ExecutorError",
    "ExitCode",
    "NoisefloorError",
    "PointerMoved",
    "RemoteError",
    "StoreError",
    "SuiteError",
    "TargetChanged",
    "TargetConfigError",
    "UsageError",
]


class ExitCode(enum.IntEnum):
    """The process exit codes; CI acts on them, so they never collide."""

    #: Nothing regressed.
    OK = 0
    #: A case regressed (or, with ``--strict``, is inconclusive).
    REGRESSED = 1
    #: A case broke: the target no longer produces valid results.
    BROKEN = 2
    #: The harness, its configuration or its invocation is wrong.
    HARNESS = 3
    #: Stopped by Ctrl-C (SIGINT): 128 + 2, as shells report a signal; finished samples are kept.
    INTERRUPTED = 130
    #: Stopped by SIGTERM: 128 + 15; finished samples are kept.
    TERMINATED = 143


class NoisefloorError(Exception):
    """A harness fault: says what is wrong, where, and how to fix it."""

    exit_code: ExitCode = ExitCode.HARNESS

    def __init__(
        self,
        message: str,
        where: str | None = None,
        hint: str | None = None,
        details: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint
        self.details = details or []

    def format_message(self) -> str:
        """One line per problem, then the hint, ready for stderr."""
        head = f"{self.where}: {self.message}" if self.where else self.message
        lines = [head, *(f"  {d}" for d in self.details)]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format_message()


class SuiteError(NoisefloorError):
    """A suite file or cases file that does not load or does not validate."""


class TargetConfigError(NoisefloorError):
    """A target whose configuration cannot work (unknown placeholder, missing key variable)."""


class StoreError(NoisefloorError):
    """A store file that is corrupt, missing, or outside the store root."""


class CorruptFile(StoreError):
    """A store file that does not parse or validate; `path` names it, so a derived one can be
    dropped and built again."""

    def __init__(self, message: str, path: Path, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.path = path


class RemoteError(NoisefloorError):
    """A remote store that cannot be reached or refuses a request: its URL and the cause are in
    the message; nothing local is lost."""


class PointerMoved(RemoteError):
    """A baseline pointer in the remote moved between this command's read and its write."""


class BaselineMissing(NoisefloorError):
    """No baseline exists where the command requires one."""


class TargetChanged(NoisefloorError):
    """The baseline and candidate were produced by different target specs."""


class ExecutorError(NoisefloorError):
    """The cluster that takes the samples cannot be reached, or went away during a run."""


class UsageError(NoisefloorError):
    """The command line itself is wrong (unknown flag, bad value)."""
