"""The corruption fault trials, CI-sized: each (kind of store file, damage) pair on a fresh copy
of a prepared store, then the next commands; `bench/faults.py` runs every pair."""

from __future__ import annotations

from pathlib import Path

from bench.fault_trials import corruption


def test_a_damaged_store_recovers_or_names_the_file(tmp_path: Path) -> None:
    # 8 trials: two per row (samples, derived, pointers and records, databases)
    tallies = corruption.trials(8, tmp_path)
    assert sum(t.trials for t in tallies) == 8
    for tally in tallies:
        assert tally.trials >= 2, tally.name
        assert tally.clean, f"{tally.name}: {tally.notes}"
