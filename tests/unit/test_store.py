"""Unit tests of the store: atomic writes, safe names, the root's fence, pointers, epochs.

A stateful test runs random writes, reads and interrupted writes against an in-memory twin.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from noisefloor.errors import ExitCode, StoreError
from noisefloor.model.records import BaselinePointer, CaseRecord, RunRecord, TargetRecord
from noisefloor.names import SAFE_NAME
from noisefloor.store.files import dumps
from noisefloor.store.layout import has_sample
from noisefloor.store.store import ReadOnlyStore, Store
from tests.builders import git


def run_record(suite: str, run_id: str, label: str | None = None) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        suite=suite,
        label=label,
        started_at="2025-01-01T00:00:00.000000Z",
        finished_at="2025-01-01T00:00:01.000000Z",
        harness_version="0",
        target=TargetRecord(kind="command", key="t1", spec={"argv": ["echo"]}),
        epoch=0,
        jobs=1,
        calls=0,
        cases=[],
    )


def temp_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(".tmp"))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "root")


# --- atomic writes -------------------------------------------------------------------------


def test_write_json_writes_exactly_dumps_and_leaves_no_temp_file(store: Store) -> None:
    obj = {"b": [1, 2.5, "é"], "a": {"z": None, "y": True}}
    path = store.root / "bands" / "s" / "c.json"

    store.write_json(path, obj)

    assert path.read_bytes() == dumps(obj)
    assert store.read_json(path) == obj
    assert temp_files(store.root) == []
    assert [p.name for p in path.parent.iterdir()] == ["c.json"]


def test_dumps_is_canonical() -> None:
    one = dumps({"b": 1, "a": {"d": 2, "c": 3}})
    other = dumps({"a": {"c": 3, "d": 2}, "b": 1})

    assert one == other
    assert one.endswith(b"\n")
    assert one.index(b'"a"') < one.index(b'"b"')
    pointer = BaselinePointer(suite="s", run_id="r", set_at="t")
    assert dumps(pointer) == dumps(pointer.model_dump(mode="json"))


def test_overwrite_replaces_content(store: Store) -> None:
    path = store.root / "x.json"
    store.write_json(path, {"v": 1})
    store.write_json(path, {"v": 2})

    assert store.read_json(path) == {"v": 2}
    assert temp_files(store.root) == []


def test_failed_replace_keeps_the_old_file_and_removes_the_temp(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.root / "x.json"
    store.write_json(path, {"v": 1})

    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError(errno.EIO, "simulated I/O error")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="simulated"):  # never swallowed
        store.write_json(path, {"v": 2})
    monkeypatch.undo()

    assert path.read_bytes() == dumps({"v": 1})
    assert temp_files(store.root) == []


def test_has_sample_counts_an_empty_file_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "r0.json"
    assert not has_sample(str(path))
    path.write_bytes(b"")
    assert not has_sample(str(path))
    path.write_bytes(b"{}")
    assert has_sample(str(path))


def test_interrupt_before_rename_leaves_no_trace(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.root / "new.json"

    def interrupted(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.write_json(path, {"v": 1})
    monkeypatch.undo()

    assert not path.exists()
    assert temp_files(store.root) == []


# --- names and the root's fence ------------------------------------------------------------

UNSAFE = ["../x", "a/b", "..", ".", "", ".hidden", "a\\b", "/abs", "-flag"]


@pytest.mark.parametrize("name", UNSAFE)
@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s, n: s.sample_dir(n, "c", "t", "k", 0), id="suite-of-sample"),
        pytest.param(lambda s, n: s.sample_dir("s", n, "t", "k", 0), id="case-of-sample"),
        pytest.param(lambda s, n: s.derived_dir("scores", n), id="suite-of-derived"),
        pytest.param(lambda s, n: s.derived_dir("scores", "s", n), id="case-of-derived"),
        pytest.param(lambda s, n: s.run_path(n, "r1"), id="suite-of-run"),
        pytest.param(lambda s, n: s.run_path("s", n), id="run-id"),
        pytest.param(lambda s, n: s.baseline_path(n), id="suite-of-baseline"),
        pytest.param(lambda s, n: s.label_path("s", n), id="label"),
        pytest.param(lambda s, n: s.label_path(n, "l"), id="suite-of-label"),
        pytest.param(lambda s, n: s.epoch_path(n), id="suite-of-epoch"),
        pytest.param(lambda s, n: s.find_run(n), id="find-run"),
        pytest.param(lambda s, n: s.find_label(n), id="find-label"),
    ],
)
def test_unsafe_names_are_rejected(store: Store, call: Any, name: str) -> None:
    with pytest.raises(StoreError, match="not a safe file name") as info:
        call(store, name)
    assert info.value.exit_code is ExitCode.HARNESS
    assert not store.root.exists()


@pytest.mark.parametrize("name", ["a\n", "run\n"])
def test_a_trailing_newline_is_not_a_safe_name(store: Store, name: str) -> None:
    with pytest.raises(StoreError):
        store.run_path("s", name)


def test_safe_names_are_accepted(store: Store) -> None:
    path = store.run_path("my-suite_1.0", "20250101T000000-ab12")

    assert path == store.root / "runs" / "my-suite_1.0" / "20250101T000000-ab12.json"


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "/etc/passwd", "samples/../../x"])
def test_abs_refuses_paths_that_escape_the_root(store: Store, rel: str) -> None:
    with pytest.raises(StoreError, match="outside the store root"):
        store.abs(rel)


def test_abs_accepts_paths_inside_the_root(store: Store) -> None:
    assert store.abs("samples/s/c/r0.json") == store.root / "samples" / "s" / "c" / "r0.json"
    with pytest.raises(StoreError):  # records never hold `..`, even one that stays inside
        store.abs("a/../b.json")
    assert store.rel(store.root / "samples" / "x.json") == "samples/x.json"


@pytest.mark.parametrize("rel", ["link/x.json", "link/new/deeper/x.json"])
def test_a_write_through_a_symlink_out_of_the_root_is_refused(
    store: Store, tmp_path: Path, rel: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store.root.mkdir(parents=True)
    (store.root / "link").symlink_to(outside, target_is_directory=True)

    # record paths are checked lexically (reading is harmless); a write checks each directory
    # on its way that it did not create itself
    with pytest.raises(StoreError, match="outside the store root"):
        store.write_json(store.root / rel, {})
    assert list(outside.iterdir()) == []


def test_a_directory_removed_after_a_write_is_made_again(store: Store) -> None:
    first = store.root / "scores" / "s" / "a.json"
    store.write_json(first, {"v": 1})
    shutil.rmtree(store.root / "scores")  # e.g. a user cleaning derived files mid-run

    store.write_json(store.root / "scores" / "s" / "b.json", {"v": 2})
    assert store.read_json(store.root / "scores" / "s" / "b.json") == {"v": 2}


def test_a_symlink_that_stays_inside_the_root_is_followed(store: Store) -> None:
    (store.root / "real").mkdir(parents=True)
    (store.root / "alias").symlink_to(store.root / "real", target_is_directory=True)

    store.write_json(store.root / "alias" / "sub" / "x.json", {"v": 1})
    assert store.read_json(store.root / "real" / "sub" / "x.json") == {"v": 1}


def test_a_path_with_dotdot_is_refused_even_when_it_stays_inside(store: Store) -> None:
    with pytest.raises(StoreError, match="outside the store root"):
        store.write_json(store.root / "a" / ".." / "x.json", {})


def test_writes_outside_the_root_are_refused(store: Store, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="outside the store root"):
        store.write_json(tmp_path / "elsewhere.json", {})
    assert not (tmp_path / "elsewhere.json").exists()


# --- .gitignore ----------------------------------------------------------------------------


def ignored(store: Store, rel: str) -> bool:
    """Whether git ignores the file `rel` under the root, as git itself reads the store's
    .gitignore files (the root's and those under it), in a repository made around the root."""
    if not (store.root / ".git").exists():
        git(store.root, "init", "-q")
    done = subprocess.run(
        ["git", "-C", str(store.root), "check-ignore", "-q", "--no-index", rel], check=False
    )
    assert done.returncode in (0, 1), rel
    return done.returncode == 0


def test_gitignore_ignores_what_is_disposable(store: Store) -> None:
    store.ensure()

    for disposable in (
        "doit.sqlite",
        "scores/s/c/0.json",
        "bands/s/c.json",
        "verdicts/s/c.json",
        "bands/s/.c.json.123.1f.tmp",
        "epochs/s.json",
    ):
        assert ignored(store, disposable), disposable
    for kept in (".gitignore", "baselines/s.json"):
        assert not ignored(store, kept), kept
    assert temp_files(store.root) == []


def test_gitignore_keeps_the_epochs_of_a_baseline_sampled_after_fresh_only(store: Store) -> None:
    # a baseline sampled in epoch 1 needs its suite's epochs file in a clone (its version
    # samples there, and a later --fresh must not land on the baseline's samples); one in
    # epoch 0 does not, and a --fresh check of a new version then leaves nothing to commit
    later = run_record("later", "20250101-aa").model_copy(update={"epoch": 1})
    first = run_record("first", "20250101-bb")
    for run in (later, first):
        store.save_run(run)
        store.bump_epoch(run.suite, "t2")
        store.set_baseline(run.suite, run.run_id)

    assert not ignored(store, "epochs/later.json")
    assert ignored(store, "epochs/first.json")
    assert not ignored(store, "epochs/.gitignore")


def test_gitignore_keeps_the_baseline_run_and_its_samples(store: Store) -> None:
    baseline = run_record("s", "20250101-aa")
    store.save_run(baseline)
    store.save_run(run_record("s", "20250102-bb"))
    sample = store.sample_path(store.sample_dir("s", "c", baseline.target.key, "k", 0), 0)
    store.write_sample(sample, {"x": 1})

    store.set_baseline("s", baseline.run_id)

    assert not ignored(store, "baselines/s.json")
    assert not ignored(store, store.rel(store.run_path("s", baseline.run_id)))
    assert not ignored(store, store.rel(sample))
    assert ignored(store, "scores/s/c/0.json")
    assert ignored(store, "doit.sqlite")


def test_gitignore_keeps_the_baseline_manifest_only(store: Store) -> None:
    baseline, other = run_record("s", "20250101-aa"), run_record("s", "20250102-bb")
    baseline.target.fingerprint = {"git:": "a" * 64}
    other.target = TargetRecord(kind="command", key="t2", spec={}, fingerprint={"git:": "b" * 64})
    for run in (baseline, other):
        store.save_run(run)
        store.save_manifest(run.target.fingerprint["git:"], {"agent.py": "100644 0"})

    store.set_baseline("s", baseline.run_id)

    assert not ignored(store, store.rel(store.manifest_path("a" * 64)))
    assert ignored(store, store.rel(store.manifest_path("b" * 64)))


def test_a_manifest_is_written_once_and_read_back(store: Store) -> None:
    assert store.load_manifest("c" * 64) is None
    store.save_manifest("c" * 64, {"b.py": "100644 2", "a.py": "100755 1"})
    store.save_manifest("c" * 64, {"changed": "is not written"})
    assert store.load_manifest("c" * 64) == {"a.py": "100755 1", "b.py": "100644 2"}
    # a corrupt copy only names files: it reads as absent (`store verify` reports it), and
    # one left empty is written again
    store.manifest_path("c" * 64).write_text("[]")
    assert store.load_manifest("c" * 64) is None
    store.manifest_path("c" * 64).write_text("")
    store.save_manifest("c" * 64, {"a.py": "100755 1"})
    assert store.load_manifest("c" * 64) == {"a.py": "100755 1"}


def test_ensure_keeps_an_edited_gitignore(store: Store) -> None:
    store.root.mkdir(parents=True)
    (store.root / ".gitignore").write_text("mine\n", encoding="utf-8")

    store.ensure()

    assert (store.root / ".gitignore").read_text(encoding="utf-8") == "mine\n"


# --- read-only view ------------------------------------------------------------------------


def test_read_only_store_refuses_samples_and_epochs(tmp_path: Path) -> None:
    ro = ReadOnlyStore(tmp_path / "root")
    path = ro.sample_path(ro.sample_dir("s", "c", "t", "k", 0), 0)

    with pytest.raises(StoreError):
        ro.write_sample(path, {"x": 1})
    with pytest.raises(StoreError):
        ro.bump_epoch("s", "t")
    assert not path.exists()
    assert ro.read_only and not Store(tmp_path / "root").read_only
    # Derived files are still written: rescoring needs them.
    ro.write_json(ro.derived_dir("scores", "s", "c") / "x.json", {"ok": True})


def test_writable_store_writes_samples(store: Store) -> None:
    path = store.sample_path(store.sample_dir("s", "c", "t", "k", 2), 3)
    store.write_sample(path, {"x": 1})

    assert store.rel(path).startswith("samples/s/")
    assert path.name == "r3.json"
    assert store.read_json(path) == {"x": 1}


def test_sample_paths_are_keys() -> None:
    """Every part of the cache key gives a different sample file."""
    store = Store("/nowhere")
    paths = {
        store.sample_path(store.sample_dir(*key), repeat)
        for key in [
            ("s", "c", "t", "k", 0),
            ("s2", "c", "t", "k", 0),
            ("s", "c2", "t", "k", 0),
            ("s", "c", "t2", "k", 0),
            ("s", "c", "t", "k2", 0),
            ("s", "c", "t", "k", 1),
        ]
        for repeat in (0, 1)
    }
    assert len(paths) == 12


# --- runs, pointers, labels ----------------------------------------------------------------


def test_baseline_pointer_round_trips(store: Store) -> None:
    assert store.baseline("s") is None
    assert store.baselines() == []

    pointer = store.set_baseline("s", "r1")
    store.set_baseline("t", "r9")

    assert store.baseline("s") == pointer
    assert (pointer.suite, pointer.run_id) == ("s", "r1")
    assert store.read_model(store.baseline_path("s"), BaselinePointer) == pointer
    assert [(p.suite, p.run_id) for p in store.baselines()] == [("s", "r1"), ("t", "r9")]
    assert store.set_baseline("s", "r2").run_id == "r2"
    assert store.baseline("s").run_id == "r2"  # type: ignore[union-attr]


def test_run_round_trips_and_runs_are_listed_oldest_first(store: Store) -> None:
    for suite, run_id in [("s", "20250102-bb"), ("s", "20250101-aa"), ("t", "20250103-cc")]:
        store.save_run(run_record(suite, run_id))

    assert store.load_run("s", "20250101-aa") == run_record("s", "20250101-aa")
    assert store.runs() == [("s", "20250101-aa"), ("s", "20250102-bb"), ("t", "20250103-cc")]
    assert store.runs("s") == [("s", "20250101-aa"), ("s", "20250102-bb")]
    assert store.latest_run("s").run_id == "20250102-bb"  # type: ignore[union-attr]
    assert store.latest_run().run_id == "20250103-cc"  # type: ignore[union-attr]
    assert store.latest_run("absent") is None


def test_labels_round_trip(store: Store) -> None:
    store.save_run(run_record("s", "20250101-aa"))
    store.save_run(run_record("s", "20250101-ab"))
    store.save_run(run_record("t", "20250102-bb"))
    assert store.find_label("nightly") is None
    assert store.label_runs("s", "nightly") == []

    store.set_label("s", "nightly", ["20250101-aa", "20250101-ab"])

    # the newest run of a label holds its whole pool
    assert store.label_runs("s", "nightly") == ["20250101-aa", "20250101-ab"]
    assert store.find_label("nightly") == run_record("s", "20250101-ab")
    assert store.find_label("nightly", suite="s") == run_record("s", "20250101-ab")
    assert store.find_label("nightly", suite="t") is None

    store.set_label("t", "nightly", ["20250102-bb"])
    with pytest.raises(StoreError, match="several suites"):
        store.find_label("nightly")
    assert store.find_label("nightly", suite="t") == run_record("t", "20250102-bb")
    assert store.labels() == [
        ("s", "nightly", ["20250101-aa", "20250101-ab"]),
        ("t", "nightly", ["20250102-bb"]),
    ]


def test_a_label_file_of_a_single_run_still_reads(store: Store) -> None:
    store.save_run(run_record("s", "20250101-aa"))
    store.write_json(
        store.label_path("s", "old"), {"label": "old", "run_id": "20250101-aa", "suite": "s"}
    )
    assert store.label_runs("s", "old") == ["20250101-aa"]
    assert store.find_label("old") == run_record("s", "20250101-aa")


def test_a_label_file_that_names_no_run_is_a_store_error(store: Store) -> None:
    store.write_json(store.label_path("s", "empty"), {"label": "empty", "runs": [], "suite": "s"})
    with pytest.raises(StoreError, match=r"corrupt label file .*empty\.json: it names no runs"):
        store.find_label("empty")


def test_find_run_by_id_and_prefix(store: Store) -> None:
    for run_id in ["20250101-aaaa", "20250101-aaab", "20250102-cccc", "2025"]:
        store.save_run(run_record("s", run_id))
    store.save_run(run_record("t", "20250103-dddd"))

    assert store.find_run("20250102-cccc").run_id == "20250102-cccc"
    assert store.find_run("20250102").run_id == "20250102-cccc"
    assert store.find_run("20250103").suite == "t"
    # An exact id wins over the runs it is a prefix of.
    assert store.find_run("2025").run_id == "2025"


def test_find_run_ambiguous_and_missing(store: Store) -> None:
    store.save_run(run_record("s", "20250101-aaaa"))
    store.save_run(run_record("t", "20250101-aaab"))

    with pytest.raises(StoreError, match="ambiguous") as info:
        store.find_run("20250101-aaa")
    assert "20250101-aaaa" in str(info.value) and "20250101-aaab" in str(info.value)
    with pytest.raises(StoreError, match="no run 'zzz'"):
        store.find_run("zzz")


def test_find_run_in_an_empty_store(store: Store) -> None:
    with pytest.raises(StoreError, match="no run"):
        store.find_run("abc")


# --- corruption ----------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"{", b"\xff\xfe", b'{"a": 1}garbage'])
def test_corrupt_json_is_a_store_error_naming_the_file(store: Store, content: bytes) -> None:
    path = store.root / "bands" / "s" / "broken.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)

    with pytest.raises(StoreError, match="corrupt file") as info:
        store.read_json(path)
    assert "broken.json" in str(info.value)
    assert info.value.hint


def test_missing_file_is_a_store_error_naming_the_file(store: Store) -> None:
    with pytest.raises(StoreError, match="missing file") as info:
        store.read_json(store.root / "nothing.json")
    assert "nothing.json" in str(info.value)


def test_foreign_record_is_a_store_error_naming_the_file(store: Store) -> None:
    store.write_json(store.run_path("s", "r1"), {"run_id": "r1"})

    with pytest.raises(StoreError, match="corrupt or foreign record") as info:
        store.load_run("s", "r1")
    assert "r1.json" in str(info.value)


def test_corrupt_run_is_reported_by_find_run(store: Store) -> None:
    path = store.run_path("s", "r1")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"version": 1, "run_id": "r1"')

    with pytest.raises(StoreError, match="r1.json"):
        store.find_run("r1")


# --- epochs --------------------------------------------------------------------------------


def test_epochs_bump_per_target_key(store: Store) -> None:
    assert store.epoch("s", "t1") == 0

    assert store.bump_epoch("s", "t1") == 1
    assert store.bump_epoch("s", "t1") == 2
    assert store.bump_epoch("s", "t2") == 1

    assert store.epoch("s", "t1") == 2
    assert store.epoch("s", "t2") == 1
    assert store.epoch("s", "t3") == 0
    assert store.epoch("other", "t1") == 0
    # Persisted, not kept in memory.
    assert Store(store.root).epoch("s", "t1") == 2


def test_lock_can_be_taken_again_and_checks_the_suite_name(store: Store) -> None:
    with store.lock("s"):
        store.bump_epoch("s", "t")
    with store.lock("s"):
        assert store.epoch("s", "t") == 1
    with pytest.raises(StoreError), store.lock("../s"):
        pass


# --- agreement with an in-memory twin ------------------------------------------------------

KEYS = ["runs/s/a.json", "runs/s/b.json", "bands/s/c/d.json", "baselines/s.json", "e.json"]

json_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_text, inner, max_size=3),
    max_leaves=8,
)


