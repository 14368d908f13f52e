"""What the store-level fault trials share: a suite for the fast fake target that logs its
calls, and the checks of a store after a fault (files whole, pointers sound, ledger in step)."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import yaml

__all__ = ["calls", "count_calls", "ledger_disagrees", "store_damage", "write_suite"]

FAKE = Path(__file__).resolve().parents[1] / "fake_target.py"


def write_suite(
    directory: Path,
    name: str,
    cases: int,
    repeats: int,
    log: Path,
    env: dict[str, str] | None = None,
) -> Path:
    """A suite `name` of `cases` passing cases for the fake target, which logs each call to
    `log`; case ids carry the suite's name, so one log can serve several suites."""
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / "fake_target.py").exists():
        shutil.copy(FAKE, directory / "fake_target.py")
    suite = {
        "name": name,
        "target": {
            "command": [sys.executable, "fake_target.py", "{{input}}", "--repeat", "{{repeat}}"],
            "output": "json",
            "timeout_s": 30,
            "env": {"NOISEFLOOR_FAKE_LOG_CALLS": str(log), **(env or {})},
            "fingerprint": ["fake_target.py"],
        },
        "defaults": {"repeats": repeats, "baseline_repeats": repeats},
        "cases": [
            {
                "id": f"{name}-c{i}",
                "input": f"question {name}-c{i}",
                "scorers": [
                    "json_valid",
                    {"type": "contains", "needle": "Paris", "path": "answer"},
                ],
            }
            for i in range(cases)
        ],
    }
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


def calls(log: Path) -> Counter[tuple[str, str]]:
    """How many completed target calls the log holds per (question, repeat)."""
    found: Counter[tuple[str, str]] = Counter()
    if log.exists():
        for line in log.read_text().splitlines():
            _pid, repeat, question = line.split(" ", 2)
            found[(question, repeat)] += 1
    return found


def count_calls(log: Path, wanted: set[tuple[str, str]]) -> tuple[int, int]:
    """(samples never taken, samples taken more than once) of the calls `wanted`."""
    taken = calls(log)
    return len(wanted - set(taken)), sum(n - 1 for n in taken.values() if n > 1)


def _samples(root: Path) -> set[str]:
    base = root / "samples"
    if not base.is_dir():
        return set()
    return {p.relative_to(root).as_posix() for p in base.rglob("r*.json") if p.stat().st_size}


def store_damage(root: Path, strays: bool = True) -> list[str]:
    """What a fault left broken under `root`: a JSON file that does not parse, a stray
    temporary file (unless not `strays`), a baseline pointer that does not name a stored run
    ("pointer" in its text)."""
    damage: list[str] = []
    if not root.is_dir():
        return damage
    for path in sorted(root.rglob("*")):
        if path.name.endswith(".tmp"):
            if not strays:
                continue
            damage.append(f"stray temporary file {path.relative_to(root)}")
        elif path.suffix == ".json" and path.is_file():
            try:
                json.loads(path.read_bytes())
            except ValueError as exc:
                damage.append(f"half-written {path.relative_to(root)}: {exc}")
    for pointer in sorted((root / "baselines").glob("*.json")):
        try:
            data = json.loads(pointer.read_bytes())
            run = root / "runs" / data["suite"] / f"{data['run_id']}.json"
        except (ValueError, KeyError, TypeError) as exc:
            damage.append(f"torn baseline pointer {pointer.name}: {exc}")
            continue
        if not run.is_file():
            damage.append(f"baseline pointer {pointer.name} names a missing run {data['run_id']}")
    return damage


def ledger_disagrees(root: Path) -> str | None:
    """Why the ledger's sample rows differ from the sample files, or None when they agree."""
    files = _samples(root)
    db = root / "ledger.sqlite"
    if not db.exists():
        return f"no ledger beside {len(files)} samples" if files else None
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = {r[0] for r in conn.execute("SELECT sample_path FROM samples")}
    if rows == files:
        return None
    return (
        f"ledger rows and sample files differ: {len(files - rows)} files unindexed, "
        f"{len(rows - files)} rows without a file"
    )
