"""The public API is a list: sorted, complete, and every name resolves."""

from __future__ import annotations

import subprocess
import sys

import noisefloor


def test_all_is_sorted_and_resolves():
    assert noisefloor.__all__ == sorted(noisefloor.__all__)
    for name in noisefloor.__all__:
        assert getattr(noisefloor, name) is not None, name


def test_exports_are_defined_where_they_are_said_to_be():
    for name, module in noisefloor._EXPORTS.items():
        obj = getattr(noisefloor, name)
        assert getattr(obj, "__module__", module) == module, name


def test_importing_the_package_loads_no_heavy_module():
    code = "import sys, noisefloor; print(sorted(m for m in ('doit', 'scipy', 'pydantic', 'numpy') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_unknown_attribute_raises():
    try:
        noisefloor.nope  # noqa: B018
    except AttributeError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
