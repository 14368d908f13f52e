"""Keeping the ledger current from the operations: opened with the engine's score-file names,
fed each sample as sampling writes it, and each run once it is scored.

The ledger is an index of the store's files; sampling and the engine know nothing of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noisefloor.engine import score_file
from noisefloor.ledger import Ledger, ledger_path
from noisefloor.records import RunRecord
from noisefloor.sampling import Pending
from noisefloor.store import Store

__all__ = ["SampleIndexer", "index_run", "open_ledger"]


def open_ledger(store_root: Path) -> Ledger:
    """The ledger of a store, able to index runs (it finds their score files)."""
    return Ledger(ledger_path(store_root), score_file)


def index_run(store: Store, run: RunRecord) -> None:
    """Index a scored run in the SQLite ledger (an index of the JSON files, rebuildable)."""
    with open_ledger(store.root) as ledger:
        ledger.index_run(store.root, run)


class SampleIndexer:
    """Indexes each sample as sampling writes it (one commit each), so a run killed halfway has
    every sample it took in the ledger, and the run's own indexing at the end reads none again.

    Pass it as `take_samples(..., on_written=indexer)`; the ledger opens on the first sample.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._ledger: Ledger | None = None

    def __call__(self, pending: Pending, path: Path, sample: dict[str, Any]) -> None:
        """Index one written sample."""
        if self._ledger is None:
            self._ledger = open_ledger(self._store.root)
        self._ledger.index_sample(self._store.root, path, sample)

    def close(self) -> None:
        """Close the ledger, if a sample opened it."""
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None