class StoreAgreement(RuleBasedStateMachine):
    """The store and a dict agree after any mix of writes, reads and interrupted writes."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="store-agreement-"))
        self.store = Store(self.tmp / "root")
        self.twin: dict[str, Any] = {}
        self.strays: set[Path] = set()

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(key=st.sampled_from(KEYS), value=json_values)
    def write(self, key: str, value: Any) -> None:
        self.store.write_json(self.store.abs(key), value)
        self.twin[key] = value

    @rule(key=st.sampled_from(KEYS))
    def read(self, key: str) -> None:
        path = self.store.abs(key)
        if key in self.twin:
            assert self.store.read_json(path) == self.twin[key]
        else:
            with pytest.raises(StoreError, match="missing file"):
                self.store.read_json(path)

    @rule(key=st.sampled_from(KEYS), value=json_values)
    def write_whose_rename_fails(self, key: str, value: Any) -> None:
        failure = OSError(errno.ENOSPC, "simulated: no space left")
        with (
            mock.patch.object(os, "replace", side_effect=failure),
            # a full disk is the store's error, naming the file, never a bare OSError
            pytest.raises(StoreError, match=f"simulated: no space left writing {key} under"),
        ):
            self.store.write_json(self.store.abs(key), value)

    @rule(key=st.sampled_from(KEYS), value=json_values)
    def write_interrupted_before_rename(self, key: str, value: Any) -> None:
        with (
            mock.patch.object(os, "replace", side_effect=KeyboardInterrupt),
            pytest.raises(KeyboardInterrupt),
        ):
            self.store.write_json(self.store.abs(key), value)

    @rule(key=st.sampled_from(KEYS), junk=st.binary(max_size=16), tag=st.integers(0, 3))
    def process_killed_mid_write(self, key: str, junk: bytes, tag: int) -> None:
        """What a process killed between writing its temporary file and renaming it leaves."""
        path = self.store.abs(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        stray = path.with_name(f".{path.name}.4194305.{tag:x}.tmp")
        stray.write_bytes(junk)
        self.strays.add(stray)

    @invariant()
    def agrees_with_twin(self) -> None:
        root = self.store.root
        files = {
            p.relative_to(root).as_posix()
            for p in root.rglob("*")
            if p.is_file() and not p.name.endswith(".tmp")
        }
        assert files == set(self.twin)
        for key, value in self.twin.items():
            raw = (root / key).read_bytes()
            assert raw == dumps(value)
            assert orjson.loads(raw) == value
        assert set(temp_files(root)) == self.strays


TestStoreAgreement = StoreAgreement.TestCase
TestStoreAgreement.settings = settings(max_examples=40, stateful_step_count=12, deadline=None)


def test_a_case_names_one_sample_file_per_repeat() -> None:
    store = Store("/nowhere")
    sample_dir = store.sample_dir("s", "c", "t", "k", 0)
    case = CaseRecord(
        case_id="c",
        case_key="k",
        input="q",
        repeats=3,
        sample_dir=store.rel(sample_dir),
        scorers=[],
    )
    expected = [store.sample_path(sample_dir, repeat) for repeat in range(3)]
    assert store.sample_paths(case) == expected
    assert store.sample_files(case) == [str(p) for p in expected]


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("a", True),
        ("A.b_c-9", True),
        ("9", True),
        (".a", False),
        ("-a", False),
        ("a/b", False),
        ("a\n", False),
        ("", False),
        ("a b", False),
        ("é", False),
    ],
)
def test_store_suite_and_importer_agree_on_safe_names(name: str, safe: bool) -> None:
    from pydantic import TypeAdapter, ValidationError

    from noisefloor.store.public import PublicCase
    from noisefloor.suite.model import Slug

    def accepts(check: Any) -> bool:
        try:
            check()
        except (StoreError, ValueError, ValidationError):
            return False
        return True

    store = Store("/nowhere")
    field = PublicCase.model_fields["case_id"]
    assert any(getattr(m, "pattern", None) == SAFE_NAME for m in field.metadata)
    assert accepts(lambda: store.run_path(name, "r")) is safe
    assert accepts(lambda: TypeAdapter(Slug).validate_python(name)) is safe
