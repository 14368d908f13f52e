"""What a target's samples can give a scorer besides the output's text: the words a kind declares
it provides (`TargetKind.provides`) and a scorer declares it needs (`@scorer(needs=...)`).
"""

from __future__ import annotations

from typing import Literal

__all__ = ["PROVISIONS", "Provision"]

#: Something a scorer may need from each sample. An output's text, JSON or not, is every
#: target's, and needs no word.
Provision = Literal["latency", "usage", "scores"]

#: Each provision and what it is, in the words messages and listings use: `latency` is a
#: sample's `wall_s`, `usage` the `usage` object of its envelope, `scores` its envelope's
#: `scores` (each scorer's name to its value, answer and explanation).
PROVISIONS: dict[Provision, str] = {
    "latency": "the wall-clock time of each call",
    "usage": "the tokens each answer took, as an endpoint reports them",
    "scores": "the scores its own harness gave each answer (an Inspect task's scorers)",
}
