"""The input a public store's calls of a case were taken with: read back from their stored argv,
or, when the command never received it, confirmed by the public tool's definition hash.
"""

from __future__ import annotations

import hashlib
import json
import re

from noisefloor.errors import StoreError
from noisefloor.store.public import PublicCase, PublicInvocation, PublicRunFile
from noisefloor.suite.model import Case

__all__ = ["taken_input"]

_PLACEHOLDER = re.compile(r"\{\{(input|case_id|repeat)\}\}")


def _element_pattern(template: str, case_id: str, repeat: int) -> re.Pattern[str]:
    """A regular expression matching `template` as the public tool rendered it (one pass per
    element, each placeholder spelled exactly), the input captured once and matched again."""
    parts: list[str] = []
    seen_input = False
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        name = match.group(1)
        if name == "input":
            parts.append("(?P=input)" if seen_input else "(?P<input>.*)")
            seen_input = True
        else:
            parts.append(re.escape(case_id if name == "case_id" else str(repeat)))
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.DOTALL)


def _from_argv(template: list[str], inv: PublicInvocation) -> str | None:
    """The input one call's argv holds; None when its argv does not fit the template."""
    if len(inv.argv) != len(template):
        return None
    found: str | None = None
    for element, value in zip(template, inv.argv, strict=True):
        match = _element_pattern(element, inv.case_id, inv.repeat).fullmatch(value)
        if match is None:
            return None
        if "input" in match.re.groupindex:
            if found is not None and found != match.group("input"):
                return None
            found = match.group("input")
    return found


def _definition_hash(case: Case, text: str) -> str:
    """The public tool's hash of `case` with the input `text`: a sha256 over the input and the
    scorer entries as the suite writes them (`{type, ...params}`), first 16 hex digits."""
    scorers = [{"type": e} if isinstance(e, str) else e for e in case.written_scorers]
    payload = json.dumps({"input": text, "scorers": scorers}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def taken_input(
    record: PublicRunFile, pcase: PublicCase, calls: list[PublicInvocation], case: Case
) -> str:
    """The input `case`'s calls in the public run `record` were taken with.

    Args:
        record: The public run.
        pcase: The case's entry in it (its definition hash).
        calls: The case's calls in that run.
        case: The suite's case of that id.

    Returns:
        The input read back from every call's argv, when the command template holds
        `{{input}}`; else the suite's input, when the public tool's definition hash confirms it.

    Raises:
        StoreError: The calls disagree, or do not fit the template, or the template holds no
            `{{input}}` and the definition hash does not confirm the suite's input.
    """
    where = f"run {record.run_id}, case {case.id!r}"
    if any("{{input}}" in element for element in record.target_command):
        inputs = {_from_argv(record.target_command, inv) for inv in calls}
        found = [text for text in inputs if text is not None]
        if len(inputs) == 1 and found:
            return found[0]
        raise StoreError(
            "cannot read back the input its calls were taken with: their argv "
            + ("do not fit" if None in inputs else "hold different inputs for")
            + f" the command template {record.target_command}",
            where=where,
            hint="the public store was edited after it was written: restore this run from its "
            "source, or remove the case from the suite to import the other cases",
        )
    if _definition_hash(case, case.input) == pcase.definition_hash:
        return case.input
    raise StoreError(
        "cannot tell which input its calls were taken with: the command template "
        f"{record.target_command} holds no {{{{input}}}}, and the public tool's definition "
        f"hash {pcase.definition_hash} is not the suite's case (its input or scorers were edited "
        "since)",
        where=where,
        hint="restore the case's input and scorers as they were when the store was written "
        "(then edit it after importing), or remove the case from the suite to import the others",
    )
