"""Why a command target's version moved between two runs: the files that moved it.

Files named by argv or `fingerprint:` globs are compared by the hashes in the run records; the
work tree's tracked files by the manifests the store keeps per `git:` digest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from noisefloor.model.records import TargetRecord
from noisefloor.store.fingerprint import GIT_LABEL
from noisefloor.targets.kinds import kind_named

__all__ = ["VersionChange", "version_change"]

#: Paths named in the message; the JSON report lists them all.
_SHOWN = 5


@dataclass
class VersionChange:
    """The files whose content differs between two versions of a target, and other reasons."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    """What moved the version besides the files listed (settings, a manifest the store lacks)."""
    tracked: bool = False
    """Tracked files not named by argv took part: `fingerprint:` globs would narrow the version."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's `target_change`."""
        return {
            "added": self.added,
            "removed": self.removed,
            "modified": self.modified,
            "reasons": self.reasons,
        }

    def message(self, suite_file: str) -> str:
        """One line for the report's warnings: a few paths, a count, and how to narrow it."""
        kinds = [("modified", self.modified), ("added", self.added), ("removed", self.removed)]
        total = sum(len(paths) for _, paths in kinds)
        parts = []
        if total:
            room, shown = _SHOWN, []
            for kind, paths in kinds:
                if paths and room:
                    shown.append(f"{kind} {', '.join(paths[:room])}")
                    room -= len(paths[:room])
            more = f", and {total - _SHOWN} more" if total > _SHOWN else ""
            parts.append(f"{total} file(s) changed it: {'; '.join(shown)}{more}")
        parts.extend(self.reasons)
        text = (
            "the target's version changed since the baseline (samples are reused only within "
            f"one version): {'; '.join(parts)}"
        )
        if self.tracked:
            text += (
                ". Without `fingerprint:` every file git tracks is part of the target; to narrow "
                f"it, list the target's own files (globs) under `target.fingerprint:` in {suite_file}"
            )
        return text


def _diff(old: dict[str, str], new: dict[str, str], into: dict[str, set[str]]) -> None:
    into["added"].update(new.keys() - old.keys())
    into["removed"].update(old.keys() - new.keys())
    into["modified"].update(p for p in new.keys() & old.keys() if old[p] != new[p])


def version_change(
    base: TargetRecord,
    cand: TargetRecord,
    manifest: Callable[[str], dict[str, str] | None],
) -> VersionChange | None:
    """What moved a command target's version from the baseline's, or None when it did not move.

    Args:
        base: The baseline run's target.
        cand: The candidate run's target.
        manifest: The tracked files behind a `git:` digest, or None when they are not known.

    Returns:
        The changed files (labels relative to the suite's directory) and any other reason.
    """
    if base.key == cand.key or not any(
        kind_named(kind).fingerprints_code for kind in (base.kind, cand.kind)
    ):
        return None
    files: dict[str, set[str]] = {"added": set(), "removed": set(), "modified": set()}
    reasons = []
    _diff(
        {k: v for k, v in base.fingerprint.items() if k != GIT_LABEL},
        {k: v for k, v in cand.fingerprint.items() if k != GIT_LABEL},
        files,
    )
    named = set(base.fingerprint) | set(cand.fingerprint)
    unnamed = False
    old_git, new_git = base.fingerprint.get(GIT_LABEL), cand.fingerprint.get(GIT_LABEL)
    if old_git != new_git:
        if old_git is None:
            reasons.append("the repository's tracked files count now (no `fingerprint:`)")
        elif new_git is None:
            reasons.append("the repository's tracked files no longer count")
        else:
            old_files, new_files = manifest(old_git), manifest(new_git)
            if old_files is None or new_files is None:
                unnamed = True
                reasons.append(
                    "the repository's tracked files changed (which ones cannot be said: the "
                    "store has no list of the baseline's)"
                )
            else:
                tracked: dict[str, set[str]] = {"added": set(), "removed": set(), "modified": set()}
                _diff(old_files, new_files, tracked)
                for kind, paths in tracked.items():
                    files[kind] |= paths
                    unnamed = unnamed or bool(paths - named)
    if not (any(files.values()) or reasons):
        if base.spec == cand.spec:
            reasons.append(
                "no file did: the target's env, timeout_s, output or max_output_bytes changed"
            )
        else:
            reasons.append("the target's command or cwd changed")
    return VersionChange(
        added=sorted(files["added"]),
        removed=sorted(files["removed"]),
        modified=sorted(files["modified"]),
        reasons=reasons,
        tracked=unnamed,
    )
