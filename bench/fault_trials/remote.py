"""The remote store under a faulty object store: each trial adopts a baseline, checks a changed
version and checks it again on a fresh runner, all through a proxy failing a share of requests;
then outages: the server out mid-push, or frozen, and the check run again once it is back.

Counted per fault: failed trials (an exit but 0, a second runner that calls the target; an
outage's check that exits but 0 or 3, a frozen one past 35 s or not saying "timed out", a rerun
but 0, a remote that `store verify --remote` finds wrong after it), samples lost (taken, and
missing from the remote or different there), tracebacks, torn pointers (one that does not read,
or names another run than the adopter's).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import yaml

from bench.fault_trials import Tally, cli_run, has_traceback
from bench.servers.object_faults import OBJECT_FAULTS, ObjectFaultProxy
from bench.servers.object_store import S3Server

__all__ = ["fault_trials", "outage_trials", "project", "trials"]

FAKE = Path(__file__).resolve().parents[1] / "fake_target.py"
#: The share of requests a fault meets (at most two in a row for one request).
RATE = 0.3


def project(where: Path) -> Path:
    """The fake target and a three-case suite, its baseline 4 deep; the suite file."""
    where.mkdir(parents=True)
    shutil.copy(FAKE, where / "fake_target.py")
    command = [sys.executable, "fake_target.py", "{{input}}", "--repeat", "{{repeat}}"]
    suite = {
        "name": "faulty",
        "target": {"command": command, "output": "json", "fingerprint": ["fake_target.py"]},
        "defaults": {"repeats": 3, "baseline_repeats": 4},
        "cases": [{"id": c, "input": f"question {c}", "scorers": ["json_valid"]} for c in "abc"],
    }
    path = where / "suite.yaml"
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    return path


def _check(suite: Path, root: Path, env: dict[str, str], tally: Tally, who: str) -> dict | None:
    """One check through the faults; its report, or None (counted) when it did not finish."""
    done = cli_run("check", suite, "--format", "json", root=root, env=env)
    if has_traceback(done.stderr):
        tally.tracebacks += 1
    if done.returncode != 0:
        tally.fail(f"{who}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
        return None
    report: dict = orjson.loads(done.stdout)
    return report


def _lost(root: Path, remote_env: dict[str, str], url: str) -> tuple[int, int]:
    """Samples of `root` missing from the remote, and those the remote holds otherwise."""
    from noisefloor.store.remote_url import open_remote

    saved = dict(os.environ)
    os.environ.update(remote_env)
    try:
        remote = open_remote(url)
        missing = differ = 0
        for path in (root / "samples").rglob("r*.json"):
            got = remote.get(path.relative_to(root).as_posix())
            missing += got is None
            differ += got is not None and got.data != path.read_bytes()
        return missing, differ
    finally:
        os.environ.clear()
        os.environ.update(saved)


def trials(n: int, work: Path, seed: int = 0) -> list[Tally]:
    """`n` trials of each fault in `OBJECT_FAULTS`, then of each outage; one tally each."""
    return fault_trials(n, work / "faults", seed) + outage_trials(n, work / "outages", seed)


def fault_trials(n: int, work: Path, seed: int = 0) -> list[Tally]:
    """`n` trials of each fault in `OBJECT_FAULTS`; one tally per fault."""
    tallies = []
    with S3Server() as s3:
        clean = s3.env()
        for index, fault in enumerate(OBJECT_FAULTS):
            tally = Tally(f"remote, {fault.replace('_', ' ')}")
            with ObjectFaultProxy(s3.url, fault, rate=RATE, seed=seed + index) as proxy:
                for trial in range(n):
                    place = work / fault / str(trial)
                    suite = project(place / "project")
                    bucket = s3.bucket(f"nf-{fault.replace('_', '-')}-{trial}")
                    url = f"s3://{bucket}/team"
                    env = {**clean, "AWS_ENDPOINT_URL": proxy.url, "NOISEFLOOR_REMOTE": url}
                    tally.trials += 1
                    adopted = _check(suite, place / "adopter", env, tally, "adopting")
                    with (suite.parent / "fake_target.py").open("a") as handle:
                        handle.write(f"\n# trial {trial}\n")
                    first = _check(suite, place / "first", env, tally, "first runner")
                    second = _check(suite, place / "second", env, tally, "second runner")
                    if second is not None and second["calls"] != 0:
                        tally.fail(f"the second runner called the target {second['calls']} times")
                    for root in ("adopter", "first"):
                        missing, differ = _lost(place / root, clean, url)
                        tally.lost += missing
                        tally.twice += differ
                    both = adopted is not None and first is not None
                    if both and first["baseline"] != adopted["candidate"]:
                        tally.torn += 1
            tally.figures[f"{fault} faults served"] = str(sum(proxy.faults.values()))
            tallies.append(tally)
    return tallies


#: Seconds a frozen server may hold a command before it must have failed (the documented bound).
FROZEN_BOUND_S = 35.0


def _slow_check(suite: Path, root: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """A check of 8 repeats per case whose target takes 0.2 s a call, started in the background."""
    argv = [sys.executable, "-m", "noisefloor", "--root", str(root), "check", str(suite)]
    return subprocess.Popen(
        [*argv, "--repeats", "8", "--format", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env, "NOISEFLOOR_FAKE_SLEEP": "0.2"},
    )


def _taking(root: Path, samples: int, deadline_s: float = 120) -> None:
    """Wait until `root` holds `samples` samples: the baseline's, fetched, and a few taken."""
    deadline = time.monotonic() + deadline_s
    while len(list(root.glob("samples/*/*/*/*/*/r*.json"))) < samples:
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)


