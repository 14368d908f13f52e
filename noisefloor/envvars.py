"""`${NAME}` and `${NAME:-default}` in suite strings, filled in from the environment at load time.

`$${` stands for a literal `${`; a variable whose name looks like a secret is never filled in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["expand_value", "looks_secret"]

#: Variable names that hold credentials: their values are scrubbed from everything written, and
#: never copied into a suite.
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
# an escape, a reference, or a `${` never closed; scanning left to right, the escape in `$${X}`
# matches at its first `$`, before `${X}` could
_REFERENCE = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_FORM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(:-(.*))?", re.DOTALL)
_FORMS = "write ${NAME} or ${NAME:-default}, or $${ for a literal ${"

Loc = tuple[str | int, ...]


def looks_secret(name: str) -> bool:
    """Whether a variable's name says it holds a credential (KEY, TOKEN, SECRET, ...)."""
    return _SECRET_NAME.search(name) is not None


def _expand(text: str, environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """Fill in one string; on any problem the string comes back as it was."""
    problems: list[str] = []
    if "${" not in text:  # every reference, escape and unclosed opening has one
        return text, problems

    def fill(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "$${":
            return "${"
        body = match.group(1)
        if body is None:
            problems.append(f"'${{' with no closing '}}': {_FORMS}")
            return whole
        form = _FORM.fullmatch(body)
        if form is None:
            problems.append(f"cannot read {whole!r}: {_FORMS}")
            return whole
        name, has_default, default = form.groups()
        if default is not None and "${" in default:
            problems.append(f"{whole!r}: a default cannot hold a nested ${{...}}")
            return whole
        if looks_secret(name):
            problems.append(
                f"{name} looks like a secret and is never copied into a suite, whose values are "
                f"stored and hashed: name the key's variable with `api_key_env: {name}` "
                "(endpoints); a command target inherits the environment; $${ writes a literal ${"
            )
            return whole
        value = environ.get(name)
        if has_default and not value:
            return str(default)
        if value is None:
            problems.append(
                f"the environment variable {name} is not set: export it, give a default with "
                f"${{{name}:-...}}, or write $${{ for a literal ${{"
            )
            return whole
        return value

    expanded = _REFERENCE.sub(fill, text)
    return (text, problems) if problems else (expanded, problems)


def expand_value(
    obj: Any,
    environ: Mapping[str, str],
    literal: Callable[[Loc], bool] = lambda loc: False,
    loc: Loc = (),
) -> tuple[Any, list[tuple[Loc, str]]]:
    """Fill in every string value inside nested dicts and lists; keys are left as they are.

    Args:
        obj: Parsed YAML or JSON.
        environ: The environment to read, usually `os.environ`.
        literal: Says which paths hold values taken literally (names that key the store).
        loc: The path of `obj` itself.

    Returns:
        A filled-in copy of `obj`, and `(path, message)` per problem; a string with a problem
        is left as written.
    """
    if isinstance(obj, str):
        if literal(loc):
            return obj, []
        text, problems = _expand(obj, environ)
        return text, [(loc, message) for message in problems]
    found: list[tuple[Loc, str]] = []
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            out[key], more = expand_value(value, environ, literal, (*loc, key))
            found += more
        return out, found
    if isinstance(obj, list):
        items = []
        for index, value in enumerate(obj):
            item, more = expand_value(value, environ, literal, (*loc, index))
            items.append(item)
            found += more
        return items, found
    return obj, found
