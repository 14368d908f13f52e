"""The console entry: parse, run one command, and map every way it can end to an exit code.

`main(argv) -> int` never exits; `console_main` maps harness faults to 3 and survives closed pipes.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from noisefloor.cli.commands import COMMANDS
from noisefloor.cli.output import verbosity_of
from noisefloor.cli.parser import build_parser, command_named
from noisefloor.errors import ExitCode, NoisefloorError, UsageError

# A write that failed for want of room is worded by the store only when one fails.

__all__ = ["console_main", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse and run one command; return its exit code (never raises for harness faults)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(command_named(args_list))
    debug = "--debug" in args_list
    try:
        args = parser.parse_args(args_list)
        verbosity_of(args)  # -v with -q: refused before the command runs
        if args.command is None:
            # a usage error like any other: the help goes to stderr, stdout stays empty
            parser.print_help(sys.stderr)
            raise UsageError(
                "no command given: name one of the commands above",
                hint="`noisefloor COMMAND --help` documents a command's flags",
            )
        return COMMANDS[args.command].run(args)
    except NoisefloorError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        print(f"error: {exc.format_message()}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, _Terminated)
        print(
            f"error: interrupted ({'SIGTERM' if terminated else 'Ctrl-C'}); every finished sample is "
            "kept and the next run resumes",
            file=sys.stderr,
        )
        return int(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)
    except Exception as exc:  # an internal error: one clear line, the traceback only with --debug
        if debug:
            raise
        from noisefloor.store.files import FULL_ERRNOS, write_failure

        if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
            # a write past the ones the store maps itself (a lock file, say): as clear
            reason = (exc.strerror or str(exc)).lower()
            error = write_failure(str(exc.filename or "the store"), reason)
            print(f"error: {error.format_message()}", file=sys.stderr)
            return int(ExitCode.HARNESS)
        print(
            f"error: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return int(ExitCode.HARNESS)


class _Terminated(KeyboardInterrupt):
    """SIGTERM: stops like Ctrl-C, and exits 143 instead of 130."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


class _ReaderMayGo:
    """A standard stream whose reader may go (`2>&1 | head -2`): the first write that finds the
    pipe closed points the stream at devnull, so everything after it (progress, warnings, the
    report) is dropped and the command goes on to its verdict and exit code."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def _gone(self) -> None:
        # Python's documented recipe: the interpreter's flush at exit then writes to devnull
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def console_main() -> int:
    """The console script: SIGTERM stops like Ctrl-C, and a closed pipe (`| head`) is no error:
    on stdout or stderr, what is left to print is dropped and the verdict's code is returned.

    The collector runs every 50,000 allocations instead of every 700: a check builds many
    long-lived records and few cycles, and the default made a no-op check of 2,000 x 5 spend
    a quarter of its CPU time collecting (1.45-1.94 s against 1.07-1.35 s, `bench/noop.py`'s
    suite). Before the interpreter exits, every object alive is frozen out of the collector:
    the process is ending, and the collections at shutdown took 0.3 s after a run of 1,000
    samples (finalizers and file flushing still happen).
    """
    gc.set_threshold(50_000, 20, 10)
    signal.signal(signal.SIGTERM, _terminate)
    sys.stdout = _ReaderMayGo(sys.stdout)
    sys.stderr = _ReaderMayGo(sys.stderr)
    code = main()
    gc.freeze()
    return code
