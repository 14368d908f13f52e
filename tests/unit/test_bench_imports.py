"""The benchmarks import nothing from the tests: what both need lives in the `bench` package,
which the tests import instead."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def imported_modules(path: Path) -> list[str]:
    """Every module a file imports, at any depth (inside functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            first = node.args[0]
            text = first.value if isinstance(first, ast.Constant) else first.values[0]
            if isinstance(text, ast.Constant):
                text = text.value
            names.append(str(text))
    return names


def test_no_bench_file_imports_the_tests() -> None:
    files = sorted(BENCH.rglob("*.py"))
    assert files
    offenders = [
        f"{path.relative_to(BENCH.parent)}: {name}"
        for path in files
        for name in imported_modules(path)
        if name == "tests" or name.startswith("tests.")
    ]
    assert offenders == []


def test_the_check_sees_an_import_of_the_tests(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        "import importlib\ndef f():\n    from tests.conftest import FAKE\n"
        "importlib.import_module(f'tests.x.{1}')\n",
        encoding="utf-8",
    )
    assert imported_modules(script) == ["importlib", "tests.conftest", "tests.x."]
