"""Where a run's target calls are made: here (the default) or by a Dask cluster's workers.

Naming an executor imports nothing of Dask; only taking samples on a cluster does.
"""

from __future__ import annotations

import re

from noisefloor.errors import UsageError

__all__ = ["executor_of"]

_DASK = re.compile(r"dask://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})")


def executor_of(value: str | None) -> str | None:
    """The executor a `--executor` value (or `NOISEFLOOR_EXECUTOR`) names: `dask://HOST:PORT`,
    or None for `local` and an empty value.

    Raises:
        UsageError: Any other value.
    """
    value = (value or "").strip()
    if value in ("", "local"):
        return None
    if _DASK.fullmatch(value) is None:
        raise UsageError(
            f"--executor {value!r} names no executor",
            hint="give `local` (the default) or a Dask scheduler as dask://HOST:PORT "
            "(e.g. dask://10.0.0.5:8786); the variable NOISEFLOOR_EXECUTOR takes the same values",
        )
    return value
