"""Disk full and write errors: a check under a file-size limit (RLIMIT_FSIZE) or on a tiny
tmpfs stops with exit 3 and a clear message, keeps the samples it wrote, and the next check,
with room again, takes only the missing ones."""

from __future__ import annotations

import contextlib
import os
import random
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.fault_trials import Tally, has_traceback
from bench.fault_trials.store_state import calls, ledger_disagrees, store_damage, write_suite

__all__ = ["trials"]

CASES = 4
REPEATS = 3
SUITE = "full"

# The target lifts the limit for itself: its call log is a file too.
_UNLIMITED = """\
import resource, runpy, sys
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

# what the message says: the write that failed, and where to find room
_SAID = (" writing ", "free space, or move the store with --root")


def _suite(work: Path) -> Path:
    log = work / "calls.log"
    suite = write_suite(work, SUITE, CASES, REPEATS, log)
    (work / "unlimited.py").write_text(_UNLIMITED)
    text = suite.read_text().replace(
        "- fake_target.py\n", "- unlimited.py\n  - fake_target.py\n", 1
    )
    suite.write_text(text)
    return suite


def _check(
    suite: Path, root: Path, limit: Callable[[], None] | None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noisefloor", "--root", str(root), "check", str(suite)]
        + ["--repeats", str(REPEATS), "--adopt", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NOISEFLOOR_JOBS": "1"},
        preexec_fn=limit,
        check=False,
    )


def _kept(root: Path) -> set[tuple[str, str]]:
    base = root / "samples"
    paths = [p for p in base.rglob("r*.json") if p.stat().st_size] if base.is_dir() else []
    return {(f"question {p.parent.parent.name}", p.stem[1:]) for p in paths}


def _judge(tally: Tally, work: Path, root: Path, limited: subprocess.CompletedProcess[str]) -> None:
    """Judge the check that ran out of room, then check again with room."""
    log = work / "calls.log"
    if has_traceback(limited.stdout + limited.stderr):
        tally.tracebacks += 1
    if limited.returncode == 3:
        if not all(said in limited.stderr for said in _SAID):
            tally.fail(f"the check without room said: {limited.stderr.strip()[-300:]}")
    elif limited.returncode != 0:
        tally.fail(f"the check without room exited {limited.returncode}: {limited.stderr[-300:]}")
    damage = store_damage(root)
    before, kept = calls(log), _kept(root)
    again = _check(work / f"{SUITE}.yaml", root, None)
    if has_traceback(again.stdout + again.stderr):
        tally.tracebacks += 1
    if again.returncode != 0:
        tally.fail(f"the check with room again exited {again.returncode}: {again.stderr[-300:]}")
        return
    taken = calls(log) - before
    tally.twice += sum(n for key, n in taken.items() if key in kept)
    tally.twice += sum(n - 1 for n in taken.values() if n > 1)
    wanted = {(f"question {SUITE}-c{i}", str(r)) for i in range(CASES) for r in range(REPEATS)}
    tally.lost += len(wanted - _kept(root))
    damage += store_damage(root)
    tally.torn += sum("pointer" in d for d in damage)
    disagreement = ledger_disagrees(root)
    if damage or disagreement:
        tally.fail("; ".join([*damage[:3], *([disagreement] if disagreement else [])]))


def _fsize_trial(tally: Tally, work: Path, rng: random.Random) -> None:
    """A file-size limit somewhere between one sample and a grown ledger."""
    suite, root = _suite(work), work / "store"
    size = int(2 ** rng.uniform(8, 17))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))

    _judge(tally, work, root, _check(suite, root, limit))


@contextlib.contextmanager
def _tmpfs(directory: Path, size: str) -> Iterator[str | None]:
    """A tmpfs of `size` mounted at `directory`; yields why not when it cannot be mounted."""
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        yield f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})"
        return
    try:
        yield None
    finally:
        subprocess.run(["umount", str(directory)], check=False)


def _tmpfs_trial(tally: Tally, work: Path, rng: random.Random) -> None:
    """A store root on a tmpfs that fills: full on the first check, moved to room for the next."""
    suite = _suite(work)
    mount, root = work / "tmpfs", work / "store"
    size = f"{int(2 ** rng.uniform(3, 9))}k"
    with _tmpfs(mount, size) as refused:
        if refused is not None:
            tally.notes.append(f"skipped: {refused}")
            return
        full = mount / "store"
        limited = _check(suite, full, None)
        # the next check has room: the store moves (as the message advises) to a disk with room
        shutil.copytree(full, root, symlinks=True)
    _judge(tally, work, root, limited)


def trials(n: int, workdir: Path, seed: int = 0) -> list[Tally]:
    """`n` trials of each: a random file-size limit, and a tmpfs of a random small size."""
    rng = random.Random(seed)
    fsize, tmpfs = Tally("file-size limit"), Tally("full tmpfs")
    for trial in range(n):
        fsize.trials += 1
        _fsize_trial(fsize, workdir / f"fsize-{trial}", rng)
        tmpfs.trials += 1
        _tmpfs_trial(tmpfs, workdir / f"tmpfs-{trial}", rng)
    return [fsize, tmpfs]
