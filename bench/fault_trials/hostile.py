"""Hostile endpoints: one check of a suite with every fault of `bench/servers/faults.py` as a case,
and of https suites facing a plain port and an untrusted certificate, each counted."""

from __future__ import annotations

import os
import random
import ssl
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
import trustme
import yaml

from bench.fault_trials import Tally, has_traceback
from bench.servers.faults import FAULTS, FaultServer

__all__ = [
    "CHECK_RSS_LIMIT_MB",
    "KEY_ENV",
    "TIMEOUT_S",
    "Check",
    "Running",
    "finish",
    "spawn",
    "trials",
]

#: The variable the suites name as `api_key_env`.
KEY_ENV = "NF_HOSTILE_API_KEY"
#: The suites' `timeout_s`: twice the fault server's one byte per second, so that no single
#: read of the dripping answer times out and only the whole-attempt deadline stops it.
TIMEOUT_S = 2.0
#: Retries per call in the suites: every infrastructure error takes two attempts.
MAX_RETRIES = 1
#: Repeats of each case.
REPEATS = 2
#: Peak resident memory allowed to one check process, the 100 MB bodies included.
CHECK_RSS_LIMIT_MB = 150
#: Seconds a check may take beyond its calls' bound: start-up, scoring, the report.
OVERHEAD_S = 15.0
#: What each sample of each fault must end as: its outcome and a piece of its reason; None for
#: the one case that should pass.
EXPECTED: dict[str, tuple[str, str] | None] = {
    "ok": None,
    "truncated": ("infra", "peer closed connection without sending complete message body"),
    "invalid_json": ("infra", "invalid JSON in response: "),
    "html": ("infra", "HTTP 200 with a text/html body, not JSON"),
    "error_200": ("infra", "HTTP 200 with an error object: upstream overloaded"),
    "huge": ("infra", "response body over 10000000 bytes"),
    "huge_chunked": ("infra", "response body over 10000000 bytes"),
    "declared_huge": ("infra", "response body over 10000000 bytes"),
    "drip": ("infra", f"timeout (no answer within {TIMEOUT_S:g} s)"),
    "reset": ("infra", "Connection reset by peer"),
    "redirect_302": ("config", "redirect to another host refused (302 to http://localhost:"),
    "redirect_307": ("config", "redirect to another host refused (307 to http://localhost:"),
    "empty": ("infra", "HTTP 200 with an empty body"),
    "chunked_cut": ("infra", "incomplete chunked read"),
    "hang_up": ("infra", "Server disconnected without sending a response"),
    "no_choices": ("infra", "HTTP 200 whose choices is empty"),
    "choices_text": ("infra", "HTTP 200 whose choices is not a list"),
    "message_text": ("infra", "HTTP 200 whose choices[0].message is not an object"),
    "odd_types": ("infra", "HTTP 200 whose choices[0].finish_reason is not a string"),
    "nan": ("infra", "invalid JSON in response: "),
    "tls_plain_port": ("infra", "ConnectError: [SSL"),
    "tls_untrusted": ("infra", "CERTIFICATE_VERIFY_FAILED"),
}


@dataclass
class Check:
    """One finished CLI process: its exit code, output, wall time and peak resident memory."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str
    wall_s: float
    rss_mb: float


@dataclass
class Running:
    """A CLI process started by `spawn`, its output going to two files."""

    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    err: IO[bytes]
    args: tuple[str, ...]
    began: float


def spawn(*args: str | Path, root: Path, env: dict[str, str], logs: Path) -> Running:
    """Start the real CLI in a fresh process, its output going to files under `logs`."""
    logs.mkdir(parents=True, exist_ok=True)
    out = (logs / "out").open("w+b")
    err = (logs / "err").open("w+b")
    argv = [sys.executable, "-m", "noisefloor", "--root", str(root), *map(str, args)]
    # a CI runner's settings would change what a first check does
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_STEP_SUMMARY")}
    proc = subprocess.Popen(argv, stdout=out, stderr=err, env={**base, **env})
    return Running(proc, out, err, tuple(map(str, args)), time.perf_counter())


def _peak_rss_kb(pid: int) -> int | None:
    """The high-water mark of a live process's resident memory (VmHWM), None once it is gone.

    Not the rusage of the child: Linux carries into it the memory of the process it was forked
    from, so a check started from a large test process would be charged for that process.
    """
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None  # a zombie has no memory left to report


def finish(running: Running, timeout: float) -> Check:
    """Wait for a process from `spawn`, killing it past `timeout` seconds, and watch its peak
    memory while it runs (the mark only grows: the last reading holds the peak, short of the
    last poll's 20 ms)."""
    pid = running.proc.pid
    peak_kb = 0
    while True:
        reading = _peak_rss_kb(pid)
        peak_kb = reading if reading is not None else peak_kb
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() > running.began + timeout:
            running.proc.kill()
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.02)
    running.proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - running.began
    texts = []
    for handle in (running.out, running.err):
        handle.seek(0)
        texts.append(handle.read().decode("utf-8", errors="replace"))
        handle.close()
    code = running.proc.returncode
    return Check(running.args, code, texts[0], texts[1], wall, peak_kb / 1024)


