"""The baseline's own version of a suite's target, built again to run beside a candidate: the
candidate itself, an endpoint from its kept settings, or a git commit checked out in a worktree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from noisefloor.errors import NoisefloorError
from noisefloor.model.records import RunRecord
from noisefloor.operations.worktree import built_at, checked_out
from noisefloor.store.commits import commit_holding
from noisefloor.store.fingerprint import GIT_LABEL
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import built_again
from noisefloor.targets.kinds import kind_named
from noisefloor.targets.source import BuiltTarget, TargetPlace

__all__ = ["baseline_version"]


@contextlib.contextmanager
def baseline_version(
    store: Store, suite: Suite, base: RunRecord, built: BuiltTarget
) -> Iterator[BuiltTarget | str]:
    """The baseline's own version of the suite's target, ready to call, or why there is none:
    the candidate itself when its version is the baseline's (a `--fresh` check), an endpoint
    built again from the settings the baseline's run kept, or, for a command target versioned
    by git, the commit holding the baseline's tracked files checked out in a temporary worktree
    under the store root."""
    if built.record.key == base.target.key:
        yield built
        return
    refused = kind_named(base.target.kind).cannot_run_beside
    if refused is not None:
        yield refused
        return
    place = TargetPlace(suite.path, suite.cases_path, store.root)
    if base.target.settings is not None:
        yield _from_settings(base, place)
        return
    digest = base.target.fingerprint.get(GIT_LABEL)
    if digest is None:
        yield (
            f"the baseline's {base.target.kind} target ({base.target.key}) cannot be built "
            "again here: only a command target versioned by git, an endpoint whose settings the "
            "baseline's run kept, or the baseline's own version can be run beside the candidate"
        )
        return
    manifest = store.load_manifest(digest)
    if manifest is None:
        yield f"the store lacks the manifest of the baseline's tracked files ({digest[:12]})"
        return
    sha = commit_holding(manifest, suite.base_dir, suite.base_dir, place.not_target())
    if sha is None:
        yield (
            "no commit of the repository holds the baseline's tracked files as they were "
            "(it was taken from uncommitted changes, or from a commit no longer among the newest)"
        )
        return
    try:
        with checked_out(suite.base_dir, sha, store.root) as tree:
            control = built_at(tree, suite, store)
            if control.record.key != base.target.key:
                yield (
                    f"commit {sha[:12]} builds version {control.record.key}, not the "
                    f"baseline's {base.target.key} (the suite's target settings changed)"
                )
            else:
                yield control
    except NoisefloorError as exc:
        yield f"the baseline's commit {sha[:12]} could not be checked out: {exc.message}"


def _from_settings(base: RunRecord, place: TargetPlace) -> BuiltTarget | str:
    """The baseline's target built again from the settings its run kept, or why not."""
    assert base.target.settings is not None
    try:
        built = built_again(base.suite, kind_named(base.target.kind), base.target.settings, place)
    except NoisefloorError as exc:
        return f"the baseline's {base.target.kind} settings no longer build: {exc.message}"
    if built.record.key != base.target.key:
        return (
            f"the baseline's settings build version {built.record.key} here, not the "
            f"baseline's {base.target.key}"
        )
    return built
