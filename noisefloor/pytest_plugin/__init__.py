"""The pytest plugin: marked tests checked as `noisefloor check` checks a suite, one suite per
test, their repeats taken in the session's own process (`plugin.py` is the `pytest11` entry).
"""

from __future__ import annotations

import pytest

__all__ = ["InconclusiveWarning"]


class InconclusiveWarning(pytest.PytestWarning):
    """A sampled test whose change could not be told from noise: it passes, unless
    `--noisefloor-strict`."""
