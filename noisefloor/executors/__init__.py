"""Where a run's target calls are made: the executor a `--executor` value names, chosen once from
a registry of patterns (`local`, the default, and a Dask cluster's `dask://HOST:PORT`).

Naming an executor imports nothing of Dask; only taking samples on a cluster does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from noisefloor.errors import UsageError

if TYPE_CHECKING:
    from noisefloor.executors.base import Executor

__all__ = ["ExecutorFactory", "executor_of", "register"]

#: Makes the executor a `--executor` value names, from that value's match of its pattern.
ExecutorFactory = Callable[[re.Match[str]], "Executor"]


def _local(match: re.Match[str]) -> Executor:
    # the executors' modules are imported once one is named: whatever imports this package's
    # other modules does not pay for them
    from noisefloor.executors.local import LOCAL

    return LOCAL


def _dask(match: re.Match[str]) -> Executor:
    from noisefloor.executors.dask import DaskExecutor

    return DaskExecutor(match.group(0))


_registry: list[tuple[re.Pattern[str], ExecutorFactory]] = [
    (re.compile(r"(?:local)?"), _local),
    (re.compile(r"dask://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})"), _dask),
]


def register(pattern: str, factory: ExecutorFactory) -> None:
    """Make `--executor` values that match `pattern` whole name the executor `factory` makes of
    the match. A pattern is tried after those registered before it."""
    _registry.append((re.compile(pattern), factory))


def executor_of(value: str | None) -> Executor:
    """The executor a `--executor` value (or `NOISEFLOOR_EXECUTOR`) names: the local one for
    `local` and an empty value, a Dask cluster's for `dask://HOST:PORT`.

    Raises:
        UsageError: Any other value.
    """
    value = (value or "").strip()
    for pattern, factory in _registry:
        match = pattern.fullmatch(value)
        if match is not None:
            return factory(match)
    raise UsageError(
        f"--executor {value!r} names no executor",
        hint="give `local` (the default) or a Dask scheduler as dask://HOST:PORT "
        "(e.g. dask://10.0.0.5:8786); the variable NOISEFLOOR_EXECUTOR takes the same values",
    )
