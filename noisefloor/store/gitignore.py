"""The store's `.gitignore` files: what they leave visible is what to commit (the baseline
pointers, the baseline runs, their samples, the manifests behind their versions, and the epochs
of a baseline sampled in a later epoch).
"""

from __future__ import annotations

from pathlib import Path

from noisefloor.model.records import BaselinePointer, RunRecord
from noisefloor.store.fingerprint import GIT_LABEL

__all__ = ["gitignore_texts"]

_ROOT = """\
# Written by noisefloor: what is not ignored here is what to commit (baseline pointers, the
# baseline runs, their samples, and the lists of tracked files their target versions digest).
# Which run, samples and manifests those are is said by the .gitignore files under runs/<suite>/,
# samples/<suite>/, manifests/ and epochs/, written whenever a baseline moves, so that adopting
# the baseline of a new suite leaves this file as it is. Everything else is a cache (other runs,
# samples, manifests and epochs) or derived and rebuilt on demand (doit db, scores, bands,
# verdicts, reports, ledger).
/*
!/.gitignore
!/baselines/
!/epochs/
/epochs/*
!/epochs/.gitignore
!/runs/
/runs/*/*
!/runs/*/.gitignore
!/samples/
/samples/*/*
!/samples/*/.gitignore
!/manifests/
/manifests/*
!/manifests/.gitignore
*.tmp
"""


def gitignore_texts(
    root: Path, baselines: list[tuple[BaselinePointer, RunRecord | None]]
) -> dict[Path, str]:
    """Each `.gitignore` file under `root` and its text, given every baseline pointer with its
    run (None when the run's file is gone): the root's, the same for every store, one per
    suite under runs/ and samples/, and those under manifests/ and epochs/, naming what the
    baselines rest on.

    A suite's epochs file is visible only where its baseline was sampled past epoch 0 (after
    `--fresh`): a clone needs it to sample that version in the baseline's epoch, and a later
    `--fresh` not to take the baseline's samples for new ones. Any other is a cache: a
    `--fresh` check of a new version leaves nothing to commit.
    """
    files = {root / ".gitignore": _ROOT}
    manifests = []
    epochs = []
    for pointer, run in baselines:
        runs, samples = root / "runs" / pointer.suite, root / "samples" / pointer.suite
        files[runs / ".gitignore"] = f"!/{pointer.run_id}.json\n"
        if run is not None:
            key = f"/{run.target.key}"
            files[samples / ".gitignore"] = f"!{key}/\n{key}/*\n!{key}/e{run.epoch}/\n"
            tracked = run.target.fingerprint.get(GIT_LABEL)
            if tracked is not None:
                manifests.append(f"!/{tracked}.json\n")
            if run.epoch:
                epochs.append(f"!/{pointer.suite}.json\n")
    if baselines:
        files[root / "epochs" / ".gitignore"] = "".join(sorted(epochs)) or "# none needed\n"
    if manifests:
        files[root / "manifests" / ".gitignore"] = "".join(sorted(set(manifests)))
    return files
