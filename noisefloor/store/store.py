"""The on-disk layout under the store root: paths as cache keys, records, pointers, locks.

Writes go through store_files, atomic and fenced in the root; no OSError is swallowed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from noisefloor.errors import CorruptFile, StoreError
from noisefloor.model.records import BaselinePointer, CaseRecord, RunRecord
from noisefloor.settings import LOCK_TIMEOUT_S
from noisefloor.store.files import M, RootedFiles, remove_not_a_file
from noisefloor.store.gitignore import gitignore_texts
from noisefloor.store.layout import LOST_MARK, check_name, file_kind, has_sample, utc_now
from noisefloor.store.lock import suite_lock

__all__ = [
    "ReadOnlyStore",
    "Store",
]


class Store(RootedFiles):
    """The store root and everything under it.

    The path of a sample file is its cache key: target version, case input, epoch and repeat.
    """

    def __init__(self, root: Path | str, lock_timeout_s: float = LOCK_TIMEOUT_S) -> None:
        super().__init__(root)
        self.dropped: list[Path] = []
        """Corrupt derived files this store deleted, oldest first (`drop_derived`)."""
        self.dropped_samples: list[Path] = []
        """Corrupt samples this store deleted, to be taken again (`drop_sample`)."""
        self.lock_timeout_s = lock_timeout_s
        """How long `lock` waits for another process before it raises "store busy"."""

    read_only = False

    def sample_dir(
        self, suite: str, case_id: str, target_key: str, case_key: str, epoch: int
    ) -> Path:
        """Where the repeats of one case, for one target version and epoch, live.

        Target version and epoch come first so that one baseline's samples are one directory
        (`samples/<suite>/<target_key>/e<epoch>/`), which the store's .gitignore can name.
        """
        return self.root / self.sample_rel(suite, case_id, target_key, case_key, epoch)

    @staticmethod
    def sample_rel(suite: str, case_id: str, target_key: str, case_key: str, epoch: int) -> str:
        """`sample_dir` relative to the root, as records name it: a plain string, for a run
        records one per case, and pathlib's joins of each took longer than the rest of it."""
        check_name(suite, "suite name")
        check_name(case_id, "case id")
        return f"samples/{suite}/{target_key}/e{epoch}/{case_id}/{case_key}"

    @staticmethod
    def sample_path(sample_dir: Path, repeat: int) -> Path:
        """The file of one repeat."""
        return sample_dir / f"r{repeat}.json"

    def sample_files(self, case: CaseRecord) -> list[str]:
        """The file of each repeat a case's verdict rests on, in repeat order (`sample_path`'s
        names): r<start> up to r<repeats-1>.

        Plain strings: comparisons stat every sample of both runs, thousands of them.
        """
        prefix = os.path.join(self.abs_str(case.sample_dir), "r")
        return [f"{prefix}{repeat}.json" for repeat in range(case.start, case.repeats)]

    def sample_paths(self, case: CaseRecord) -> list[Path]:
        """The file of each repeat a case's verdict rests on, in repeat order."""
        return [Path(file) for file in self.sample_files(case)]

    def derived_dir(self, kind: str, suite: str, *parts: str) -> Path:
        """A directory of derived, disposable files (scores, bands, verdicts, reports)."""
        check_name(suite, "suite name")
        for part in parts:
            check_name(part, kind)
        return self.root.joinpath(kind, suite, *parts)

    def drop_derived(self, error: CorruptFile) -> bool:
        """Delete the corrupt file `error` names when it is derived (a score, band, verdict or
        report file, rebuilt from its inputs on the next run of its task); False otherwise."""
        if self._kind(error.path) != "derived":
            return False
        self._drop(error.path)
        self.dropped.append(error.path)
        return True

    def drop_sample(self, error: CorruptFile) -> bool:
        """Delete the corrupt sample `error` names, so that the next run takes it again (a
        sample that does not read back is no sample); False when it names no sample."""
        if self._kind(error.path) != "sample":
            return False
        self._drop(error.path)
        self.dropped_samples.append(error.path)
        return True

    def _kind(self, path: Path) -> str:
        """The kind of a file under the root (`file_kind`); "other" outside it. The file's own
        directory is resolved, never the file: it may be a symlink loop."""
        try:
            where = Path(os.path.realpath(path.parent)) / path.name
            return file_kind(where.relative_to(os.path.realpath(self.root)).as_posix())
        except ValueError:
            return "other"

    @staticmethod
    def _drop(path: Path) -> None:
        if not remove_not_a_file(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def corrupt_hint(self, path: Path) -> str:
        """What to do about a corrupt file, by its kind (the command that fixes it)."""
        kind = self._kind(path)
        repair = "`noisefloor store verify --repair` deletes it"
        if kind == "sample":
            return f"{repair}, and the next run takes the sample again"
        if kind == "derived":
            return f"{repair}, and the next run builds it again from its inputs"
        if kind == "run":
            suite = path.parent.name
            return (
                f"if it is the baseline of {suite!r}, point the baseline at another run with "
                f"`noisefloor baseline set RUN` (`noisefloor runs` lists them), or delete "
                f"baselines/{suite}.json to adopt a new baseline on the next check; then "
                "delete this file (its samples stay and are reused)"
            )
        if kind == "baseline pointer":
            return (
                "run `noisefloor baseline set RUN` (`noisefloor runs` lists the runs), or "
                "delete it to adopt a new baseline on the next check"
            )
        if kind == "label":
            return (
                f"record the label again with `noisefloor record ... --label {path.stem} "
                "--replace`, or delete it"
            )
        if kind == "epochs":
            return (
                "delete it: each target version samples in epoch 0 again (its cached samples "
                "are reused; `--fresh` starts a new epoch)"
            )
        if kind in ("manifest", "gitignore", "lock"):
            return f"{repair}; the next run writes it again"
        return super().corrupt_hint(path)

    def read_derived(self, path: Path, model: type[M] | None = None) -> Any:
        """Read a derived file (as `model`, else as JSON); a corrupt one is deleted before the
        error is raised, so that its task makes it again on the next run."""
        try:
            return self.read_model(path, model) if model is not None else self.read_json(path)
        except CorruptFile as exc:
            self.drop_derived(exc)
            raise

    def run_path(self, suite: str, run_id: str) -> Path:
        """The run record of one run."""
        return (
            self.root
            / "runs"
            / check_name(suite, "suite name")
            / f"{check_name(run_id, 'run id')}.json"
        )

    def baseline_path(self, suite: str) -> Path:
        """The baseline pointer of one suite."""
        return self.root / "baselines" / f"{check_name(suite, 'suite name')}.json"

    def label_path(self, suite: str, label: str) -> Path:
        """The pointer of one label of one suite."""
        return (
            self.root
            / "labels"
            / check_name(suite, "suite name")
            / f"{check_name(label, 'label')}.json"
        )

    def manifest_path(self, digest: str) -> Path:
        """The list of tracked files behind a `git:` fingerprint entry, named by its digest."""
        return self.root / "manifests" / f"{check_name(digest, 'manifest digest')}.json"

    def epoch_path(self, suite: str) -> Path:
        """The current sampling epoch per target version of one suite."""
        return self.root / "epochs" / f"{check_name(suite, 'suite name')}.json"

    @property
    def doit_db(self) -> Path:
        """doit's dependency database: disposable, losing it costs re-scoring only."""
        return self.root / "doit.sqlite"

    def ensure(self) -> None:
        """Create the root and its .gitignore on first use."""
        self.root.mkdir(parents=True, exist_ok=True)
        if not (self.root / ".gitignore").exists():
            self.write_gitignore()

    def write_gitignore(self) -> None:
        """Ignore all but the baselines: the root's .gitignore is the same for every store, and
        one per suite (under runs/ and samples/) and one under manifests/ keep each baseline
        run, its sample directory and its manifest visible. A file is written only when its
        text changes, so a baseline moved leaves the other suites' files alone."""
        baselines = []
        for pointer in self.baselines():
            path = self.run_path(pointer.suite, pointer.run_id)
            baselines.append((pointer, self.read_model(path, RunRecord) if path.exists() else None))
        files = gitignore_texts(self.root, baselines)
        for file, text in files.items():
            if not file.is_file() or file.read_bytes() != text.encode():
                file.parent.mkdir(parents=True, exist_ok=True)
                self.write_bytes(file, text.encode())

    def write_sample(self, path: Path, obj: Any) -> None:
        """Write one sample file (the only writes that stand for target calls). The rename
        replaces a symlink in its place (a loop, or one leading nowhere); a directory there (no
        sample, `has_sample`) is removed and the write made again: checking first cost two
        failed syscalls on every sample."""
        try:
            self.write_json(path, obj)
        except IsADirectoryError:
            remove_not_a_file(path)
            self.write_json(path, obj)
        if isinstance(obj, dict) and obj.get("outcome") == "error:infra":
            mark = path.parent / LOST_MARK
            if not os.path.exists(mark):
                self.write_bytes(mark, b"")

    def fetched(self, files: Sequence[str]) -> list[str]:
        """The samples among `files`, absent here, that a shared copy held and that are now
        written here: none without a remote (`mirrored.MirroredStore` fetches them)."""
        return []

    def claimed(self, files: Sequence[str]) -> set[str]:
        """Claim the samples among `files` (missing here and in any shared copy) for this
        command; those another command claimed first, which this one waits for: none without a
        remote."""
        return set()

    def await_claimed(self, files: Sequence[str]) -> list[str]:
        """Wait until the samples at `files`, claimed by others, are here; those whose claimant
        stopped delivering them, now claimed by this command to take: all without a remote."""
        return list(files)

    def save_run(self, run: RunRecord) -> None:
        """Write a completed run record."""
        self.write_json(self.run_path(run.suite, run.run_id), run)

    def load_run(self, suite: str, run_id: str) -> RunRecord:
        """Read one run record."""
        return self.read_model(self.run_path(suite, run_id), RunRecord)

    def runs(self, suite: str | None = None) -> list[tuple[str, str]]:
        """(suite, run_id) pairs, oldest first (run ids start with their UTC time)."""
        base = self.root / "runs"
        if not base.is_dir():
            return []
        dirs = [base / suite] if suite else sorted(p for p in base.iterdir() if p.is_dir())
        found = [(d.name, f.stem) for d in dirs if d.is_dir() for f in d.glob("*.json")]
        return sorted(found, key=lambda pair: (pair[1], pair[0]))

    def find_run(self, run_id: str) -> RunRecord:
        """Find a run by id (or unique prefix) across suites."""
        check_name(run_id, "run id")
        matches = [(s, r) for s, r in self.runs() if r == run_id]
        if not matches:
            matches = [(s, r) for s, r in self.runs() if r.startswith(run_id)]
        if not matches:
            raise StoreError(
                f"no run {run_id!r} under {self.root}",
                hint="`noisefloor runs` lists the stored runs",
            )
        if len(matches) > 1:
            names = ", ".join(r for _, r in matches[:5])
            raise StoreError(f"run id {run_id!r} is ambiguous: {names}")
        suite, rid = matches[0]
        return self.load_run(suite, rid)

    def latest_run(self, suite: str | None = None) -> RunRecord | None:
        """The newest completed run, of one suite or of any."""
        found = self.runs(suite)
        return self.load_run(*found[-1]) if found else None

    def baseline(self, suite: str) -> BaselinePointer | None:
        """The suite's baseline pointer, if any."""
        path = self.baseline_path(suite)
        if not os.path.lexists(path):
            return None
        return self.read_model(path, BaselinePointer)

    def set_baseline(self, suite: str, run_id: str) -> BaselinePointer:
        """Move the suite's baseline pointer."""
        pointer = BaselinePointer(suite=suite, run_id=run_id, set_at=utc_now())
        self.write_json(self.baseline_path(suite), pointer)
        self.write_gitignore()
        return pointer

    def baselines(self) -> list[BaselinePointer]:
        """Every baseline pointer, by suite name."""
        base = self.root / "baselines"
        if not base.is_dir():
            return []
        return [self.read_model(p, BaselinePointer) for p in sorted(base.glob("*.json"))]

    def set_label(self, suite: str, label: str, run_ids: Sequence[str]) -> None:
        """Name the runs of a label, oldest first: their repeats pool."""
        self.write_json(
            self.label_path(suite, label), {"label": label, "runs": list(run_ids), "suite": suite}
        )

    def label_runs(self, suite: str, label: str) -> list[str]:
        """The runs a label names, oldest first; empty when there is no such label.

        A label file written before labels pooled names a single `run_id`.
        """
        path = self.label_path(suite, label)
        if not os.path.lexists(path):
            return []
        data = self.read_json(path)
        runs = data.get("runs", [data.get("run_id")]) if isinstance(data, dict) else None
        if not isinstance(runs, list) or not runs or not all(isinstance(r, str) for r in runs):
            raise CorruptFile(
                f"corrupt label file {self._show(path)}: it names no runs",
                path,
                hint=self.corrupt_hint(path),
            )
        return runs

    def labels(self) -> list[tuple[str, str, list[str]]]:
        """Every label: (suite, label, its runs), by suite and label."""
        base = self.root / "labels"
        found = sorted(base.glob("*/*.json")) if base.is_dir() else []
        return [(p.parent.name, p.stem, self.label_runs(p.parent.name, p.stem)) for p in found]

    def find_label(self, label: str, suite: str | None = None) -> RunRecord | None:
        """The newest run of a label, searched across suites unless one is given.

        That run's cases hold the label's whole pool: each run recorded under a label takes
        repeats after the ones its earlier runs took, in the same sample sets.
        """
        check_name(label, "label")
        base = self.root / "labels"
        suites = [suite] if suite else sorted(p.name for p in base.glob("*/"))
        # named, not globbed: a glob skips a label file that is a broken symlink
        paths = [self.label_path(name, label) for name in suites]
        paths = [p for p in paths if os.path.lexists(p)]
        if not paths:
            return None
        if len(paths) > 1:
            raise StoreError(
                f"label {label!r} exists in several suites: "
                + ", ".join(p.parent.name for p in paths),
                hint="name the suite with --suite",
            )
        suite = paths[0].parent.name
        return self.load_run(suite, self.label_runs(suite, label)[-1])

    def save_manifest(self, digest: str, files: dict[str, str]) -> None:
        """Keep the tracked files a fingerprint digests, once: its name is its content's hash.

        Baseline runs' manifests are committed with them (a line per file, so that git stores
        the next baseline's as a small delta), so a check anywhere can say which files moved
        the target's version.
        """
        path = self.manifest_path(digest)
        if not has_sample(str(path)):  # missing, emptied, or no file at all: written again
            remove_not_a_file(path)
            self.write_json(path, files)

    def load_manifest(self, digest: str) -> dict[str, str] | None:
        """The tracked files behind a fingerprint digest, or None when the store lacks them
        or holds a corrupt copy (it only names files: `store verify` reports it)."""
        path = self.manifest_path(digest)
        if not os.path.lexists(path):
            return None
        try:
            data = self.read_json(path)
        except CorruptFile:
            return None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return None
        return {str(k): v for k, v in data.items()}

    def epochs(self, suite: str) -> dict[str, int]:
        """The current sampling epoch of each target version of a suite that left epoch 0."""
        path = self.epoch_path(suite)
        if not os.path.lexists(path):
            return {}
        data = self.read_json(path)
        if not isinstance(data, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in data.values()
        ):
            raise CorruptFile(
                f"corrupt epochs file {self._show(path)}: not an object of target version to "
                "epoch number",
                path,
                hint=self.corrupt_hint(path),
            )
        return data

    def epoch(self, suite: str, target_key: str) -> int:
        """The current sampling epoch of a target version (0 until `--fresh` bumps it)."""
        return self.epochs(suite).get(target_key, 0)

    def bump_epoch(self, suite: str, target_key: str) -> int:
        """Start a new epoch so that every sample is taken again."""
        path = self.epoch_path(suite)
        epochs = self.epochs(suite)
        epochs[target_key] = epochs.get(target_key, 0) + 1
        self.write_json(path, epochs)
        return int(epochs[target_key])

    def lock(self, suite: str) -> contextlib.AbstractContextManager[None]:
        """An exclusive lock per suite, so two runs cannot race on epochs and pointers: waits up
        to `lock_timeout_s` for another process to release it, then raises "store busy"."""
        path = self.root / "locks" / f"{check_name(suite, 'suite name')}.lock"
        return suite_lock(path, suite, self.lock_timeout_s, self.root, self._show(path))


class ReadOnlyStore(Store):
    """A store view for `rescore` and `diff`: sample writes raise, so they cannot call targets."""

    read_only = True

    def write_sample(self, path: Path, obj: Any) -> None:
        """Refuse: this view never produces samples."""
        raise StoreError(f"internal error: a sample write reached a read-only store ({path.name})")

    def bump_epoch(self, suite: str, target_key: str) -> int:
        """Refuse: epochs belong to runs that sample."""
        raise StoreError("internal error: a read-only store cannot start a new epoch")
