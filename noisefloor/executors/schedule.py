"""The order a take's calls go out in: blocks by repeat, each a random permutation of its
(case, arm) calls, drawn from a seed the run records so the order can be taken again.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

from noisefloor.executors.base import ArmPending, Pending

__all__ = ["call_order", "new_schedule_seed"]

#: Bits of a new schedule seed: short enough to read in a run record, enough that runs rarely share one.
SEED_BITS = 32


def new_schedule_seed() -> int:
    """A fresh seed for one run's call order."""
    return secrets.randbits(SEED_BITS)


def call_order(arms: Sequence[ArmPending], seed: int) -> list[tuple[int, Pending]]:
    """Every pending call with its arm's index, in a randomized block design: repeat by repeat,
    and within a repeat the (case, arm) calls in a random order drawn from `seed`.

    A target's state (a prompt cache, a batch, its load) then favours no case and no arm: the
    baseline arm goes first in about half of a case's repeats, not all of them. Each call's place
    follows from the seed, its repeat (counted from where its arm's `first_block` opens, so a
    control's k-th call meets its candidate's k-th), case and arm alone: a run's later takes (a sequential
    check's next look, repeats taken again after an outage) keep the order of the one draw, and
    every executor sends the calls in the same order.
    """
    placed = [
        (_place(seed, index, item, arm.first_block.get(item.case.case_id, 0)), index, item)
        for index, arm in enumerate(arms)
        for item in arm.pending
    ]
    return [(index, item) for _, index, item in sorted(placed, key=lambda p: p[0])]


def _place(seed: int, arm: int, item: Pending, first: int) -> tuple[int, bytes, str, int]:
    """Where one call sorts: its block (its repeat, counted from the repeat its case's first
    block opens at), then its draw (the case and arm break a tie)."""
    case_id = item.case.case_id
    block = item.repeat - first
    draw = hashlib.blake2b(f"{seed}:{block}:{arm}:{case_id}".encode(), digest_size=8)
    return block, draw.digest(), case_id, arm