def _suite(directory: Path, name: str, base_url: str, faults: list[str]) -> Path:
    cases = [
        {
            "id": fault,
            "input": f"Name the capital of France [fault:{fault}]",
            "scorers": ["json_valid"],
        }
        for fault in faults
    ]
    target = {
        "base_url": base_url,
        "model": "fault-model",
        "api_key_env": KEY_ENV,
        "timeout_s": TIMEOUT_S,
        "max_retries": MAX_RETRIES,
    }
    doc = {
        "name": name,
        "target": {"http": target},
        "defaults": {"repeats": REPEATS, "baseline_repeats": REPEATS},
        "cases": cases,
    }
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _untrusted_context() -> ssl.SSLContext:
    """A server context whose certificate no client trusts: its CA is made up on the spot."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    trustme.CA().issue_cert("127.0.0.1").configure_cert(context)
    return context


def _samples(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every sample file under the store `root`, parsed, with its suite's name."""
    samples = root / "samples"
    return [
        (path.relative_to(samples).parts[0], orjson.loads(path.read_bytes()))
        for path in sorted(samples.rglob("r*.json"))
    ]


def _judge_samples(
    tally: Tally, samples: list[tuple[str, dict[str, Any]]], cases: set[str]
) -> list[str]:
    """Check every sample's outcome and reason against `EXPECTED`, and that each `suite/case` in
    `cases` has its repeats, each once; return what went wrong."""
    wrong: list[str] = []
    seen = dict.fromkeys(cases, 0)
    for suite, sample in samples:
        case = sample["case_id"]
        where = f"{suite}/{case}"
        seen[where] = seen.get(where, 0) + 1
        if case not in EXPECTED:
            wrong.append(f"{where}: a fault without an expected outcome")
            continue
        wanted = EXPECTED[case]
        outcome, error = sample.get("outcome"), sample.get("error") or ""
        if wanted is None:
            if outcome != "ok":
                wrong.append(f"{where} ended {outcome} ({error})")
            continue
        error_class, reason = wanted
        envelope = sample.get("envelope") or {}
        if outcome != "error:infra" or envelope.get("error_class") != error_class:
            wrong.append(f"{where} ended {outcome}/{envelope.get('error_class')}: {error}")
        elif reason not in error:
            wrong.append(f"{where}'s reason {error!r} does not name {reason!r}")
        attempts = 1 if error_class == "config" else MAX_RETRIES + 1
        if sample.get("attempts") != attempts:
            wrong.append(f"{where} took {sample.get('attempts')} attempts, not {attempts}")
        if (sample.get("wall_s") or 0.0) > TIMEOUT_S + 1.0:
            wrong.append(f"{where}'s attempt took {sample['wall_s']:.1f} s")
    missing = [where for where, count in seen.items() if count != REPEATS]
    if missing:
        wrong.append(f"samples of {missing} missing or doubled")
    tally.lost += sum(max(0, REPEATS - count) for count in seen.values())
    tally.twice += sum(max(0, count - REPEATS) for count in seen.values())
    return wrong


