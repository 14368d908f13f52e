"""The command line: every subcommand with its help, and the arguments of each; one invocation
builds the arguments of its own command alone.
"""

from __future__ import annotations

import argparse

from noisefloor import __version__
from noisefloor.cli.commands import COMMANDS
from noisefloor.cli.help import EXIT_CODES, HelpFormatter, arrange
from noisefloor.cli.options import global_options
from noisefloor.cli.usage import Parser

__all__ = ["build_parser", "command_named"]


def command_named(argv: list[str]) -> str | None:
    """The command `argv` runs, read as the top-level parser reads it; None when unsure.

    Args:
        argv: The command-line arguments.

    Returns:
        The first argument that is neither an option nor `--root`'s value, when it names a command;
        "" when it names none (`--help`, `--version`, an unknown command); None after `--`.
    """
    value = False
    for arg in argv:
        if value:
            value = False
        elif arg == "--":
            return None
        elif arg == "--root":
            value = True
        elif not arg.startswith("-"):
            return arg if arg in COMMANDS else ""
    return ""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; given `only`, a command's name, only that command's arguments are added
    ("" adds none: the top-level `--help` lists every command's name and help either way).
    """
    parser = Parser(
        prog="noisefloor",
        description="A regression gate for programs that don't give the same answer twice.",
        epilog=EXIT_CODES,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"noisefloor {__version__}")
    global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help, description=command.description or command.help)
        if only in (None, name):
            command.add_arguments(p)
            global_options(p, top=False)
            arrange(p, name)
    return parser
