"""The pipeline as doit tasks for a user's own dodo.py: sample, score and band tasks of a suite.

`doit list` then shows them, and `doit` runs them: one sample task per case-repeat calls the
target when that repeat's file is missing (or empty), exactly as `noisefloor run` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noisefloor.executors.redaction import Redactor
from noisefloor.executors.sampling import pending_samples, take_samples
from noisefloor.model.records import CaseRecord
from noisefloor.pipeline.cases import case_records
from noisefloor.pipeline.engine import band_tasks
from noisefloor.pipeline.sample_hooks import sample_hooks
from noisefloor.store.store import Store
from noisefloor.suite.load import load_suite
from noisefloor.suite.targets import build_target

__all__ = ["suite_tasks"]


def suite_tasks(suite_path: str | Path, root: str | Path = ".noisefloor") -> list[dict[str, Any]]:
    """Task dicts for every case of the suite at its current target version and epoch.

    Args:
        suite_path: The suite file.
        root: The store root.

    Returns:
        doit task dicts (`sample:…`, `score:…`, `band:…`), ready to yield from a `task_*` function.
    """
    suite = load_suite(suite_path)
    store = Store(root)
    built = build_target(suite, store.root)
    epoch = store.epoch(suite.name, built.record.key)
    cases = case_records(store, suite, built, epoch)
    inputs = {c.id: c.input for c in suite.cases}
    redactor = Redactor(suite.redact, built.secrets)

    def take(case: CaseRecord, repeat: int) -> bool:
        store.ensure()
        pending = [p for p in pending_samples(store, [case], inputs) if p.repeat == repeat]
        with sample_hooks(store, len(pending)) as hooks:
            # one call per task: there is no order to draw, and doit's own order rules the tasks
            take_samples(store, built.target, pending, seed=0, redactor=redactor, hooks=hooks)
        return True

    return band_tasks(store, suite.name, cases, {}, sample_action=take).tasks
