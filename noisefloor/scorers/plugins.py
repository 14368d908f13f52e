"""User plugins: a suite's `plugins:` files and modules, and installed packages' `noisefloor.scorers`
entry points, imported (the user's code, in this process) to register scorers; failures named."""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from noisefloor.errors import SuiteError
from noisefloor.scorers.calls import Origin, failure

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint


__all__ = [
    "ENTRY_POINT_GROUP",
    "entry_point_names",
    "load_entry_point",
    "load_plugins",
    "plugin_path",
]


class Registry(Protocol):
    """Where plugins register their scorers (`scorers.Registry`): named here, so that the
    loader takes the registry it fills rather than importing the one above it."""

    def loading(self, origin: Origin) -> AbstractContextManager[list[str]]:
        """Scorers registered inside the block come from `origin`; yields their names."""
        ...


#: The entry-point group installed packages register scorers under: `scorer_name = module`.
ENTRY_POINT_GROUP = "noisefloor.scorers"

#: Plugin files loaded in this process, by resolved path: the digest of the content loaded.
_files: dict[Path, str] = {}


def plugin_path(plugin: str) -> bool:
    """Whether a `plugins:` entry names a file (`checks.py`, `lib/checks.py`), not a module."""
    return plugin.endswith(".py") or "/" in plugin or "\\" in plugin


def load_plugins(
    plugins: Sequence[str], base_dir: Path, where: Callable[[int], str], registry: Registry
) -> None:
    """Import each plugin of a suite: a file (relative to `base_dir`, the suite's directory) or
    an importable module. A file is imported again when its content changed since.

    Args:
        plugins: The suite's `plugins:` entries.
        base_dir: The suite file's directory.
        where: Where the entry at an index is written (`suite.yaml:4: plugins[0]`).
        registry: Where the plugins register their scorers.

    Raises:
        SuiteError: A plugin is missing, fails to import, or registers a name twice.
    """
    for index, plugin in enumerate(plugins):
        if plugin_path(plugin):
            path = (base_dir / plugin).resolve()
            if not path.is_file():
                raise SuiteError(
                    f"plugin file {plugin} not found (looked at {path})",
                    where=where(index),
                    hint="a plugin file is relative to the suite file's directory",
                )
            content = path.read_bytes()
            digest = hashlib.sha256(content).hexdigest()
            if _files.get(path) == digest:
                continue
            origin = Origin(plugin=plugin)
            retry = f"`python {path}` runs it outside noisefloor"
            _guarded_import(
                origin, where(index), functools.partial(_exec_file, path), registry, retry
            )
            _files[path] = digest
        elif plugin not in sys.modules:
            origin = Origin(plugin=plugin, version=_module_version(plugin))
            retry = f"`python -c 'import {plugin}'` imports it outside noisefloor"
            imported = functools.partial(importlib.import_module, plugin)
            _guarded_import(origin, where(index), imported, registry, retry)


def _exec_file(path: Path) -> None:
    """Run a plugin file as a module of its own, its directory importable while it loads (so
    that it can import its neighbours)."""
    name = f"noisefloor_plugin_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py file always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        sys.path.remove(str(path.parent))


def _guarded_import(
    origin: Origin, where: str, load: Callable[[], Any], registry: Registry, retry: str
) -> list[str]:
    """Run `load` with the registry noting `origin`; any failure becomes a SuiteError, its
    hint saying how to `retry` the import alone."""
    try:
        with registry.loading(origin) as names:
            load()
    except Exception as exc:
        detail, trace = failure(exc, origin.plugin)
        raise SuiteError(
            f"plugin {origin.plugin} failed to import: {detail}",
            where=where,
            details=trace.splitlines(),
            hint=f"fix the plugin (the traceback above is its own); {retry}",
        ) from None
    return names


def _module_version(module: str) -> str | None:
    """The version of the installed package a module comes from, if any."""
    from importlib.metadata import PackageNotFoundError, packages_distributions, version

    top = module.split(".")[0]
    for dist in packages_distributions().get(top, []):
        try:
            return f"{dist} {version(dist)}"
        except PackageNotFoundError:
            continue
    return None


@functools.cache
def _entry_points() -> tuple[EntryPoint, ...]:
    from importlib.metadata import entry_points

    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def entry_point_names() -> list[str]:
    """The scorer names installed packages declare (read from their metadata, nothing imported)."""
    return sorted({ep.name for ep in _entry_points()})


def load_entry_point(name: str, registry: Registry) -> None:
    """Import the entry points named `name`, if any: the installed scorers of that name.

    Raises:
        SuiteError: The module fails to import, or does not register `name`.
    """
    for ep in _entry_points():
        if ep.name != name:
            continue
        dist = ep.dist
        version = f"{dist.name} {dist.version}" if dist is not None else None
        origin = Origin(plugin=f"{ep.name} = {ep.value}", version=version)
        where = f"entry point {ep.name!r} of {version or 'an installed package'}"
        retry = f"`python -c 'import {ep.module}'` imports it outside noisefloor"
        names = _guarded_import(origin, where, ep.load, registry, retry)
        if name not in names:
            raise SuiteError(
                f"{ep.value} registered no scorer named {name!r} (it registered: "
                f"{', '.join(names) or 'none'})",
                where=where,
                hint=f"an entry point of group {ENTRY_POINT_GROUP!r} is named after the scorer "
                "its module registers with @noisefloor.scorer(NAME)",
            )