def _after(
    suite: Path, root: Path, env: dict[str, str], clean: dict[str, str], url: str, tally: Tally
) -> None:
    """The check run again once the server is back: it must pass, and leave the remote whole."""
    again = cli_run("check", suite, "--repeats", "8", "--format", "json", root=root, env=env)
    if has_traceback(again.stderr):
        tally.tracebacks += 1
    if again.returncode != 0:
        tally.fail(f"rerun: exit {again.returncode}: {again.stderr.strip()[-300:]}")
    missing, differ = _lost(root, clean, url)
    tally.lost += missing
    tally.twice += differ
    verified = cli_run("store", "verify", "--remote", "--format", "json", root=root, env=env)
    if verified.returncode != 0:
        tally.fail(f"store verify --remote after the rerun: {verified.stdout.strip()[-300:]}")


def outage_trials(n: int, work: Path, seed: int = 0) -> list[Tally]:
    """`n` trials of an outage mid-push (every request reset for 0.5 to 3 s while a check
    pushes its samples) and `n` of a frozen server (SIGSTOP mid-check); one tally each."""
    rng = random.Random(seed)
    out, frozen = Tally("remote, outage mid-push"), Tally("remote, frozen server")
    longest = 0.0
    for trial in range(n):
        with S3Server() as s3, ObjectFaultProxy(s3.url, "latency", rate=0.0) as proxy:
            clean = s3.env()
            for tally, kind in ((out, "outage"), (frozen, "frozen")):
                place = work / kind / str(trial)
                suite = project(place / "project")
                url = f"s3://{s3.bucket(f'nf-{kind}-{trial}')}/team"
                via = proxy.url if kind == "outage" else s3.url
                env = {**clean, "AWS_ENDPOINT_URL": via, "NOISEFLOOR_REMOTE": url}
                tally.trials += 1
                if _check(suite, place / "adopter", env, tally, "adopting") is None:
                    continue
                with (suite.parent / "fake_target.py").open("a") as handle:
                    handle.write(f"\n# {kind} {trial}\n")
                check = _slow_check(suite, place / "runner", env)
                _taking(place / "runner", 12 + 4)
                if kind == "outage":
                    proxy.down = True
                    time.sleep(rng.uniform(0.5, 3.0))
                    proxy.down = False
                    _, err = check.communicate(timeout=300)
                    if check.returncode not in (0, 3):
                        tally.fail(f"out mid-push: exit {check.returncode}: {err[-300:]}")
                else:
                    os.killpg(s3.pid, signal.SIGSTOP)
                    started = time.monotonic()
                    try:
                        _, err = check.communicate(timeout=300)
                    finally:
                        took = time.monotonic() - started
                        os.killpg(s3.pid, signal.SIGCONT)
                    longest = max(longest, took)
                    if check.returncode != 3 or "timed out" not in err or url not in err:
                        tally.fail(f"frozen: exit {check.returncode}: {err.strip()[-300:]}")
                    elif took > FROZEN_BOUND_S:
                        tally.fail(f"frozen: failed after {took:.1f} s, past {FROZEN_BOUND_S} s")
                if has_traceback(err):
                    tally.tracebacks += 1
                _after(suite, place / "runner", env, clean, url, tally)
    frozen.figures["longest wait for a frozen server's failure"] = f"{longest:.1f} s"
    return [out, frozen]
