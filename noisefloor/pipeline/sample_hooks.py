"""The hooks of every take of samples, wired in one place: the ledger's indexer, banding's
keepers, and the operation's own listeners (a run's facts, its usage tally, its progress).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from noisefloor.executors.base import OnWritten, Pending, SampleHooks
from noisefloor.pipeline.banding import keepers_for
from noisefloor.pipeline.indexing import SampleIndexer
from noisefloor.store.store import Store
from noisefloor.targets.base import RawSample

__all__ = ["sample_hooks"]


@contextmanager
def sample_hooks(
    store: Store,
    count: int,
    *notes: OnWritten,
    on_call: Callable[[Pending], None] | None = None,
    on_sample: Callable[[Pending, RawSample], None] | None = None,
) -> Iterator[SampleHooks]:
    """The hooks of a take of `count` samples: each written sample indexed in the ledger, kept
    for scoring when they all fit in banding's cache, and told to each of `notes`; `on_call` and
    `on_sample` hear of each call and sample. The ledger is closed when the take ends."""
    indexer = SampleIndexer(store)
    try:
        yield SampleHooks(
            indexer, *notes, *keepers_for(count), on_call=on_call, on_sample=on_sample
        )
    finally:
        indexer.close()
