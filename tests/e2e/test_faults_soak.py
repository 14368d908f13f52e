"""The soak at CI size: a store of 600 samples keeps its memory flat while sampling, and `ledger
rebuild` agrees (the bench takes 100,000, and judges how the no-op check's time scales: a timing
taken beside other tests running at once is no verdict)."""

from __future__ import annotations

from pathlib import Path

from bench.fault_trials import soak


def test_a_soak_keeps_memory_flat_and_the_ledger_agrees(tmp_path: Path) -> None:
    (tally,) = soak.trials(1, tmp_path, samples=600, reference_cases=None, rounds=1)
    assert tally.clean, tally.notes
    assert tally.trials == 1
    assert "agrees: True" in tally.figures["ledger rebuild"]
    assert tally.figures["no-op check"].endswith(" s (not judged)")
