"""The `{{input}}`, `{{case_id}}` and `{{repeat}}` placeholders of target templates.

Rendering is one regex pass (filled-in text is never expanded again); checking names every bad one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from noisefloor.errors import TargetConfigError

__all__ = [
    "PLACEHOLDERS",
    "check_template",
    "check_value",
    "placeholder_problems",
    "render",
    "render_argv",
    "render_value",
]

#: The only placeholder names a template may use, spelled exactly `{{name}}`.
PLACEHOLDERS = ("input", "case_id", "repeat")

_KNOWN = re.compile(r"\{\{(" + "|".join(PLACEHOLDERS) + r")\}\}")
_ANY = re.compile(r"\{\{([^{}]*)\}\}")
# Near misses with a missing brace, e.g. `{{input}` or `{input}}`; only reported when the name
# inside is close to a known placeholder, so ordinary braces in text stay legal.
_HALF = re.compile(r"(?<!\{)\{\{\s*(\w+)\s*\}(?!\})|(?<!\{)\{\s*(\w+)\s*\}\}(?!\})")


def _known_list() -> str:
    return ", ".join("{{" + name + "}}" for name in PLACEHOLDERS)


def _suggest(name: str) -> str | None:
    """The known placeholder `name` was probably meant to be, if any."""
    cleaned = name.strip().lower().replace("-", "_").replace(" ", "_")
    if cleaned in PLACEHOLDERS:
        return cleaned
    import difflib  # only for a placeholder not known

    close = difflib.get_close_matches(cleaned, PLACEHOLDERS, n=1, cutoff=0.6)
    return close[0] if close else None


def _problems(template: str) -> list[tuple[str, str | None]]:
    """Each unknown or malformed placeholder in `template`, with the one probably meant."""
    problems: list[tuple[str, str | None]] = []
    for match in _ANY.finditer(template):
        name = match.group(1)
        if name not in PLACEHOLDERS:
            problems.append((match.group(0), _suggest(name)))
    for match in _HALF.finditer(template):
        name = match.group(1) or match.group(2)
        suggestion = _suggest(name)
        if suggestion is not None:
            problems.append((match.group(0), suggestion))
    return problems


def _describe(text: str) -> str:
    return f"{'unknown' if _ANY.fullmatch(text) else 'malformed'} placeholder {text!r}"


def _strings(
    obj: Any, loc: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string inside nested dicts and lists, with its path of keys and indices."""
    if isinstance(obj, str):
        yield loc, obj
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from _strings(value, (*loc, key))
    elif isinstance(obj, list | tuple):
        for index, value in enumerate(obj):
            yield from _strings(value, (*loc, index))


def placeholder_problems(obj: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """Every unknown or malformed placeholder in the strings of `obj`, for a list of problems.

    Args:
        obj: A string, or a dict/list/tuple structure holding strings; other values are ignored.

    Returns:
        One `(path, message)` per problem: the keys and indices leading to the string inside
        `obj`, and a one-line message that says which placeholder was probably meant.
    """
    found = []
    for loc, template in _strings(obj):
        for text, suggestion in _problems(template):
            meant = f"did you mean {{{{{suggestion}}}}}? " if suggestion else ""
            found.append((loc, f"{_describe(text)} ({meant}known: {_known_list()})"))
    return found


def check_template(template: str, where: str) -> None:
    """Reject a template that uses anything but the known placeholders.

    Args:
        template: The template text, e.g. one argv element or one message string.
        where: Where the template came from, reported in the error.

    Raises:
        TargetConfigError: The template contains an unknown or malformed placeholder.
    """
    problems = _problems(template)
    if not problems:
        return
    text, suggestion = problems[0]
    hint = f"did you mean {{{{{suggestion}}}}}? " if suggestion else ""
    hint += f"known placeholders: {_known_list()} (exact spelling, no spaces)"
    details = [f"also: {other!r}" for other, _ in problems[1:]]
    raise TargetConfigError(_describe(text), where=where, hint=hint, details=details)


def check_value(obj: Any, where: str) -> None:
    """Run `check_template` on every string inside nested dicts and lists.

    Args:
        obj: A string, or a dict/list/tuple structure holding strings.
        where: Where the structure came from; the path inside it is appended.

    Raises:
        TargetConfigError: Some string contains an unknown or malformed placeholder.
    """
    for loc, template in _strings(obj):
        path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        check_template(template, where + path)


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill in the known placeholders in one pass; filled-in text is never expanded again.

    Args:
        template: Template text, already checked with `check_template`.
        values: Text for each placeholder name the template uses.

    Returns:
        The rendered text.

    Raises:
        KeyError: The template uses a placeholder that `values` does not provide.
    """
    return _KNOWN.sub(lambda match: values[match.group(1)], template)


def render_argv(argv: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """Render every element of an argument vector; one element stays one argument.

    Args:
        argv: The argument vector template.
        values: Text for each placeholder.

    Returns:
        The rendered argument vector.
    """
    return [render(element, values) for element in argv]


def render_value(obj: Any, values: Mapping[str, str]) -> Any:
    """Render every string inside nested dicts and lists; other values are returned as is.

    Dict keys are left untouched; tuples come back as lists.

    Args:
        obj: A string, or a dict/list/tuple structure holding strings.
        values: Text for each placeholder.

    Returns:
        A rendered copy of `obj`.
    """
    if isinstance(obj, str):
        return render(obj, values)
    if isinstance(obj, Mapping):
        return {key: render_value(value, values) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [render_value(value, values) for value in obj]
    return obj
