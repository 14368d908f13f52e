"""Which module may know what: the ledger knows nothing of the engine, sampling nothing of the
ledger, and no module outside `targets/` branches on a target kind's name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "noisefloor"


def _imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("ledger.py", "noisefloor.engine"),
        ("sampling.py", "noisefloor.ledger"),
        ("sqlite_db.py", "noisefloor.ledger"),
    ],
)
def test_a_module_does_not_import_what_it_must_not_know(module: str, forbidden: str) -> None:
    assert forbidden not in _imports(module)
