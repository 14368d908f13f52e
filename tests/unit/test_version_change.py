"""What moved a target's version: files from the records and the manifests, and other reasons."""

from __future__ import annotations

from noisefloor.model.records import TargetRecord
from noisefloor.store.fingerprint import GIT_LABEL
from noisefloor.targets.version_change import version_change

SPEC = {"command": ["python", "agent.py"], "cwd": "."}


def target(key: str, fingerprint: dict[str, str], **kw: object) -> TargetRecord:
    return TargetRecord(
        kind=str(kw.get("kind", "command")),
        key=key,
        spec=kw.get("spec", SPEC),  # type: ignore[arg-type]
        fingerprint=fingerprint,
    )


def test_the_same_version_or_an_endpoint_says_nothing() -> None:
    same = target("k1", {"agent.py": "a"})
    assert version_change(same, same, lambda _: None) is None
    http = {"host": "h", "model": "m"}
    a = target("k1", {}, kind="http", spec=http)
    b = target("k2", {}, kind="http", spec=http)
    assert version_change(a, b, lambda _: None) is None


def test_files_from_argv_and_the_work_tree_are_named_once_and_sorted() -> None:
    manifests = {
        "g1": {"agent.py": "100644 a1", "README.md": "100644 r1", "old.py": "100644 o"},
        "g2": {"agent.py": "100644 a2", "README.md": "100644 r2", "new.py": "100644 n"},
    }
    base = target("k1", {"agent.py": "sha-a1", GIT_LABEL: "g1"})
    cand = target("k2", {"agent.py": "sha-a2", GIT_LABEL: "g2"})
    change = version_change(base, cand, manifests.get)
    assert change is not None
    assert change.as_dict() == {
        "added": ["new.py"],
        "removed": ["old.py"],
        "modified": ["README.md", "agent.py"],
        "reasons": [],
    }
    message = change.message("suites/s.yaml")
    assert (
        "4 file(s) changed it: modified README.md, agent.py; added new.py; removed old.py"
        in message
    )
    assert "`target.fingerprint:` in suites/s.yaml" in message


def test_only_the_targets_own_files_leave_nothing_to_narrow() -> None:
    manifests = {"g1": {"agent.py": "100644 a1"}, "g2": {"agent.py": "100644 a2"}}
    base = target("k1", {"agent.py": "sha-a1", GIT_LABEL: "g1"})
    cand = target("k2", {"agent.py": "sha-a2", GIT_LABEL: "g2"})
    change = version_change(base, cand, manifests.get)
    assert change is not None and change.modified == ["agent.py"]
    assert "fingerprint" not in change.message("s.yaml")


def test_many_files_show_a_few_and_a_count() -> None:
    old = {f"f{i:02}.py": "100644 a" for i in range(12)}
    new = {name: "100644 b" for name in old}
    change = version_change(
        target("k1", {GIT_LABEL: "g1"}), target("k2", {GIT_LABEL: "g2"}), {"g1": old, "g2": new}.get
    )
    assert change is not None and len(change.modified) == 12
    message = change.message("s.yaml")
    assert "12 file(s) changed it: modified f00.py, f01.py, f02.py, f03.py, f04.py, and 7 more" in (
        message
    )
    assert "f05.py" not in message


def test_a_baseline_without_its_manifest_still_says_the_work_tree_moved() -> None:
    change = version_change(
        target("k1", {GIT_LABEL: "g1"}), target("k2", {GIT_LABEL: "g2"}), {"g2": {}}.get
    )
    assert change is not None and not (change.added or change.removed or change.modified)
    assert "tracked files changed" in change.message("s.yaml")
    assert "`target.fingerprint:` in s.yaml" in change.message("s.yaml")


def test_globs_taking_over_from_the_work_tree_are_a_reason() -> None:
    base = target("k1", {"agent.py": "a", GIT_LABEL: "g1"})
    cand = target("k2", {"agent.py": "a"})
    change = version_change(base, cand, lambda _: None)
    assert change is not None
    assert change.reasons == ["the repository's tracked files no longer count"]
    assert "`target.fingerprint:`" not in change.message("s.yaml")


def test_no_file_moved_it_means_the_settings_did() -> None:
    change = version_change(target("k1", {"a.py": "1"}), target("k2", {"a.py": "1"}), {}.get)
    assert change is not None
    assert change.reasons == [
        "no file did: the target's env, timeout_s, output or max_output_bytes changed"
    ]
