"""The JSON report: the contract other tools parse (README); fields are added, never renamed.

Keys are sorted and the output ends with a newline.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["render"]


def render(report: dict[str, Any] | list[Any]) -> str:
    """The report (or a list of rows) as indented JSON."""
    return orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
