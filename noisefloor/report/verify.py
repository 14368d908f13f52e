"""Rendering what `store verify` found: one entry per problem (file, kind, what is wrong, what
fixes it), the ledger's rebuild, and a count; as text or as JSON."""

from __future__ import annotations

import orjson

from noisefloor.model.verification import Problem, Verified

__all__ = ["render"]


def render(found: Verified, fmt: str, repair: bool) -> str:
    """What `store verify` prints: `fmt` is "terminal" or "json"."""
    if fmt == "json":
        doc = {
            "files": found.files,
            "problems": [vars(p) for p in found.problems],
            "ledger_rebuilt": found.ledger_rebuilt,
            "ledger_error": found.ledger_error,
            "left": len(found.left),
        }
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
    lines = [_line(p) for p in found.problems]
    if found.ledger_rebuilt:
        lines.append("ledger rebuilt from the sample and run files")
    elif found.ledger_error:
        lines.append(
            f"ledger not rebuilt: {found.ledger_error}; fix the files above, then run "
            "`noisefloor ledger rebuild`"
        )
    repaired = len(found.problems) - len(found.left)
    lines.append(
        f"{found.files} files read: {len(found.problems)} problem(s)"
        + (f", {repaired} repaired, {len(found.left)} left" if repair else "")
    )
    return "\n".join(lines) + "\n"


def _line(problem: Problem) -> str:
    return f"{problem.rel}: {problem.kind}: {problem.what}\n  {problem.fix}"
