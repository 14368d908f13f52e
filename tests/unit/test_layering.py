"""Which module may know what: the ledger knows nothing of the engine, sampling nothing of the
ledger, doit stays behind one runner, and no module outside `targets/` branches on a kind's name."""

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
        ("ledger.py", "noisefloor.pipeline.engine"),
        ("sampling.py", "noisefloor.ledger.ledger"),
        ("sqlite_db.py", "noisefloor.ledger.ledger"),
        ("ledger_rows.py", "noisefloor.pipeline.engine"),
        ("ledger_rows.py", "noisefloor.store.sqlite"),
        ("public_store.py", "noisefloor.store.store"),
        ("store_files.py", "noisefloor.model.records"),
        ("suite_source.py", "noisefloor.scorers.registry"),
    ],
)
def test_a_module_does_not_import_what_it_must_not_know(module: str, forbidden: str) -> None:
    assert forbidden not in _imports(module)


def _names(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]


def _kind_branches(path: Path) -> list[str]:
    """Comparisons of something called `kind` with a built-in kind's name, as `file:line`."""
    from noisefloor.targets.kinds import kinds

    names = {k.name for k in kinds()}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        parts = [p for operand in (node.left, *node.comparators) for p in _names(operand)]
        named = any(isinstance(p, ast.Constant) and p.value in names for p in parts)
        kind = any(
            (isinstance(p, ast.Attribute) and p.attr == "kind")
            or (isinstance(p, ast.Name) and p.id == "kind")
            for p in parts
        )
        if named and kind:
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_no_module_outside_targets_branches_on_a_kind_name() -> None:
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if "targets" not in p.parts]
    assert [hit for path in outside for hit in _kind_branches(path)] == []


#: The operations, the comparison, the exit-code policy and the command line: one concern each.
SPLIT = [
    "comparison.py",
    "exit_policy.py",
    "operations/run.py",
    "operations/check.py",
    "operations/ab.py",
    "operations/sequential_check.py",
    "operations/sequential_summary.py",
    "operations/deepen.py",
    "operations/rescore.py",
    "operations/resolve.py",
    "cli.py",
    "cli_parser.py",
    "cli_options.py",
    "cli_inputs.py",
    "commands.py",
]


@pytest.mark.parametrize("module", SPLIT)
def test_the_operations_and_the_command_line_stay_small(module: str) -> None:
    lines = (PACKAGE / module).read_text(encoding="utf-8").count("\n")
    assert lines <= 450, f"{module} has {lines} lines"


@pytest.mark.parametrize("module", ["comparison.py", "exit_policy.py"])
def test_comparison_and_the_exit_policy_know_nothing_of_the_operations(module: str) -> None:
    assert [m for m in _imports(module) if m.startswith("noisefloor.operations")] == []


def test_only_the_runner_imports_doit() -> None:
    importers = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if any(name.split(".")[0] == "doit" for name in _imports(str(path.relative_to(PACKAGE))))
    ]
    assert importers == ["doit_runner.py"]
