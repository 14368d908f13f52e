"""The baseline's own version of a suite's target, built again to run beside a candidate: the
candidate itself, an endpoint from its kept settings, or a git commit checked out in a worktree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from noisefloor.errors import NoisefloorError
from noisefloor.model.records import RunRecord
from noisefloor.operations.worktree import built_at, checked_out
from noisefloor.store.commits import commit_holding, commit_with_content
from noisefloor.store.fingerprint import GIT_LABEL, work_tree
from noisefloor.store.store import Store
from noisefloor.suite.model import Suite
from noisefloor.suite.targets import built_again
from noisefloor.targets.kinds import kind_named
from noisefloor.targets.source import BuiltTarget, TargetPlace

__all__ = ["baseline_version", "probe_of", "refusal"]


@contextlib.contextmanager
def baseline_version(
    store: Store, suite: Suite, base: RunRecord, built: BuiltTarget
) -> Iterator[BuiltTarget | str]:
    """The baseline's own version of the suite's target, ready to call, or why there is none:
    the candidate itself when its version is the baseline's (a `--fresh` check), an endpoint
    built again from the settings the baseline's run kept, or, for a command target versioned
    by git, the commit holding the baseline's files checked out in a temporary worktree under
    the store root: the newest commit holding its tracked files, or for a version narrowed by
    `fingerprint:` globs, the newest whose files those globs match have the baseline's content."""
    if built.record.key == base.target.key:
        yield built
        return
    refused = refusal(base, built)
    if refused is not None:
        yield refused
        return
    place = TargetPlace(suite.path, suite.cases_path, store.root)
    if base.target.settings is not None:
        yield _from_settings(base, place)
        return
    sha, why = _commit(store, suite, base, place)
    if sha is None:
        yield why or (
            f"the baseline's {base.target.kind} target ({base.target.key}) cannot be built "
            "again here: only a command target versioned by git, an endpoint whose settings the "
            "baseline's run kept, or the baseline's own version can be run beside the candidate"
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


def refusal(base: RunRecord, built: BuiltTarget) -> str | None:
    """Why no other version of the target can run beside the candidate at all (its kind's
    `cannot_run_beside`, as a pytest test's), or None; None too when the candidate is the
    baseline's own version."""
    if built.record.key == base.target.key:
        return None
    return kind_named(base.target.kind).cannot_run_beside


def _commit(
    store: Store, suite: Suite, base: RunRecord, place: TargetPlace
) -> tuple[str | None, str]:
    """The commit holding the baseline's version of a command target, or None and why there is
    none ("": a target that git does not version at all)."""
    digest = base.target.fingerprint.get(GIT_LABEL)
    if digest is not None:
        manifest = store.load_manifest(digest)
        if manifest is None:
            return (
                None,
                f"the store lacks the manifest of the baseline's tracked files ({digest[:12]})",
            )
        sha = commit_holding(manifest, suite.base_dir, suite.base_dir, place.not_target())
        return sha, (
            "no commit of the repository holds the baseline's tracked files as they were "
            "(it was taken from uncommitted changes, or from a commit no longer among the newest)"
        )
    globs = getattr(suite.target, "fingerprint", None)
    if not globs or not base.target.fingerprint or work_tree(suite.base_dir, ()) is None:
        return None, ""
    sha = commit_with_content(base.target.fingerprint, globs, suite.base_dir, suite.base_dir)
    return sha, (
        "no commit of the repository holds the files its `fingerprint:` globs match as the "
        "baseline's version had them (it was taken from uncommitted changes, or from a commit no "
        "longer among the newest)"
    )


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


def probe_of(suite: Suite, base: RunRecord, store: Store) -> tuple[BuiltTarget, str] | None:
    """The baseline's endpoint built again from its kept settings making one attempt per call,
    and where it calls, for the one call that shows whether it answers before a control leans on
    it; None for a version not rebuilt from settings, or a kind with nothing to probe."""
    if base.target.settings is None:
        return None
    kind = kind_named(base.target.kind)
    probe = kind.probe(base.target.settings)
    if probe is None:
        return None
    settings, where = probe
    place = TargetPlace(suite.path, suite.cases_path, store.root)
    try:
        built = built_again(base.suite, kind, settings, place)
    except NoisefloorError:
        return None
    return (built, where) if built.record.key == base.target.key else None