def _judge_check(check: Check, tally: Tally, key: str) -> list[str]:
    """The process: exit code, no traceback, the key never printed, time and memory bounds."""
    wrong: list[str] = []
    where = " ".join(check.args[:2])
    if has_traceback(check.out + check.err):
        tally.tracebacks += 1
        wrong.append(f"{where}: traceback: {check.err[-300:]}")
    if key[: len(key) // 2] in check.out + check.err:
        wrong.append(f"{where}: the API key was printed")
    if check.rss_mb > CHECK_RSS_LIMIT_MB:
        wrong.append(f"{where}: peak RSS {check.rss_mb:.0f} MB > {CHECK_RSS_LIMIT_MB} MB")
    return wrong


def _files_with(needle: str, directory: Path) -> list[str]:
    data = needle.encode()
    return [
        str(path.relative_to(directory))
        for path in sorted(directory.rglob("*"))
        if path.is_file() and data in path.read_bytes()
    ]


def _calls_bound_s() -> float:
    """The longest a call may take: every attempt to its deadline, and the backoff between."""
    return (MAX_RETRIES + 1) * TIMEOUT_S + MAX_RETRIES * 0.5


def _trial(workdir: Path, tally: Tally, key: str) -> Check:
    """One trial in `workdir`: four suites checked at once, each report in another format, then
    `show`; returns the check of every fault, and fails `tally` on anything wrong."""
    root = workdir / "store"
    env = {KEY_ENV: key, "NOISEFLOOR_JOBS": "8"}
    wrong: list[str] = []
    with ExitStack() as stack:
        plain = stack.enter_context(FaultServer(drip_s=1.0))
        untrusted = stack.enter_context(FaultServer(tls=_untrusted_context()))
        https_plain = plain.base_url.replace("http:", "https:")
        # name: the endpoint, the faults served as cases, the report's format
        suites = {
            "faults": (plain.base_url, list(FAULTS), "json"),
            # the faults that quote the key back, in a report that shows more of each case
            "echo": (plain.base_url, ["ok", "html", "error_200", "redirect_302"], "markdown"),
            "tls_plain_port": (https_plain, ["tls_plain_port"], "html"),
            "tls_untrusted": (untrusted.base_url, ["tls_untrusted"], "junit"),
        }
        started = [
            spawn(
                *("check", _suite(workdir, name, base_url, faults), "--format", fmt),
                *("--output", workdir / f"{name}.{fmt}"),
                root=root,
                env=env,
                logs=workdir / "logs" / name,
            )
            for name, (base_url, faults, fmt) in suites.items()
        ]
        checks = [finish(one, _calls_bound_s() + OVERHEAD_S + 60) for one in started]
    shown = finish(spawn("show", root=root, env=env, logs=workdir / "logs" / "show"), 60)
    for check in [*checks, shown]:
        wrong += _judge_check(check, tally, key)
    # infrastructure errors leave their cases unmeasured: exit 3 with the cause in one line,
    # never a regression or a broken target (1, 2), and never green (0)
    for check in checks:
        if check.code != 3 or "repeats failed on the infrastructure" not in check.out:
            wrong.append(f"{' '.join(check.args[:2])} exited {check.code}: {check.err[-300:]}")
    if shown.code != 0:
        wrong.append(f"show exited {shown.code}: {shown.err[-300:]}")
    for check in checks:
        if check.wall_s > _calls_bound_s() + OVERHEAD_S:
            wrong.append(f"{check.args[1]} took {check.wall_s:.1f} s")
    cases = {f"{name}/{fault}" for name, (_, faults, _) in suites.items() for fault in faults}
    wrong += _judge_samples(tally, _samples(root), cases)
    for piece in (key, key[: len(key) // 2]):
        leaked = _files_with(piece, workdir)
        if leaked:
            wrong.append(f"the API key (or its first half) is in {leaked}")
    if wrong:
        tally.fail("; ".join(wrong[:4]))
    return checks[0]


def trials(n: int, workdir: Path, seed: int = 0) -> list[Tally]:
    """`n` trials, each in a fresh directory under `workdir`, with a fresh API key; its
    figures give the slowest check of every fault and its largest peak memory."""
    tally = Tally("hostile endpoints")
    rng = random.Random(seed)
    checks: list[Check] = []
    for index in range(n):
        trial_dir = workdir / f"hostile-{index}"
        trial_dir.mkdir(parents=True)
        key = f"sk-noisefloor-SECRET-{rng.getrandbits(64):016x}"
        tally.trials += 1
        checks.append(_trial(trial_dir, tally, key))
    if checks:
        wall = max(check.wall_s for check in checks)
        rss = max(check.rss_mb for check in checks)
        tally.figures["check of every fault"] = f"at most {wall:.1f} s, peak RSS {rss:.0f} MB"
    return [tally]
