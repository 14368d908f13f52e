"""From bands to verdicts: the vocabulary, the settings and the case-level frame.

Rules (`noisefloor.rules`) judge scorers; this module owns what every rule shares.
"""

from __future__ import annotations

import enum
import math
import statistics as pystats
from collections.abc import Sequence
from typing import Any

from noisefloor.model.records import CaseBand, ScorerBand

__all__ = [
    "Verdict",
    "case_frame",
    "label_order",
    "round6",
    "scorer_pairs",
    "scorer_title",
    "title_of",
    "side",
    "unjudged",
    "worst",
]


class Verdict(enum.StrEnum):
    """Per-case and per-scorer verdicts; the values are the contract words."""

    BROKEN = "broken"
    REGRESSED = "regressed"
    INVALID = "invalid"
    INCONCLUSIVE = "inconclusive"
    QUARANTINE = "quarantine"
    REDEFINED = "redefined"
    UNMEASURED = "unmeasured"
    REMOVED = "removed"
    ADDED = "added"
    FIXED = "fixed"
    IMPROVED = "improved"
    UNCHANGED = "unchanged"


#: Worst first: the order of reports, and which scorer verdict a case takes.
SEVERITY = list(Verdict)


def label_order(label: str) -> tuple[int, str]:
    """Scorer labels (`<index>:<type>`) in the order the suite lists them."""
    index, _, name = label.partition(":")
    return (int(index) if index.isdigit() else 1 << 30, name)


def scorer_pairs(
    base: CaseBand | None, cand: CaseBand | None
) -> list[tuple[str, ScorerBand | None, ScorerBand | None]]:
    """Every scorer label of either side in suite order, with its band on each side (None: absent)."""
    base_scorers = {s.label: s for s in base.scorers} if base else {}
    cand_scorers = {s.label: s for s in cand.scorers} if cand else {}
    labels = sorted(set(base_scorers) | set(cand_scorers), key=label_order)
    return [(label, base_scorers.get(label), cand_scorers.get(label)) for label in labels]


#: Parameter values a title leaves out: the built-in scorers' defaults that say nothing.
_QUIET = {("direction", "higher_is_better"), ("aggregate", "min"), ("count", "completion")}
#: Characters of one parameter's value a title shows.
_VALUE_CHARS = 24


def _shown_value(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def scorer_title(name: str, params: dict[str, Any]) -> str:
    """A scorer as a person reads it: its name, then each parameter that tells it apart, a
    `path` last (`contains "Paris" at answer`, `latency max_s=2`, `json_valid`).

    Text and lists are shown as values, numbers with their name; a parameter that is unset,
    false, empty or a built-in default that says nothing is left out.
    """
    parts = [name]
    for key, value in params.items():
        quiet = isinstance(value, str) and (key, value) in _QUIET
        if key == "path" or value is None or value is False or value in ("", [], {}) or quiet:
            continue
        if value is True:
            parts.append(key)
        elif isinstance(value, int | float):
            parts.append(f"{key}={_shown_value(value)}")
        else:
            parts.append(_shown_value(value))
    path = params.get("path")
    if isinstance(path, str) and path:
        parts.append(f"at {path}")
    return " ".join(parts)


def title_of(base: ScorerBand | None, cand: ScorerBand | None) -> str | None:
    """The title of a scorer compared on two sides: as the candidate defines it, else as the
    baseline did."""
    band = cand or base
    return None if band is None else scorer_title(band.name, band.params)


def unjudged(frame: dict[str, Any] | None) -> str:
    """Why a scorer is not judged: the case-level frame decided, or it is on one side only."""
    return "only on one side" if frame is None else "see the case verdict"


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """The most severe verdict of a list (unchanged for an empty list)."""
    return min(verdicts, key=SEVERITY.index) if verdicts else Verdict.UNCHANGED


def round6(x: float) -> float:
    """A figure of a report, to six significant digits."""
    return float(f"{x:.6g}")


def side(band: ScorerBand | None) -> dict[str, Any]:
    """The numbers of one scorer on one side, as reports show them."""
    if band is None:
        return {}
    out: dict[str, Any] = {
        "k": band.k,
        "n": band.n,
        "rate": round6(band.k / band.n) if band.n else None,
        "target_errors": band.target_errors,
        "infra_errors": band.infra_errors,
        "scorer_errors": band.scorer_errors,
        "reliable": band.reliable,
    }
    if band.details:
        out["details"] = band.details
    if band.scorer_error is not None:
        out["scorer_error"] = band.scorer_error
    if band.example is not None:
        out["example"] = band.example.model_dump(mode="json")
    if band.unmatched is not None:
        out["unmatched"] = band.unmatched
    if band.kind == "continuous":
        values = band.values
        out["values"] = [round6(v) for v in values]
        if values:
            mean = math.fsum(values) / len(values)
            # floats, not statistics.stdev: its exact fractions cost milliseconds per call
            # equal values have no spread, whatever rounding the mean picked up
            var = (
                math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)
                if len(values) > 1 and min(values) != max(values)
                else 0.0
            )
            out["mean"] = round6(mean)
            out["median"] = round6(pystats.median(values))
            out["min"] = round6(min(values))
            out["max"] = round6(max(values))
            out["sd"] = round6(math.sqrt(var))
    return out


def _outcomes(band: CaseBand) -> str:
    return ", ".join(f"{k} x{v}" for k, v in sorted(band.outcomes.items()))


def case_frame(base: CaseBand | None, cand: CaseBand | None) -> dict[str, Any] | None:
    """The case-level verdict every rule shares (added, removed, broken, fixed).

    Returns None when the case must be judged scorer by scorer. Cases are joined by id: an
    edited input is compared like any other case. Broken means the candidate lost the answers
    the baseline had; no answer on either side loses nothing (`unchanged`). An answer cut short
    (`finish:length`) is an answer that failed: its scorers judge it, not this frame.
    """
    if base is None and cand is None:
        raise ValueError("a case needs at least one side")
    if base is None:
        assert cand is not None
        if cand.valid == 0:
            return {
                "verdict": Verdict.INCONCLUSIVE,
                "reason": "every repeat hit an infrastructure error",
            }
        if cand.answered == 0:
            return {
                "verdict": Verdict.BROKEN,
                "reason": f"new case, and no repeat produced a valid result ({_outcomes(cand)})",
            }
        return {"verdict": Verdict.ADDED, "reason": "not in the baseline"}
    if cand is None:
        return {"verdict": Verdict.REMOVED, "reason": "not in the candidate"}
    if cand.valid == 0 or base.valid == 0:
        lost = "candidate" if cand.valid == 0 else "baseline"
        return {
            "verdict": Verdict.INCONCLUSIVE,
            "reason": f"every {lost} repeat hit an infrastructure error",
        }
    if cand.answered == 0 and base.answered == 0:
        return {
            "verdict": Verdict.UNCHANGED,
            "reason": "no valid result on either side: the target failed in the baseline "
            f"({_outcomes(base)}) and in the candidate ({_outcomes(cand)})",
        }
    if cand.answered == 0:
        return {"verdict": Verdict.BROKEN, "reason": f"every repeat failed: {_outcomes(cand)}"}
    if base.answered == 0:
        return {
            "verdict": Verdict.FIXED,
            "reason": f"the baseline never produced a valid result ({_outcomes(base)})",
        }
    return None
