"""The commands around a remote store end to end: `store verify --remote` reading it where it
lies, and the CI's refusal to adopt naming the remote and the branch it looked on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from noisefloor.store.packs import pack, unpack
from tests.builders import commit_all
from tests.remote_runners import (
    adopted,
    change,
    check,
    clone,
    noisefloor,
    reached,
    remote_keys,
    remote_object,
)


def overwrite(remote: tuple[str, dict[str, str]], key: str, data: bytes) -> None:
    """Replace one object of the remote (a damaged or foreign write, as no command makes)."""
    with reached(remote) as opened:
        held = opened.get(key)
        assert held is not None, key
        opened.put_over(key, data, held.version)


def verify(origin: Path, remote: tuple[str, dict[str, str]]) -> tuple[int, dict[str, Any]]:
    done = noisefloor(origin, remote, "store", "verify", "--remote", "--format", "json")
    assert "Traceback" not in done.stderr
    return done.returncode, orjson.loads(done.stdout)


#: Where the first object of each kind lies.
_PREFIX = {
    "sample": "samples/",
    "run": "runs/",
    "pack": "packs/",
    "baseline pointer": "baselines/",
}


def _garbled_pack(remote: tuple[str, dict[str, str]], key: str) -> bytes:
    """The pack at `key` with its first sample's bytes swapped for its second's."""
    with reached(remote) as opened:
        held = opened.get(key)
    assert held is not None
    files = unpack(held.data)
    assert files is not None and len(files) > 1
    return pack([(files[0][0], files[1][1]), *files[1:]])


@pytest.mark.parametrize("damaged", ["sample", "run", "pack", "baseline pointer"])
def test_store_verify_of_the_remote_reports_each_damaged_object(origin, tmp_path, remote, damaged):
    adopted(origin, tmp_path, remote)
    check(clone(origin, tmp_path / "runner", change(origin, "moved")), remote)
    code, found = verify(origin, remote)
    assert (code, found["problems"]) == (0, [])
    key = next(k for k in remote_keys(remote) if k.startswith(_PREFIX[damaged]))
    if damaged == "pack":
        overwrite(remote, key, _garbled_pack(remote, key))
    elif damaged == "baseline pointer":
        doc = orjson.loads(remote_object(remote, key) or b"")
        overwrite(remote, key, orjson.dumps({**doc, "run_id": "20990101T000000.000000Z-gone"}))
    else:
        overwrite(remote, key, b'{"cut short')
    code, found = verify(origin, remote)
    assert code == 3
    wrong = {(p["rel"], p["kind"]) for p in found["problems"]}
    assert (key, damaged) in wrong, found["problems"]
    assert all(p["fix"] for p in found["problems"])
    assert not (origin / ".noisefloor").exists()


def test_ci_without_a_baseline_in_the_remote_names_it_and_the_branch(origin, tmp_path, remote):
    runner = clone(origin, tmp_path / "runner")
    done = noisefloor(runner, remote, "check", "suite.yaml", CI="true")
    assert done.returncode == 3, done.stderr
    assert f"in {remote[0]} on branch 'main'" in done.stderr
    assert "under .noisefloor" not in done.stderr.replace("(nor under .noisefloor)", "")
    assert "--branch" in done.stderr and "--adopt" in done.stderr
    assert not remote_keys(remote)


def pointed(remote: tuple[str, dict[str, str]]) -> str:
    """The run the remote's pointer of `fake` on `main` names."""
    data = remote_object(remote, "baselines/main/fake.json")
    assert data is not None
    return str(orjson.loads(data)["run_id"])


def test_a_suites_own_remote_serves_push_baseline_set_pull_and_deepen(origin, tmp_path, remote):
    suite = yaml.safe_load((origin / "suite.yaml").read_text())
    suite.setdefault("defaults", {})["remote"] = remote[0]
    (origin / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    commit_all(origin, "the remote in the suite")
    unset = {"NOISEFLOOR_REMOTE": ""}  # the suite alone names the remote
    runner = clone(origin, tmp_path / "runner")
    adopted = noisefloor(runner, remote, "check", "suite.yaml", "--offline", **unset)
    assert adopted.returncode == 0, adopted.stderr
    assert not remote_keys(remote)
    pushed = noisefloor(runner, remote, "store", "push", "suite.yaml", **unset)
    assert pushed.returncode == 0, pushed.stderr
    first = pointed(remote)
    done = noisefloor(runner, remote, "run", "suite.yaml", "--offline", "--format", "json", **unset)
    assert done.returncode == 0, done.stderr
    run_id = orjson.loads(done.stdout)["run"]["run_id"]
    moved = noisefloor(runner, remote, "baseline", "set", run_id, "--suite", "suite.yaml", **unset)
    assert moved.returncode == 0, moved.stderr
    assert "(branch main)" in moved.stdout
    assert pointed(remote) == run_id != first
    fresh = clone(origin, tmp_path / "fresh")
    pulled = noisefloor(fresh, remote, "store", "pull", "suite.yaml", **unset)
    assert pulled.returncode == 0, pulled.stderr
    assert f"fake: {run_id}" in pulled.stdout
    deepened = noisefloor(
        fresh, remote, "baseline", "deepen", "suite.yaml", "--repeats", "6", **unset
    )
    assert deepened.returncode == 0, deepened.stderr
    assert pointed(remote) not in (first, run_id)


def test_baseline_set_refuses_a_run_of_another_suite_than_the_one_named(origin, tmp_path, remote):
    runner = clone(origin, tmp_path / "runner")
    run_id = check(runner, remote)["candidate"]
    doc = yaml.safe_load((runner / "suite.yaml").read_text())
    (runner / "other.yaml").write_text(yaml.safe_dump({**doc, "name": "other"}, sort_keys=False))
    done = noisefloor(runner, remote, "baseline", "set", run_id, "--suite", "other.yaml")
    assert done.returncode == 3
    assert "is of suite 'fake', not of other.yaml ('other')" in done.stderr
    assert pointed(remote) == run_id  # the adoption's, unmoved
