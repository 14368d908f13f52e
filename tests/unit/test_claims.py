"""Claims on missing samples: runners that need the same samples at once take each once, a
late-comer sees a claim made before it came, and a claim whose command is gone is free."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from noisefloor.store.claims import Claims, claim_key
from noisefloor.store.remote_files import FileRemote

KEYS = [f"samples/s/v/e0/a/k/r{n}.json" for n in range(4)]


def serial(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    return [fn(item) for item in items]


def claims(tmp_path: Path, who: str) -> Claims:
    return Claims(FileRemote("file://shared", str(tmp_path / "shared")), who, serial)


def test_the_first_command_takes_the_samples_and_the_others_wait_for_them(tmp_path):
    first, second = claims(tmp_path, "one"), claims(tmp_path, "two")
    assert first.split(KEYS) == {}
    theirs = second.split(KEYS)
    assert set(theirs) == set(KEYS)
    assert {c.key for c in theirs.values()} == {claim_key(KEYS[0])}
    # a late-comer that already fetched r0 and r1 still finds r2 and r3 claimed
    assert set(claims(tmp_path, "three").split(KEYS[2:])) == set(KEYS[2:])
    # repeats beyond the claim are the late-comer's own
    more = [f"samples/s/v/e0/a/k/r{n}.json" for n in (3, 4, 5)]
    assert set(second.split(more)) == {more[0]}


def test_a_claim_taken_over_or_left_by_a_command_gone_is_free(tmp_path):
    first, second = claims(tmp_path, "one"), claims(tmp_path, "two")
    first.split(KEYS)
    [stale] = {c.token for c in second.split(KEYS).values()}
    assert second.split(KEYS, expired={stale}) == {}
    assert set(first.split(KEYS)) == set(KEYS)  # the first now waits for the second
    # a claim by a process of this host that runs no more holds nothing
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    path = tmp_path / "shared" / claim_key(KEYS[0])
    doc = orjson.loads(path.read_bytes())
    for entry in doc["claims"]:
        entry["pid"] = int(dead.stdout)
    path.write_bytes(orjson.dumps(doc))
    assert claims(tmp_path, "three").split(KEYS) == {}


def test_a_damaged_claim_object_holds_nothing(tmp_path):
    path = tmp_path / "shared" / claim_key(KEYS[0])
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{cut short")
    assert claims(tmp_path, "one").split(KEYS) == {}
    assert set(claims(tmp_path, "two").split(KEYS)) == set(KEYS)
