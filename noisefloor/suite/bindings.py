"""A case's scorer entries built into bindings: each entry's scorer with its gate settings, and
the problems of the entries that do not build or that the suite's target cannot serve, each at
its place in the list.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from noisefloor.scorers.registry import GATE_KEYS, REGISTRY, UnknownScorer
from noisefloor.suite.model import ScorerBinding
from noisefloor.suite.source import plain_error
from noisefloor.targets.kinds import TargetKind, kinds
from noisefloor.targets.provisions import PROVISIONS

__all__ = ["CaseScorers", "scorers_of", "unserved"]

#: A case's built scorers, and the problems of its entries (each at its path in the list).
CaseScorers = tuple[list[ScorerBinding], list[tuple[tuple[Any, ...], str]]]


def _build_scorers(entries: list[str | dict[str, Any]]) -> CaseScorers:
    bindings: list[ScorerBinding] = []
    problems: list[tuple[tuple[Any, ...], str]] = []
    for index, entry in enumerate(entries):
        if isinstance(entry, str):
            entry = {"type": entry}
        params = dict(entry)
        name = params.pop("type", None)
        if not isinstance(name, str):
            problems.append(((index,), "a scorer needs `type: <name>` (see `noisefloor scorers`)"))
            continue
        gate: dict[str, float | None] = {}
        for key in GATE_KEYS:
            value = params.pop(key, None)
            if value is not None and (
                not isinstance(value, int | float) or isinstance(value, bool) or value < 0
            ):
                problems.append(((index, key), f"must be a number >= 0, got {value!r}"))
                value = None
            gate[key] = float(value) if value is not None else None
        try:
            built = REGISTRY.build(name, params)
        except UnknownScorer as exc:
            problems.append(((index, "type"), str(exc)))
            continue
        except ValidationError as exc:
            known = {"": [*REGISTRY.get(name).params.model_fields, *GATE_KEYS]}
            for err in exc.errors(include_url=False):
                loc, msg = plain_error(dict(err), known)
                problems.append(((index, *loc), f"scorer {name!r}: {msg}"))
            continue
        bindings.append(ScorerBinding(index, built, gate["min_effect"], gate["suspect_drop"]))
    return bindings, problems


def scorers_of(
    entries: list[str | dict[str, Any]],
    built: dict[bytes, CaseScorers],
) -> CaseScorers:
    """`_build_scorers(entries)`, made once per suite for each distinct list of entries: cases
    mostly share `defaults.scorers`, and a built scorer never changes (2,000 cases: 2,000
    validations of the same params)."""
    try:
        key = orjson.dumps(entries, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a YAML value JSON has no form for: built on its own, and reported
        return _build_scorers(entries)
    if key not in built:
        built[key] = _build_scorers(entries)
    return built[key]


def unserved(
    case_id: str, bindings: list[ScorerBinding], kind: TargetKind, inherited: bool
) -> list[tuple[tuple[Any, ...], str]]:
    """A problem at each of a case's scorers that needs what a target of `kind` does not
    provide (`inherited`: the case's scorers are `defaults.scorers`), with the ways to fix it."""
    fix = (
        "remove it from `defaults.scorers` (or give the case `scorers` of its own)"
        if inherited
        else "remove it from the case's `scorers`"
    )
    problems: list[tuple[tuple[Any, ...], str]] = []
    for binding in bindings:
        needs = binding.scorer.definition.needs
        for need in [p for p in PROVISIONS if p in needs and p not in kind.provides]:
            providers = [k.name for k in kinds() if k.fields is not None and need in k.provides]
            elsewhere = (
                f", or use a target of a kind that provides it ({', '.join(providers)})"
                if providers
                else ""
            )
            problems.append(
                (
                    (binding.index,),
                    f"case {case_id!r}: scorer {binding.scorer.name!r} needs {need} "
                    f"({PROVISIONS[need]}), which a {kind.name} target does not provide: "
                    f"{fix}{elsewhere}",
                )
            )
    return problems
