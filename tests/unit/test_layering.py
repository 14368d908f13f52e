"""The package's layers, from the model at the bottom to the command line on top: no import runs
up a layer, no two modules import each other, and each package keeps to what it must know."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "noisefloor"

#: Bottom to top: a module may import its own layer and those below it, never one above. The
#: first layer is the package root and the modules every step shares; a package is one layer.
LAYERS: list[tuple[str, ...]] = [
    ("noisefloor", "errors", "names", "lazy", "envvars", "settings", "field_docs", "stats"),
    ("model",),  # records, verdicts, the report model and its parts, token usage
    ("rules",),  # the decision rules, the sequential design, the exit policy, a case's history
    ("store",),  # files under the root, the deep baseline's pool, fingerprints
    ("targets",),  # the kinds of target and what one call returns
    ("scorers",),  # the registry, the built-ins, users' plugins
    ("suite",),  # the suite file read and checked, its target built
    ("ledger",),  # the SQLite ledger, its rows coming from the kinds
    ("executors",),  # where and how samples are taken, written by one writer
    ("pipeline",),  # scoring, banding and comparing as doit tasks
    ("report",),  # renderers: the report model to text
    ("operations",),  # one function per thing a user asks for
    ("cli", "__main__"),  # the parser, the handlers, the entry point
    ("pytest_plugin",),  # the pytest plugin: marked tests checked as the command line checks
]


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(source: str, module: str, known: Iterable[str]) -> set[str]:
    """The package's modules that `source` imports, wherever the import stands (inside a
    function or under TYPE_CHECKING too): an import there is still an arrow between modules."""
    known = set(known)
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            targets = [name if name in known else node.module for name in names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        for target in targets:
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != module:
                found.add(target)
    return found


def layer_of(module: str) -> int:
    """The index in `LAYERS` of a module's first part below `noisefloor`."""
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else "noisefloor"
    for index, names in enumerate(LAYERS):
        if head in names:
            return index
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def upward(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import of a module from a layer above its own, as `importer -> imported`."""
    return [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import one another, directly or around a circle (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: imports_of(path.read_text(encoding="utf-8"), name, modules)
        for name, path in modules.items()
    }


def test_every_module_belongs_to_a_layer() -> None:
    for module in _modules():
        layer_of(module)


def test_no_import_runs_up_a_layer() -> None:
    assert upward(_graph()) == []


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert circles(_graph()) == []


def test_the_checks_fail_on_an_import_that_breaks_the_layers() -> None:
    known = ["noisefloor.model.report", "noisefloor.report.html", "noisefloor.store.store"]
    # a model that renders: an import up two layers, inside a function as much as at the top
    source = "def f():\n    from noisefloor.report.html import render\n"
    graph = {"noisefloor.model.report": imports_of(source, "noisefloor.model.report", known)}
    assert upward(graph) == ["noisefloor.model.report -> noisefloor.report.html"]
    # two modules of one layer that import each other, one of them only for typing
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from noisefloor.store import store\n"
    graph = {
        "noisefloor.store.store": {"noisefloor.store.files"},
        "noisefloor.store.files": imports_of(typed, "noisefloor.store.files", known),
    }
    assert circles(graph) == [["noisefloor.store.files", "noisefloor.store.store"]]


def test_at_most_twenty_modules_directly_under_the_package() -> None:
    flat = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(flat) <= 20, flat


@pytest.mark.parametrize("module", sorted(_modules()))
def test_no_module_is_longer_than_450_lines(module: str) -> None:
    lines = _modules()[module].read_text(encoding="utf-8").count("\n")
    assert lines <= 450, f"{module} has {lines} lines"


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        # the ledger's rows come from the store's files, its connections from one module
        ("noisefloor.ledger.rows", "noisefloor.store.sqlite"),
        # the public tool's store is read on its own terms, not through ours
        ("noisefloor.store.public", "noisefloor.store.store"),
        ("noisefloor.store.files", "noisefloor.model"),
        # reading YAML and JSONL knows no scorer
        ("noisefloor.suite.source", "noisefloor.scorers"),
    ],
)
def test_a_module_does_not_import_what_it_must_not_know(module: str, forbidden: str) -> None:
    graph = _graph()
    assert [m for m in graph[module] if m == forbidden or m.startswith(forbidden + ".")] == []


def test_only_the_runner_imports_doit() -> None:
    importers = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            roots = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(root.split(".")[0] == "doit" for root in roots):
                importers.append(name)
                break
    assert importers == ["noisefloor.pipeline.doit_runner"]


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
