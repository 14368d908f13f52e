"""The local store as the working copy of a remote: what a command needs fetched by its keys, each
sample pushed as it is written, and baseline pointers per branch moved from the version read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from noisefloor.errors import PointerMoved, RemoteError
from noisefloor.model.records import BaselinePointer, RunRecord
from noisefloor.settings import LOCK_TIMEOUT_S, REMOTE_CONNECTIONS
from noisefloor.store.branches import Branches, mover, pointer_key
from noisefloor.store.files import dumps
from noisefloor.store.fingerprint import GIT_LABEL
from noisefloor.store.layout import LOST_MARK, has_sample, utc_now
from noisefloor.store.packs import pack, pack_key, unpack
from noisefloor.store.pushes import Pushes
from noisefloor.store.remote import Fetched, Moved, Remote
from noisefloor.store.store import Store

__all__ = ["MirroredStore"]


class MirroredStore(Store):
    """A store root whose shared copy is `remote`.

    Samples, run records and manifests are immutable there, written only if absent; a pointer
    moves only from the version this command read. Nothing is found by listing the remote.
    """

    def __init__(
        self,
        root: Path | str,
        remote: Remote,
        branches: Branches,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        *,
        max_age_s: float | None = None,
        environ: Mapping[str, str] | None = None,
        pushes: int = REMOTE_CONNECTIONS,
    ) -> None:
        super().__init__(root, lock_timeout_s)
        self._connections = pushes
        self._pushes: Pushes | None = None
        """While a suite's lock is held: its samples on their way to the remote."""
        self.remote = remote
        self.branches = branches
        self.notes: list[str] = []
        """What a report should warn of: a baseline older than its maximum age."""
        self._max_age_s = max_age_s
        self._environ = os.environ if environ is None else environ
        self._absent: set[str] = set()  # keys the remote lacked when this command asked
        self._versions: dict[str, str | None] = {}  # pointer key -> the version read
        self._synced: set[str] = set()  # suites whose pointer this command has read
        self._own_runs: dict[str, str] = {}  # key -> version of each run record pushed here
        self._unpushed: dict[str, str] = {}  # key -> suite of each run record saved, not pushed
        self._took: set[str] = set()  # suites this command took a sample of
        self._held = 0  # suite locks this command holds

    def key(self, path: Path | str) -> str:
        """A file's key in the remote: its path relative to the root, with forward slashes."""
        return Path(os.path.relpath(path, self.root)).as_posix()

    # -- immutable objects ----------------------------------------------------------------

    def parallel(self, fn: Callable[[str], Any], items: Sequence[str]) -> list[Any]:
        """`fn` over `items`, `REMOTE_CONNECTIONS` requests at once; the first error raised."""
        if len(items) <= 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(min(REMOTE_CONNECTIONS, len(items))) as pool:
            return list(pool.map(fn, items))

    def fetched(self, files: Sequence[str]) -> list[str]:
        """Fetch the samples among `files` (absent here) that the remote holds; those now here."""
        wanted = [f for f in files if self.key(f) not in self._absent]
        got = self.parallel(lambda f: self.remote.get(self.key(f)), wanted)
        found = []
        for file, fetched in zip(wanted, got, strict=True):
            if fetched is None or not self._kept_sample(Path(file), fetched):
                self._absent.add(self.key(file))
            else:
                found.append(file)
        return found

    def _kept_sample(self, path: Path, fetched: Fetched) -> bool:
        """Write a fetched sample here (with the mark of a repeat the infrastructure lost);
        False when it does not read as a sample (it is taken again)."""
        try:
            data = orjson.loads(fetched.data)
        except orjson.JSONDecodeError:
            return False
        if not isinstance(data, dict):
            return False
        self.write_bytes(path, fetched.data)
        if data.get("outcome") == "error:infra" and not os.path.exists(path.parent / LOST_MARK):
            self.write_bytes(path.parent / LOST_MARK, b"")
        return True

    def write_sample(self, path: Path, obj: Any) -> None:
        """Write a sample here, then push it: in the background under a suite's lock (a few at
        once, settled before the lock is released), else before returning. A runner killed
        midway keeps every sample here, and the remote lacks at most those in flight."""
        super().write_sample(path, obj)
        key = self.key(path)
        self._took.add(Path(key).parts[1])
        if self._pushes is not None:
            self._pushes.put(key, path.read_bytes())
        else:
            self.remote.put_new(key, path.read_bytes())

    @contextlib.contextmanager
    def lock(self, suite: str) -> Iterator[None]:
        """The suite's lock; once the last one this command holds is released, the samples
        pushed in the background have landed and, its work done, the run records it saved are
        pushed (`push_complete`)."""
        with super().lock(suite):
            pushes = self._pushes = self._pushes or Pushes(self.remote, self._connections)
            self._held += 1
            try:
                yield
            except BaseException:
                self._held -= 1
                if not self._held:
                    self._pushes = None
                    with contextlib.suppress(Exception):  # the error under way says more
                        pushes.close()
                raise
            self._held -= 1
            if not self._held:
                self._pushes = None
                pushes.close()
                self.push_complete()

    def save_run(self, run: RunRecord) -> None:
        """Write a run record here; it is pushed once its run is complete (`push_complete`),
        not at each save (a sequential check saves its run again once its looks are judged)."""
        super().save_run(run)
        self._unpushed[self.key(self.run_path(run.suite, run.run_id))] = run.suite
        if not self._held:
            self.push_complete()

    def push_complete(self) -> None:
        """Push each run record saved and not yet pushed whose suite took a sample here (its
        samples went as they were taken), or that this command pushed before. A run that took
        none (every sample was on disk or in the remote) stays local: a warm runner writes
        nothing to the remote. A run made a baseline is pushed when its pointer moves, and
        `store push` pushes every run."""
        for key, suite in list(self._unpushed.items()):
            if suite in self._took or key in self._own_runs:
                self._push_record(key)

    def _push_record(self, key: str) -> bool:
        """Push a run record saved here, replacing the version this command pushed before (no
        other writer has its run id); False when the remote held it already."""
        data = (self.root / key).read_bytes()
        self._unpushed.pop(key, None)
        try:
            self._own_runs[key] = self.remote.put_over(key, data, self._own_runs.get(key))
        except Moved:
            # a retried write whose first attempt landed finds its own record: carry on from it
            now = self.remote.get(key)
            if now is not None and now.data == data:
                self._own_runs[key] = now.version
            else:  # pushed from elsewhere (`store push`): a record there is never replaced
                self._own_runs.pop(key, None)
            return False
        return True

    def save_manifest(self, digest: str, files: dict[str, str]) -> None:
        """Keep a manifest here and, the first time it is written here, in the remote."""
        path = self.manifest_path(digest)
        new = not has_sample(str(path))
        super().save_manifest(digest, files)
        if new:
            self.remote.put_new(self.key(path), path.read_bytes())

    def load_run(self, suite: str, run_id: str) -> RunRecord:
        """A run record, fetched first when only the remote holds it."""
        self._fetch_file(self.run_path(suite, run_id))
        return super().load_run(suite, run_id)

    def load_manifest(self, digest: str) -> dict[str, str] | None:
        """A manifest, fetched first when only the remote holds it."""
        self._fetch_file(self.manifest_path(digest))
        return super().load_manifest(digest)

    def _fetch_file(self, path: Path) -> None:
        if os.path.lexists(path) or self.key(path) in self._absent:
            return
        fetched = self.remote.get(self.key(path))
        if fetched is None:
            self._absent.add(self.key(path))
        else:
            self.write_bytes(path, fetched.data)

    def push_run(self, run: RunRecord) -> int:
        """Push a run made here (its samples, then its record), skipping what is there: a run
        record in the remote means its samples are there too, and a run this command made
        that took samples here pushed them as it took them. Returns the objects written."""
        path = self.run_path(run.suite, run.run_id)
        key = self.key(path)
        if key in self._unpushed and run.suite in self._took:
            if self._pushes is not None:
                self._pushes.settle()
            return int(self._push_record(key))
        if key not in self._unpushed and (
            key in self._own_runs or self.remote.get(key) is not None
        ):
            return 0
        # (the mark of a repeat the infrastructure lost is not pushed: a fetch writes it again)
        files = [f for case in run.cases for f in self.sample_files(case) if has_sample(f)]
        digest = run.target.fingerprint.get(GIT_LABEL)
        manifest = self.manifest_path(digest) if digest else None
        if manifest is not None and os.path.exists(manifest):
            files.append(str(manifest))
        written = self.parallel(
            lambda f: self.remote.put_new(self.key(f), Path(f).read_bytes()), files
        )
        if key in self._unpushed:
            return int(sum(written)) + self._push_record(key)
        return int(sum(written)) + self.remote.put_new(key, path.read_bytes())

    # -- baseline pointers per branch ----------------------------------------------------

    def baseline(self, suite: str) -> BaselinePointer | None:
        """The suite's baseline: the remote's pointer on the first of the read branches that has
        one, its run and samples fetched here; else the local pointer (a committed baseline)."""
        if suite not in self._synced:
            self._synced.add(suite)
            found = self._remote_pointer(suite, self.branches.read)
            if found is not None:
                self._fetch_baseline(found)
        return super().baseline(suite)

    def _remote_pointer(self, suite: str, branches: Iterable[str]) -> BaselinePointer | None:
        for branch in branches:
            key = pointer_key(suite, branch)
            fetched = self.remote.get(key)
            self._versions[key] = fetched.version if fetched else None
            if fetched is not None:
                pointer = self._pointer(key, fetched.data)
                self._warn_if_old(pointer, branch)
                return pointer
        return None

    def _pointer(self, key: str, data: bytes) -> BaselinePointer:
        try:
            doc = orjson.loads(data)
            return BaselinePointer(suite=doc["suite"], run_id=doc["run_id"], set_at=doc["set_at"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise RemoteError(
                f"remote {self.remote.url}: the baseline pointer {key} is corrupt",
                hint="move it with `noisefloor baseline set RUN --branch BRANCH`",
            ) from None

    def _warn_if_old(self, pointer: BaselinePointer, branch: str) -> None:
        if self._max_age_s is None:
            return
        set_at = datetime.strptime(pointer.set_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        age = (datetime.now(UTC) - set_at).total_seconds()
        if age > self._max_age_s:
            self.notes.append(
                f"the baseline of {pointer.suite!r} on branch {branch!r} ({pointer.run_id}) was "
                f"set {age / 3600:.1f} h ago, longer ago than baseline_max_age: refresh it on "
                f"that branch (`noisefloor baseline deepen SUITE`, or a check there)"
            )

    def _fetch_baseline(self, pointer: BaselinePointer) -> None:
        """Fetch the baseline's run record, samples (a pack per case, else sample by sample)
        and manifest, then point here at it."""
        run = self.load_run(pointer.suite, pointer.run_id)
        lacking = [c for c in run.cases if not all(map(has_sample, self.sample_files(c)))]
        keys = [pack_key(run.suite, run.run_id, c.case_id) for c in lacking]
        packs = self.parallel(self.remote.get, keys)
        missing = []
        for case, fetched in zip(lacking, packs, strict=True):
            files = unpack(fetched.data) if fetched is not None else None
            if files is not None:
                self._unpacked(Path(self.abs_str(case.sample_dir)), files)
            missing += [f for f in self.sample_files(case) if not has_sample(f)]
        self.fetched(missing)
        digest = run.target.fingerprint.get(GIT_LABEL)
        if digest:
            self.load_manifest(digest)
        here = super().baseline(pointer.suite)
        if here is None or here.run_id != pointer.run_id:
            self.write_json(self.baseline_path(pointer.suite), pointer)
            self.write_gitignore()

    def _unpacked(self, directory: Path, files: list[tuple[str, bytes]]) -> None:
        """Write a pack's files absent here: samples that read as samples, and the mark of a
        repeat the infrastructure lost."""
        for name, data in files:
            path = directory / name
            if name == LOST_MARK:
                if not os.path.exists(path):
                    self.write_bytes(path, b"")
            elif not has_sample(str(path)):
                self._kept_sample(path, Fetched(data, ""))

    def push_packs(self, run: RunRecord) -> None:
        """Write each case's pack of a baseline run, unless the remote has it: a fresh runner
        then fetches the case's samples in one request."""
        keys, packs = [], {}
        for case in run.cases:
            directory = self.abs_str(case.sample_dir)
            names = [os.path.basename(f) for f in self.sample_files(case) if has_sample(f)]
            if os.path.exists(os.path.join(directory, LOST_MARK)):
                names.append(LOST_MARK)
            key = pack_key(run.suite, run.run_id, case.case_id)
            keys.append(key)
            packs[key] = [(n, Path(directory, n).read_bytes()) for n in names]
        self.parallel(lambda key: self.remote.put_new(key, pack(packs[key])), keys)

    def set_baseline(self, suite: str, run_id: str) -> BaselinePointer:
        """Move the write branch's pointer in the remote (`move_pointer`), then the local one.

        Raises:
            PointerMoved: Another runner moved it first; this command moved nothing.
        """
        self.move_pointer(suite, run_id)
        return super().set_baseline(suite, run_id)

    def move_pointer(self, suite: str, run_id: str) -> bool:
        """Point the write branch's pointer in the remote at a run, from the version this
        command read (the run and its samples pushed first when the remote lacks them); False
        when it pointed there already.

        Raises:
            PointerMoved: Another runner moved it first; this command moved nothing.
        """
        branch = self.branches.write
        key = pointer_key(suite, branch)
        if key not in self._versions:
            held = self._remote_pointer(suite, [branch])
            if held is not None and held.run_id == run_id:
                return False
        run = self.load_run(suite, run_id)
        self.push_run(run)
        self.push_packs(run)
        pointer = BaselinePointer(suite=suite, run_id=run_id, set_at=utc_now())
        doc = {**pointer.model_dump(mode="json"), "branch": branch, "set_by": mover(self._environ)}
        data = dumps(doc)
        try:
            self.remote.put_over(key, data, self._versions[key])
        except Moved:
            # a retried write whose first attempt landed (its answer lost) finds its own pointer
            now = self.remote.get(key)
            if now is None or now.data != data:
                raise self._moved(suite, branch, run_id) from None
        del self._versions[key]  # a second move in this command reads the pointer again
        return True

    def _moved(self, suite: str, branch: str, run_id: str) -> PointerMoved:
        fetched = self.remote.get(pointer_key(suite, branch))
        who = "another runner"
        if fetched is not None:
            try:
                doc = orjson.loads(fetched.data)
                who = f"{doc.get('set_by', 'another runner')} (to {doc.get('run_id')}, at {doc.get('set_at')})"
            except orjson.JSONDecodeError:
                pass
        return PointerMoved(
            f"remote {self.remote.url}: the baseline of {suite!r} on branch {branch!r} was moved "
            f"by {who} while this command moved it to {run_id}",
            hint=f"nothing is lost: {run_id} and its samples are in the remote; compare again, "
            f"or move the pointer deliberately with `noisefloor baseline set {run_id} "
            f"--branch {branch}`",
        )
