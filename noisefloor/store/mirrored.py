"""The local store as the working copy of a remote: what a command needs fetched by its keys, each
sample pushed as it is written, and baseline pointers per branch moved from the version read.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from noisefloor.model.records import BaselinePointer, RunRecord
from noisefloor.settings import LOCK_TIMEOUT_S, REMOTE_CLAIM_STALE_S, REMOTE_CONNECTIONS
from noisefloor.store.branches import Branch, Branches, mover, pointer_key
from noisefloor.store.claims import Claim, Claims
from noisefloor.store.files import dumps
from noisefloor.store.fingerprint import GIT_LABEL
from noisefloor.store.layout import LOST_MARK, has_sample, utc_now
from noisefloor.store.packs import pack, pack_key, unpack
from noisefloor.store.pointers import age_note, moved_error, read_pointer
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
        claim_stale_s: float = REMOTE_CLAIM_STALE_S,
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
        self._present: set[str] = set()  # keys this command knows the remote holds
        self._claims = Claims(remote, mover(self._environ), self.parallel)
        self._waiting: dict[str, Claim] = {}  # file -> the claim of another command on it
        self._claim_stale_s = claim_stale_s
        self.compared: dict[str, Branch] = {}
        """Each suite's branch whose pointer `baseline` found, and why that branch."""
        self.copied = 0
        """Objects fetched from the remote and written here."""

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
        self.copied += len(found)
        return found

    def claimed(self, files: Sequence[str]) -> set[str]:
        """Claim the samples at `files` (missing here and in the remote) in the remote; those
        another command claimed first (`claims.Claims`)."""
        keys = {self.key(f): f for f in files}
        theirs = self._claims.split(list(keys))
        self._waiting.update((keys[k], claim) for k, claim in theirs.items())
        return {keys[k] for k in theirs}

    def await_claimed(self, files: Sequence[str]) -> list[str]:
        """Fetch the samples at `files` as the commands that claimed them push them, polling;
        once none has come for `claim_stale_s`, take over the claims still waited on: the
        files whose claim this command took over (to take here)."""
        waiting = {f: self._waiting.pop(f) for f in files}
        last, pause, mine = time.monotonic(), 0.05, []
        while waiting:
            time.sleep(pause)
            pause = min(pause * 2, 2.0)
            for file in waiting:
                self._absent.discard(self.key(file))
            came = self.fetched(list(waiting))
            for file in came:
                del waiting[file]
            if came:
                last = time.monotonic()
            elif time.monotonic() - last > self._claim_stale_s:
                stale = {claim.token for claim in waiting.values()}
                keys = {self.key(f): f for f in waiting}
                theirs = self._claims.split(list(keys), expired=stale)
                mine += [f for k, f in keys.items() if k not in theirs]
                waiting = {keys[k]: claim for k, claim in theirs.items()}
                last = time.monotonic()
        return mine

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
        self._present.add(self.key(path))
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
        self._present.add(key)  # once its push has landed, or the command fails
        if self._pushes is not None:
            with open(self._journal(key), "a", encoding="utf-8") as journal:
                journal.write(key + "\n")  # until its push has landed: see `lock`
            self._pushes.put(key, path.read_bytes())
        else:
            self.remote.put_new(key, path.read_bytes())

    def _journal(self, key_or_suite: str) -> Path:
        """The file listing a suite's samples written here whose pushes may not have landed."""
        suite = key_or_suite.split("/")[1] if "/" in key_or_suite else key_or_suite
        path = self.root / "unpushed" / f"{suite}.keys"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _replay(self, suite: str) -> None:
        """Push the samples an earlier command here wrote and may not have pushed (it was
        killed, or the remote failed), each if absent: the holes an outage left are filled
        by the next command of the suite on this runner, whatever it does."""
        journal = self._journal(suite)
        try:
            keys = journal.read_text(encoding="utf-8").split()
        except FileNotFoundError:
            return
        held = [k for k in dict.fromkeys(keys) if has_sample(str(self.root / k))]
        self.parallel(lambda k: self.remote.put_new(k, (self.root / k).read_bytes()), held)
        self._present.update(held)
        journal.unlink()

    @contextlib.contextmanager
    def lock(self, suite: str) -> Iterator[None]:
        """The suite's lock; once the last one this command holds is released, the samples
        pushed in the background have landed and, its work done, the run records it saved are
        pushed (`push_complete`)."""
        with super().lock(suite):
            self._replay(suite)
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
            else:
                pushes.settle()
            self._journal(suite).unlink(missing_ok=True)  # every sample it lists has landed
            if not self._held:
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
        """Push a run record saved here, once every sample it names is in the remote (`_fill`),
        replacing the version this command pushed before (no other writer has its run id);
        False when the remote held it already."""
        data = (self.root / key).read_bytes()
        _, suite, name = key.split("/")
        self._fill(super().load_run(suite, name.removesuffix(".json")))
        self._unpushed.pop(key, None)
        try:
            self._own_runs[key] = self.remote.put_over(key, data, self._own_runs.get(key))
        except Moved:
            # a retried write whose first attempt landed finds its own record: carry on from it
            now = self.remote.get(key)
            if now is not None and now.data == data:
                self._own_runs[key] = now.version
            else:  # pushed from elsewhere: a record there is never replaced
                self._own_runs.pop(key, None)
                if now is not None:
                    self.notes.append(
                        f"the remote holds another record under run id {Path(key).stem} than "
                        f"this command's ({key}): it is never replaced; this one stays here"
                    )
            return False
        return True

    def _fill(self, run: RunRecord) -> int:
        """Put in the remote every sample of `run` held here, and the manifest of its version,
        that this command has not seen there (each only if absent: an outage may have left
        holes, and a record in the remote is no proof its samples are); the objects written."""
        files = [f for case in run.cases for f in self.sample_files(case) if has_sample(f)]
        digest = run.target.fingerprint.get(GIT_LABEL)
        manifest = self.manifest_path(digest) if digest else None
        if manifest is not None and os.path.exists(manifest):
            files.append(str(manifest))
        unseen = [f for f in files if self.key(f) not in self._present]
        if self._pushes is not None:
            self._pushes.settle()  # (the samples in flight are seen once they land)
        written = self.parallel(
            lambda f: self.remote.put_new(self.key(f), Path(f).read_bytes()), unseen
        )
        self._present.update(self.key(f) for f in unseen)
        return int(sum(written))

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
            self._present.add(self.key(path))
            self.copied += 1

    def push_run(self, run: RunRecord) -> int:
        """Push a run made here: every sample it names the remote lacks, its manifest, then its
        record (`_fill`; a record already there is no proof its samples are, and is never
        replaced). Returns the objects written."""
        path = self.run_path(run.suite, run.run_id)
        key = self.key(path)
        if key in self._unpushed:
            return self._fill(run) + self._push_record(key)
        if key in self._own_runs:
            return 0
        # (the mark of a repeat the infrastructure lost is not pushed: a fetch writes it again)
        written = self._fill(run)
        if not self.remote.put_new(key, path.read_bytes()):
            held = self.remote.get(key)
            if held is not None and held.data != path.read_bytes():
                self.notes.append(
                    f"the remote holds another record under run id {run.run_id} than the "
                    f"local one ({key}): it is never replaced; this one stays here"
                )
            return written
        return written + 1

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

    def reread(self, suite: str) -> None:
        """Forget the suite's pointers read so far: its next `baseline` reads them again."""
        self._synced.discard(suite)
        self.compared.pop(suite, None)
        for branch in {*self.branches.read, self.branches.write}:
            self._versions.pop(pointer_key(suite, branch), None)

    def _remote_pointer(self, suite: str, branches: Iterable[str]) -> BaselinePointer | None:
        for branch in branches:
            key = pointer_key(suite, branch)
            fetched = self.remote.get(key)
            self._versions[key] = fetched.version if fetched else None
            if fetched is not None:
                pointer = read_pointer(self.remote.url, key, fetched.data)
                note = age_note(pointer, branch, self._max_age_s)
                if note is not None:
                    self.notes.append(note)
                self.compared.setdefault(suite, Branch(branch, self.branches.reason(branch)))
                return pointer
        return None

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
                self.copied += self._kept_sample(path, Fetched(data, ""))

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
                raise moved_error(self.remote.url, suite, branch, run_id, now) from None
        del self._versions[key]  # a second move in this command reads the pointer again
        return True
