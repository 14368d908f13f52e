"""A pack holds a baseline case's files byte for byte, and one cut short or foreign reads as no
pack (its samples are then fetched one by one), never as fewer samples."""

from __future__ import annotations

import orjson
import pytest

from noisefloor.errors import StoreError
from noisefloor.store.packs import pack, pack_key, unpack

FILES = [("r0.json", b'{"output": "a\\nb"}\n'), ("r1.json", b"\x00\xff{}"), ("infra.done", b"")]


def test_a_pack_gives_back_each_file_as_it_was():
    assert unpack(pack(FILES)) == FILES
    assert unpack(pack([])) == []


@pytest.mark.parametrize(
    "data",
    [
        pack(FILES)[:-1],
        pack(FILES) + b"x",
        b"not a pack",
        orjson.dumps({"version": 99, "files": []}) + b"\n",
        orjson.dumps({"version": 1, "files": [["../r0.json", 1]]}) + b"\nx",
    ],
    ids=["cut-short", "too-long", "garbage", "another-version", "a-path-outside"],
)
def test_a_damaged_or_foreign_pack_reads_as_none(data):
    assert unpack(data) is None


def test_a_pack_key_is_made_of_safe_names_only():
    assert (
        pack_key("s", "20260101T000000.000000Z-s", "c")
        == "packs/s/20260101T000000.000000Z-s/c.pack"
    )
    with pytest.raises(StoreError):
        pack_key("s", "../run", "c")
