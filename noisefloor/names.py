"""Names that become file names in the store: suite names, case ids, run ids, labels.

One pattern, read alike by Python, by pydantic's Rust regex and by JSON Schema (ECMA-262).
"""

from __future__ import annotations

__all__ = ["SAFE_NAME"]

#: A letter or digit, then letters, digits, '.', '_' and '-'.
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
