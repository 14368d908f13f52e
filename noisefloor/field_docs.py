"""Field docstrings as pydantic descriptions, read from a model's source when first asked for.

pydantic's `use_attribute_docstrings` reads them as each class is defined, which made importing
the models cost tens of milliseconds; `describe` gives the same descriptions on demand.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import sys
import typing
from typing import Any

from pydantic import BaseModel

__all__ = ["describe"]

#: Models already described (their nested models too).
_described: set[type[BaseModel]] = set()
#: The docstrings of the fields each class declares in its own body.
_own: dict[type, dict[str, str]] = {}


def describe(model: type[BaseModel]) -> type[BaseModel]:
    """`model`, and every model its fields hold, with each field's docstring as its description
    (a description given with `Field` wins), as `use_attribute_docstrings` would have made it.

    A model already built is rebuilt, so that its validator and its JSON schema carry them.
    """
    if model in _described:
        return model
    _described.add(model)
    for info in model.__pydantic_fields__.values():
        for nested in _models_in(info.annotation):
            describe(nested)
    for name, info in model.__pydantic_fields__.items():
        if info.description is None:
            info.description = _doc(model, name)
    if model.__pydantic_complete__:
        model.model_rebuild(force=True)
    return model


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation names (`X`, `X | None`, `list[X]`, ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _doc(model: type[BaseModel], name: str) -> str | None:
    """The docstring under `name` in the class that declares it (the nearest in the MRO)."""
    for cls in model.__mro__:
        if name in cls.__dict__.get("__annotations__", {}):
            if cls not in _own:
                _own[cls] = _docstrings(cls)
            return _own[cls].get(name)
    return None


def _docstrings(cls: type) -> dict[str, str]:
    """Each annotated attribute of the class body followed by a string, and that string."""
    module = sys.modules.get(cls.__module__)
    filename = getattr(module, "__file__", None)
    if not filename:
        return {}
    lines = linecache.getlines(filename, module.__dict__)
    opening = re.compile(rf"\s*class\s+{re.escape(cls.__name__)}\b")
    for number, line in enumerate(lines):
        if opening.match(line):
            node = _class_at(lines, number)
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                return _after_fields(node.body)
    return {}


def _class_at(lines: list[str], number: int) -> ast.stmt | None:
    """The statement opening at `lines[number]`, read up to the next line as little indented
    (or, when a string or bracket reaches further left, as far as tokenizing says)."""
    indent = _indent(lines[number])
    end = number + 1
    while end < len(lines) and (
        not lines[end].strip()
        or lines[end].lstrip().startswith("#")
        or _indent(lines[end]) > indent
    ):
        end += 1
    try:
        return _parsed(lines[number:end], indent)
    except SyntaxError:
        pass
    try:
        return _parsed(inspect.getblock(lines[number:]), indent)
    except SyntaxError:
        return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parsed(block: list[str], indent: int) -> ast.stmt:
    """One statement; an indented one (a class in a function) inside `if True:`."""
    source = "".join(block)
    if not indent:
        return ast.parse(source).body[0]
    opened = ast.parse(f"if True:\n{source}").body[0]
    assert isinstance(opened, ast.If)
    return opened.body[0]


def _after_fields(body: list[ast.stmt]) -> dict[str, str]:
    docs: dict[str, str] = {}
    for field, following in zip(body, body[1:], strict=False):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[field.target.id] = inspect.cleandoc(following.value.value)
    return docs
