"""Keeping the ledger current from the operations: opened with the engine's score-file names,
fed each sample as sampling writes it, and each run once it is scored.

The ledger is an index of the store's files; sampling and the engine know nothing of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noisefloor.executors.base import Pending
from noisefloor.ledger.ledger import Ledger, ledger_path
from noisefloor.model.records import RunRecord
from noisefloor.pipeline.engine import score_file
from noisefloor.store.store import Store

__all__ = ["SampleIndexer", "index_run", "open_ledger"]


def open_ledger(store_root: Path) -> Ledger:
    """The ledger of a store, able to index runs (it finds their score files)."""
    return Ledger(ledger_path(store_root), score_file)


def index_run(store: Store, run: RunRecord) -> None:
    """Index a scored run in the SQLite ledger (an index of the JSON files, rebuildable)."""
    with open_ledger(store.root) as ledger:
        ledger.index_run(store.root, run)


class SampleIndexer:
    """Indexes the samples sampling writes, in batches: the writer flushes them whenever it
    waits for the next sample, and at least every `FLUSH_S` while they keep coming (see
    `executors.base.OnWritten`). A run killed halfway has in the ledger every sample it took
    but those of its last moments, and the run's own indexing at the end reads none again.

    `sample_hooks` passes it to every take; the ledger opens on the first flush.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._ledger: Ledger | None = None
        self._batch: list[tuple[Path, dict[str, Any]]] = []

    def __call__(self, pending: Pending, path: Path, sample: dict[str, Any]) -> None:
        """Queue one written sample for the next flush."""
        self._batch.append((path, sample))

    def flush(self) -> None:
        """Index the queued samples in one commit."""
        if not self._batch:
            return
        if self._ledger is None:
            self._ledger = open_ledger(self._store.root)
        batch, self._batch = self._batch, []
        self._ledger.index_samples(self._store.root, batch)

    def close(self) -> None:
        """Index what is still queued, and close the ledger, if a sample opened it."""
        try:
            self.flush()
        finally:
            if self._ledger is not None:
                self._ledger.close()
                self._ledger = None
