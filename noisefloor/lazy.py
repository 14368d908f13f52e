"""Lazy package attributes: a package's public names load from their modules on first use.

Both the top-level package and `noisefloor.targets` use it, so that importing them stays cheap.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], public: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of a package with lazily loaded names.

    Args:
        package: The package's `__name__`.
        exports: Public name -> the module that defines it.
        public: The package's `__all__`, which `dir()` lists.

    Returns:
        ``(__getattr__, __dir__)``; a loaded name is kept in the package's namespace, so each
        module is imported at most once.
    """

    def getattr_(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return public

    return getattr_, dir_
