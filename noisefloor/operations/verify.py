"""`store verify`: read every file of a store and report each one that is corrupt, with its kind
and what fixes it; `--repair` deletes what is rebuilt or retaken and rebuilds the ledger.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from noisefloor.errors import CorruptFile, StoreError
from noisefloor.model.records import BaselinePointer, CaseBand, RunRecord, ScoreFile
from noisefloor.model.report import ReportFile, VerdictFile
from noisefloor.model.verification import Problem, Verified
from noisefloor.pipeline.banding import read_sample
from noisefloor.pipeline.engine import shard_cases, verdict_json
from noisefloor.pipeline.indexing import open_ledger
from noisefloor.store.files import not_a_file, remove_not_a_file
from noisefloor.store.layout import file_kind
from noisefloor.store.sqlite import unlink_db
from noisefloor.store.store import Store

__all__ = ["verify_store"]

#: Kinds whose corrupt files `--repair` deletes: each is rebuilt, retaken or written again.
REPAIRABLE = frozenset(
    {"sample", "derived", "manifest", "lock", "ledger lock", "doit db", "ledger", "tmp"}
)

#: A temporary file of an atomic write (`.NAME.PID.ID.tmp`) or of a ledger rebuild.
_TMP = re.compile(r"^\.?.*\.(\d+)(?:\.[0-9a-f]+)?\.tmp$|^.*\.rebuild-(\d+)\.tmp$")


def _files(root: Path) -> Iterator[Path]:
    """Every entry under the root that stands for a file, a directory in a file's place
    included (it is found by its name: `r3.json`, `x.lock`), without following symlinks."""
    for directory, dirs, names in os.walk(root):
        here = Path(directory)
        for name in [*names, *dirs]:
            path = here / name
            if name in dirs and not _names_a_file(path.relative_to(root)):
                continue
            yield path
        dirs[:] = [d for d in dirs if not _names_a_file((here / d).relative_to(root))]


def _names_a_file(rel: Path) -> bool:
    """Whether a directory's name is one a file of the store takes."""
    name = rel.name
    return (
        name.endswith((".json", ".done", ".lock", ".sqlite", ".tmp"))
        or name == ".gitignore"
        and len(rel.parts) == 1
    )


