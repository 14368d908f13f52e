"""A deterministic fake program under test: prints a JSON answer, or misbehaves on request.

Every flag can also come from `NOISEFLOOR_FAKE_<FLAG>` (e.g. `NOISEFLOOR_FAKE_FAIL_EVERY=3`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

__all__ = ["main"]


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"NOISEFLOOR_FAKE_{name.upper()}", default)


def _flag(name: str) -> bool:
    return (_env(name) or "").lower() in ("1", "true", "yes", "on")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("question", nargs="?", default="")
    p.add_argument("--answer", default=_env("answer", "Paris"))
    p.add_argument("--confidence", choices=["high", "low"], default=_env("confidence", "high"))
    p.add_argument("--source", default=_env("source", "atlas"))
    numbers = [
        ("score", float, 0.9),
        ("repeat", int, 0),
        ("flake-every", int, 0),
        ("fail-every", int, 0),
        ("exit-code", int, 0),
        ("huge-mb", float, 0),
        ("sleep", float, 0),
        ("grandchild-sleep", float, 0),
    ]
    for name, kind, default in numbers:
        value = kind(_env(name.replace("-", "_")) or default)
        p.add_argument(f"--{name}", type=kind, default=value)
    p.add_argument("--stderr", default=_env("stderr"))
    p.add_argument("--log-calls", default=_env("log_calls"))
    p.add_argument("--pid-file", default=_env("pid_file"))
    for name in ("garbage", "no-output", "invalid-bytes", "echo-argv"):
        p.add_argument(f"--{name}", action="store_true", default=_flag(name.replace("-", "_")))
    return p


def main() -> int:
    """Behave as the flags say; returns the exit status.

    A call is logged once its output is written, so a call whose reader died (the harness was
    killed) fails on the closed pipe and is not counted as completed.
    """
    # Unknown arguments (e.g. a question starting with '-') are tolerated, never fatal.
    args, extra = _parser().parse_known_args()
    question = args.question or (extra[0] if extra else "")
    code = _behave(args, question)
    sys.stdout.flush()
    if args.log_calls:
        fd = os.open(args.log_calls, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, f"{os.getpid()} {args.repeat} {question}\n".encode())
        os.close(fd)
    return code


def _behave(args: argparse.Namespace, question: str) -> int:
    """Write the output (or misbehave) as asked; returns the exit status."""
    if args.stderr:
        print(args.stderr, file=sys.stderr, flush=True)
    pids = [os.getpid()]
    if args.grandchild_sleep:
        code = f"import time; time.sleep({args.grandchild_sleep})"
        pids.append(os.posix_spawn(sys.executable, [sys.executable, "-c", code], os.environ))
    if args.pid_file:
        with open(args.pid_file, "a") as handle:
            handle.write("".join(f"{pid}\n" for pid in pids))
    if args.sleep:
        time.sleep(args.sleep)
    out = sys.stdout.buffer
    if args.echo_argv:
        out.write(json.dumps({"argv": sys.argv[1:]}).encode() + b"\n")
        return 0
    if args.fail_every and args.repeat % args.fail_every == 0:
        print(f"failing on purpose at repeat {args.repeat}", file=sys.stderr)
        return 1
    if args.exit_code:
        print(f"exiting with {args.exit_code} on request", file=sys.stderr)
        return int(args.exit_code)
    if args.no_output:
        return 0
    if args.garbage:
        out.write(b"not json at all <html>\n")
        return 0
    if args.invalid_bytes:
        out.write(b"\xff\xfe caf\xe9 \x80")
        return 0
    if args.huge_mb:
        total, block = int(args.huge_mb * 1_000_000), b"x" * (1 << 20)
        while total > 0:
            total -= out.write(block[:total])
        return 0
    answer, confidence = args.answer, args.confidence
    if args.flake_every and args.repeat % args.flake_every == 0:
        answer, confidence = "unrelated filler", "low"
    result = {
        "answer": answer,
        "confidence": confidence,
        "citations": [{"source": args.source, "score": args.score}],
        "question": question,
    }
    out.write(json.dumps(result).encode() + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
