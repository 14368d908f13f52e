"""Samples a run writes are kept in memory as they would read back, so that scoring them reads no
file; a file replaced since is read again, one that would not read back is not kept, and the
cache holds the newest samples only."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from noisefloor.errors import CorruptFile
from noisefloor.pipeline import banding
from noisefloor.store.store import Store
from noisefloor.targets.base import RawSample


def _sample(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "command",
        "case_id": "c",
        "repeat": 0,
        "outcome": "ok",
        "output": {"text": text, "size": len(text)},
        **extra,
    }


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files `read_sample` opens."""
    names: list[str] = []

    def counted(name: str, mode: str = "r") -> Any:
        names.append(name)
        return open(name, mode)  # noqa: SIM115 (the caller closes it)

    monkeypatch.setattr(banding, "open", counted, raising=False)
    return names


def _written(store: Store, name: str, data: dict[str, Any]) -> Path:
    """Write a sample as the run's writer does, and tell the cache as its listener is told."""
    path = store.root / "samples" / name
    store.write_sample(path, data)
    banding.keep_written(None, path, data)
    return path


def test_a_sample_written_here_is_scored_without_reading_its_file(
    tmp_path: Path, opened: list[str]
) -> None:
    path = _written(Store(tmp_path / "store"), "r0.json", _sample("hello"))

    sample = banding.read_sample(path)

    assert opened == []
    assert sample.output.text == "hello"
    with open(path, "rb") as file:  # what a read of the file gives, field for field
        assert sample == RawSample.model_validate_json(file.read())


def test_a_file_replaced_since_it_was_kept_is_read_again(tmp_path: Path, opened: list[str]) -> None:
    store = Store(tmp_path / "store")
    path = _written(store, "r0.json", _sample("before"))
    store.write_sample(path, _sample("after!"))  # a new file renamed over it, same size

    assert banding.read_sample(path).output.text == "after!"
    assert opened == [os.fspath(path)]


def test_a_sample_that_would_not_read_back_is_not_kept(tmp_path: Path, opened: list[str]) -> None:
    # NaN is written as null, which is no wall time: the file is corrupt, whatever was in memory
    path = _written(Store(tmp_path / "store"), "r0.json", _sample("x", wall_s=float("nan")))

    with pytest.raises(CorruptFile, match="wall_s"):
        banding.read_sample(path)
    assert opened == [os.fspath(path)]


def _kept(cache: banding._SampleCache, paths: list[Path]) -> list[str | None]:
    found = [cache.get(str(p), os.stat(p)) for p in paths]
    return [s.output.text if s else None for s in found]


def test_the_cache_keeps_the_most_recently_used_samples(tmp_path: Path) -> None:
    cache = banding._SampleCache(size=2, budget=1000)
    paths = [tmp_path / f"r{i}.json" for i in range(3)]
    for i, path in enumerate(paths[:2]):
        path.write_bytes(b"{}")
        cache.put(str(path), os.stat(path), RawSample.model_validate(_sample(f"s{i}")))
    cache.get(str(paths[0]), os.stat(paths[0]))  # used: now the most recent
    paths[2].write_bytes(b"{}")
    cache.put(str(paths[2]), os.stat(paths[2]), RawSample.model_validate(_sample("s2")))

    assert _kept(cache, paths) == ["s0", None, "s2"]


def test_the_cache_keeps_no_more_bytes_of_files_than_its_budget(tmp_path: Path) -> None:
    cache = banding._SampleCache(size=100, budget=250)
    paths = [tmp_path / f"r{i}.json" for i in range(4)]
    for i, (path, size) in enumerate(zip(paths, [100, 100, 100, 300], strict=True)):
        path.write_bytes(b" " * size)
        cache.put(str(path), os.stat(path), RawSample.model_validate(_sample(f"s{i}")))

    # the third pushed the first out; the fourth is bigger than the whole budget: not kept
    assert _kept(cache, paths) == [None, "s1", "s2", None]


def test_a_run_scores_the_samples_it_took_without_reading_them(
    tmp_path: Path, opened: list[str]
) -> None:
    from noisefloor.operations.run import RunOptions, run_suite
    from noisefloor.suite.load import load_suite

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: kept\n"
        f"target: {{command: [{sys.executable!r}, -c, 'print(42)']}}\n"
        "defaults: {repeats: 3, scorers: [{type: contains, needle: '42'}]}\n"
        "cases: [{id: a, input: x}, {id: b, input: y}]\n",
        encoding="utf-8",
    )

    result = run_suite(Store(tmp_path / "store"), load_suite(suite), RunOptions())

    assert [b.outcomes for b in result.bands.values()] == [{"ok": 3}, {"ok": 3}]
    assert [name for name in opened if "/samples/" in name] == []


def test_a_run_keeps_its_samples_only_when_they_all_fit() -> None:
    # more would push each other out before they are scored
    assert banding.keepers_for(banding.SAMPLES_KEPT) == (banding.keep_written,)
    assert banding.keepers_for(banding.SAMPLES_KEPT + 1) == ()