def _tmp_owner_alive(name: str) -> bool:
    match = _TMP.match(name)
    if match is None:
        return False
    pid = int(match[1] or match[2])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Reader:
    """Reads each kind of file the way the commands read it; returns what is wrong, or None."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def check(self, path: Path, kind: str) -> str | None:
        if kind in ("lock", "ledger lock"):
            return "not a file: no lock can be taken on it" if not_a_file(path) else None
        if not_a_file(path):
            return "not a file: a directory or a symlink that leads nowhere stands in its place"
        if path.name.endswith(".done"):
            return None  # a marker: only its existence counts
        readers: dict[str, Callable[[Path], Any]] = {
            "sample": self._sample,
            "derived": self._derived,
            "run": lambda p: self.store.read_model(p, RunRecord),
            "baseline pointer": self._pointer,
            "label": lambda p: self.store.label_runs(p.parent.name, p.stem),
            "epochs": lambda p: self.store.epochs(p.stem),
            "manifest": self._manifest,
            "gitignore": self._gitignore,
            "doit db": self._database,
            "ledger": self._database,
        }
        reader = readers.get(kind)
        if reader is None:
            return None
        try:
            reader(path)
        except CorruptFile as exc:
            return exc.message.split(": ", 1)[-1]
        except StoreError as exc:
            return exc.message
        return None

    def _sample(self, path: Path) -> None:

        if path.stat().st_size == 0:
            raise StoreError("empty (a write the machine never flushed): it counts as missing")
        read_sample(path)

    def _derived(self, path: Path) -> None:

        kind = path.relative_to(self.store.root).parts[0]
        if kind == "scores":
            self.store.read_model(path, ScoreFile)
        elif kind == "bands":
            self.store.read_model(path, CaseBand)
        elif kind == "verdicts":
            verdict_json(_Keep(self.store), path)
        elif ".shard" in path.name:
            shard_cases(_Keep(self.store), path, VerdictFile)
        else:
            self.store.read_model(path, ReportFile)

    def _pointer(self, path: Path) -> None:
        pointer = self.store.read_model(path, BaselinePointer)
        run = self.store.run_path(pointer.suite, pointer.run_id)
        if not os.path.lexists(run):
            raise StoreError(f"it names run {pointer.run_id}, which is not in the store")

    def _manifest(self, path: Path) -> None:
        data = self.store.read_json(path)
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise StoreError("not an object of file name to digest")

    def _gitignore(self, path: Path) -> None:
        # its text is the user's to edit (`ensure` keeps an edited one); bytes git cannot read
        # as a list of patterns are not
        try:
            path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StoreError(f"not text: {exc}") from None

    @staticmethod
    def _database(path: Path) -> None:
        if path.name.endswith(("-wal", "-shm", "-journal")):
            return
        if path.name.startswith("ledger") and path.stat().st_size == 0:
            raise StoreError("empty: it indexes none of the store's samples and runs")
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                found = conn.execute("PRAGMA quick_check").fetchone()
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"not a readable SQLite database: {exc}") from None
        if found is None or found[0] != "ok":
            raise StoreError(f"damaged SQLite database: {found[0] if found else 'no answer'}")


class _Keep(Store):
    """The store as verify reads it: a corrupt file is reported, never dropped."""

    def __init__(self, store: Store) -> None:
        super().__init__(store.root)

    def drop_derived(self, error: CorruptFile) -> bool:
        return False


def _fix(store: Store, rel: str, kind: str) -> str:
    """What fixes a corrupt file of `kind`, as a command or a deletion."""
    if kind == "tmp":
        return "a temporary file of a write that never finished: delete it"
    if kind == "doit db":
        return "delete it: it only records the derived files' checksums, and is made again"
    if kind == "ledger":
        return "run `noisefloor ledger rebuild`: it is an index of the sample and run files"
    if kind == "ledger lock":
        return "delete it: the ledger makes it again"
    return store.corrupt_hint(store.root / rel)


def _kind(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    if name.endswith(".tmp"):
        return "tmp"
    if rel == "ledger.sqlite.lock":
        return "ledger lock"
    return file_kind(rel)


def verify_store(store: Store, repair: bool = False) -> Verified:
    """Read every file under the store root as the commands read it; report each that is
    wrong. With `repair`, delete every corrupt file that is rebuilt (derived files, doit's
    database), retaken (samples) or written again (manifests, locks, stale temporary files),
    rewrite a damaged .gitignore, and rebuild the ledger when samples went or it is damaged.
    Baselines, runs, labels and epochs are left as they are: only their owner knows which run
    they should name."""
    root = store.root
    if not root.is_dir():
        raise StoreError(f"no store at {root}", hint="--root names the store (default .noisefloor)")
    reader = _Reader(store)
    problems: list[Problem] = []
    count = 0
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        kind = _kind(rel)
        if kind == "other":
            continue
        count += 1
        if kind == "tmp":
            if not _tmp_owner_alive(path.name):
                problems.append(Problem(rel, kind, "left behind by a stopped process", ""))
            continue
        what = reader.check(path, kind)
        if what is not None:
            problems.append(Problem(rel, kind, what, ""))
    for problem in problems:
        problem.fix = _fix(store, problem.rel, problem.kind)
    verified = Verified(count, problems)
    if repair:
        _repair(store, verified)
    return verified


#: What `--repair` did, by kind: it replaces the fix a problem's line shows.
_DONE = {
    "sample": "repaired: deleted; the next run takes the sample again",
    "derived": "repaired: deleted; the next run builds it again from its inputs",
    "doit db": "repaired: deleted; the next run makes it again",
    "ledger": "repaired: deleted, and rebuilt from the sample and run files",
    "tmp": "repaired: deleted",
    "gitignore": "repaired: written again",
}


def _repair(store: Store, verified: Verified) -> None:
    rebuild_ledger = False
    for problem in verified.problems:
        _repair_one(store, problem)
        if problem.repaired:
            problem.fix = _DONE.get(problem.kind, "repaired: deleted; written again when needed")
            rebuild_ledger |= problem.kind in ("sample", "ledger")
    if rebuild_ledger:
        try:
            with open_ledger(store.root) as ledger:
                ledger.rebuild(store.root)
        except StoreError as exc:
            # a run record is corrupt too: reported on its own line; rebuilt once it is fixed
            verified.ledger_error = exc.message
            return
        verified.ledger_rebuilt = True


def _repair_one(store: Store, problem: Problem) -> None:
    """Delete (or write again) the file of one problem, when its kind is repairable."""
    path = store.root / problem.rel
    if problem.kind == "gitignore":
        if not remove_not_a_file(path):
            path.unlink(missing_ok=True)
        try:
            store.write_gitignore()
        except StoreError:
            return  # a baseline pointer or run is broken too: reported on its own line
        problem.repaired = True
    elif problem.kind in REPAIRABLE:
        if remove_not_a_file(path):
            pass
        elif problem.kind in ("doit db", "ledger"):
            unlink_db(path)
        else:
            path.unlink(missing_ok=True)
        problem.repaired = True
