"""The command line's parser class: a usage error is exit 3 (argparse's 2 is our "broken"), no
flag is taken from a prefix of another, and a mistake is answered with what was meant: a flag of
another tool (`--json`), a close flag, command or choice (`--repeat`, `chek`, `md`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from noisefloor.errors import UsageError

__all__ = ["SLIPS", "VALUE_SLIPS", "Parser"]

#: Flags people type from other tools, and the option each one means here.
SLIPS = {
    "--json": "--format json",
    "--markdown": "--format markdown",
    "--md": "--format markdown",
    "--junit": "--format junit",
    "--xml": "--format junit",
    "--html": "--format html",
    "--text": "--format terminal",
    "--verbosity": "-v",
    "--silent": "-q",
}
#: Values people type from other tools, and the choice each one means here.
VALUE_SLIPS = {"md": "markdown", "txt": "terminal", "text": "terminal", "xml": "junit"}


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error, our "broken": raise instead, mapped to 3. A flag is
    never taken from a prefix of another (`--repeat 5` is not `--repeats 5`), and a mistake is
    answered with the flag, command or value meant when one is close."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(_meant_choice(message), hint=f"`{self.prog} --help` lists the options")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> argparse.Namespace:
        """As argparse's, but an argument no parser took is reported by the (sub)command it
        was given to, with the option meant when one is close (argparse names the top level)."""
        parsed: argparse.Namespace
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            _invoked(self, parsed)._unknown(extras)
        return parsed

    def _unknown(self, extras: list[str]) -> NoReturn:
        import difflib  # only for a command line with a mistake

        known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        meant = []
        for flag in (e.split("=", 1)[0] for e in extras if e.startswith("--")):
            slip = SLIPS.get(flag)
            if slip is not None and slip.split(" ", 1)[0] in known + ["-v", "-q", "--version"]:
                meant.append(f"{flag}: did you mean {slip}?")
                continue
            close = difflib.get_close_matches(flag, known, n=1)
            if close:
                meant.append(f"{flag}: did you mean {close[0]}?")
        self.error(
            f"unrecognized arguments: {' '.join(extras)}"
            + (f" ({'; '.join(meant)})" if meant else "")
        )


def _meant_choice(message: str) -> str:
    """argparse's "invalid choice" message, shortened to the choice meant when one is close to
    the value given (or means it elsewhere: `md`); any other message as it is."""
    import re

    found = re.match(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)$", message)
    if found is None:
        return message
    value = found.group(2)
    choices = re.findall(r"'([^']*)'", found.group(3)) or found.group(3).split(", ")
    meant = VALUE_SLIPS.get(value.lower())
    if meant not in choices:
        import difflib  # only for a command line with a mistake

        close = difflib.get_close_matches(value, choices, n=1)
        meant = close[0] if close else None
    if meant is None:
        return message
    return f"argument {found.group(1)}: invalid choice: {value!r} (did you mean {meant!r}?)"


def _invoked(parser: Parser, parsed: argparse.Namespace) -> Parser:
    """The innermost (sub)command `parsed` went through (`baseline deepen`'s own parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
            if isinstance(chosen, Parser):
                return _invoked(chosen, parsed)
    return parser
