"""The remote store under a faulty object store: each trial adopts a baseline, checks a changed
version and checks it again on a fresh runner, all through a proxy failing a share of requests.

Counted per fault: failed trials (an exit but 0, a second runner that calls the target), samples
lost (taken, and missing from the remote or different there), tracebacks, torn pointers (one that
does not read, or names another run than the adopter's).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import orjson
import yaml

from bench.fault_trials import Tally, cli_run, has_traceback
from bench.servers.object_faults import OBJECT_FAULTS, ObjectFaultProxy
from bench.servers.object_store import S3Server

__all__ = ["project", "trials"]

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
