"""The documentation: the generated reference pages are current, every command has its section,
and the README stays a front door."""

from __future__ import annotations

import argparse
import fnmatch
import re
from pathlib import Path

import pytest

from docs import references

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("page", "render"),
    [(references.CLI_PAGE, references.cli_page), (references.SUITE_PAGE, references.suite_page)],
    ids=["cli", "suite-file"],
)
def test_reference_page_is_current(page: Path, render: object) -> None:
    assert callable(render)
    stale = not page.exists() or page.read_text(encoding="utf-8") != render()
    assert not stale, f"{page.relative_to(ROOT)} is stale: run `{references.REGENERATE}`"


def test_every_command_has_a_section() -> None:
    from noisefloor.cli.parser import build_parser

    page = references.CLI_PAGE.read_text(encoding="utf-8")
    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in commands.choices:
        assert f"## noisefloor {name}\n" in page


def test_a_new_flag_changes_the_page() -> None:
    parser = references._parser()
    before = references.cli_page(parser)
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands.choices["run"].add_argument("--brand-new", help="a flag nobody documented")
    after = references.cli_page(parser)
    assert "`--brand-new BRAND_NEW`" in after and after != before


def test_a_new_suite_key_changes_the_page() -> None:
    schema = references._suite_schema()
    before = references.suite_page(schema)
    schema["properties"]["brand_new"] = {"type": "string", "description": "undocumented"}
    assert "`brand_new`" in references.suite_page(schema) != before


def test_pages_carry_no_machine_paths() -> None:
    for page in (references.cli_page(), references.suite_page()):
        assert str(ROOT) not in page and "/home/" not in page and "/tmp/" not in page


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "pip install . && noisefloor check examples/quickstart/suite.yaml" in readme
    assert "pip install -e '.[dev]' && python -m pytest" in readme


def test_every_environment_variable_is_documented() -> None:
    import re

    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    read = set()
    for path in (ROOT / "noisefloor").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        read |= set(re.findall(r"environ(?:\.get)?\(\s*\"([A-Z_]+)\"", text))
        read |= set(re.findall(r"environ\[\"([A-Z_]+)\"\]", text))
        read |= set(re.findall(r"getenv\(\"([A-Z_]+)\"", text))
        read |= set(re.findall(r"\(\"(SSL_CERT_[A-Z]+)\"", text))
    read |= {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"}  # urllib's getproxies()
    assert read >= {"NOISEFLOOR_ROOT", "CI", "GITHUB_STEP_SUMMARY", "OPENAI_BASE_URL"}
    missing = sorted(name for name in read if f"`{name}`" not in page)
    assert not missing, f"docs/environment.md does not name {missing}"


def _architecture() -> str:
    return (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_the_architecture_names_only_files_that_exist() -> None:
    named = re.findall(r"`([\w./-]+\.(?:py|md))`", _architecture())
    missing = [
        path
        for path in named
        if not any((base / path).exists() for base in (ROOT, ROOT / "noisefloor", ROOT / "docs"))
    ]
    assert missing == []


def test_the_architecture_names_every_module_of_the_package() -> None:
    """Each module by its path under the package, by a pattern such as `targets/http_*.py`, or,
    in the rows that describe a whole package (`report/`, `stats/`), by its bare name."""
    text = _architecture()
    patterns = re.findall(r"`([\w/]+\*[\w.]*)`", text)
    whole = {"report", "stats"}
    unnamed = []
    for path in sorted((ROOT / "noisefloor").rglob("*.py")):
        rel = path.relative_to(ROOT / "noisefloor").as_posix()
        if path.parent == ROOT / "noisefloor" or path.name == "__init__.py":
            continue  # the foundation is named in the layers' table, a package by its folder
        named = f"`{rel}`" in text or any(fnmatch.fnmatch(rel, p) for p in patterns)
        if path.parent.name in whole:
            named = named or f"`{path.stem}`" in text
        if not named:
            unnamed.append(rel)
    assert unnamed == []
