"""The JUnit XML report, for CI systems that show test results: one testcase per case, a failure
for regressed or broken cases (or, in a run without comparison, for failed repeats)."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from noisefloor.model.parts import Side
from noisefloor.model.report import Report, Usage
from noisefloor.model.run import RunSummary
from noisefloor.report._evidence import evidence_line, quoted_examples, side_text
from noisefloor.report._usage import amount
from noisefloor.report._words import case_words, control_words

__all__ = ["render", "render_run"]

_FAILING = {"regressed", "broken"}


def _usage(parent: ET.Element, usage: Usage | None) -> None:
    """The usage as `<properties>`, each count only when the endpoint reported it."""
    if usage is None:
        return
    props = ET.SubElement(parent, "properties")
    for name, value in usage.dump().items():
        if value is not None:
            shown = amount(value) if name == "cost" else str(value)
            ET.SubElement(props, "property", name=f"usage.{name}", value=shown)


def _xml(suite: ET.Element) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )


def render(report: Report) -> str:
    """The comparison report as JUnit XML."""
    cases = report.cases
    failures = sum(1 for c in cases if c.verdict in _FAILING)
    suite = ET.Element(
        "testsuite",
        name=f"noisefloor.{report.suite}",
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
    )
    _usage(suite, report.usage)
    for case in cases:
        el = ET.SubElement(
            suite, "testcase", classname=f"noisefloor.{report.suite}", name=case.case_id
        )
        _usage(el, case.usage)
        examples = quoted_examples(case.verdict, case.scorers)
        body = "\n".join(
            f"{s.key}: {s.verdict}: {side_text(s.baseline)} -> {side_text(s.candidate)}; "
            f"{evidence_line(s.evidence)}" + (f"\n  {example}" if example else "")
            for s, example in zip(case.scorers, examples, strict=True)
        )
        phrase = case_words(case)
        words = f"{phrase.title}: {phrase.words}" if phrase.title else phrase.words
        control = control_words(case)
        if control:
            body = f"concurrent control: {control}\n{body}"
        if case.verdict in _FAILING:
            # readers that require a failure's type (Ant, Surefire) get the verdict; the
            # message, the counts a person checks, as the other reports word them
            failure = ET.SubElement(
                el, "failure", message=f"{case.verdict}: {words}", type=case.verdict
            )
            failure.text = f"{case.reason}\n{body}"
        elif case.verdict in ("inconclusive", "quarantine", "invalid"):
            ET.SubElement(el, "system-out").text = f"{case.verdict}: {case.reason}\n{body}"
    return _xml(suite)


def _failed(side: Side) -> bool:
    """A scorer failed a repeat, could not score one, or had no valid repeat to score."""
    return not side.n or side.k != side.n or bool(side.scorer_errors)


def render_run(summary: RunSummary) -> str:
    """A run without comparison as JUnit XML. It judges nothing (there is no baseline): a case
    fails where one of its scorers failed a repeat, or scored none, and the failure says so with
    the pass counts; its output lists every scorer's numbers. The run's warnings, and why it
    measured too little when it did (it exits 3), are the suite's error output."""
    name = f"noisefloor.{summary.run.suite}"
    failing = [c for c in summary.cases if any(_failed(s.side) for s in c.scorers)]
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(summary.cases)),
        failures=str(len(failing)),
        errors="0",
    )
    _usage(suite, summary.usage)
    for case in summary.cases:
        el = ET.SubElement(suite, "testcase", classname=name, name=case.case_id)
        outcomes = ", ".join(f"{k} x{v}" for k, v in sorted(case.outcomes.items()))
        lines = [f"{s.key}: {side_text(s.side)}" for s in case.scorers]
        failed = [s for s in case.scorers if _failed(s.side)]
        if failed:
            counts = ", ".join(f"{s.key} {s.side.k or 0}/{s.side.n or 0}" for s in failed)
            failure = ET.SubElement(
                el,
                "failure",
                message=f"repeats failed (no comparison: not a verdict): {counts}",
                type="failed-repeats",
            )
            failure.text = "\n".join([f"({outcomes})", *lines])
        else:
            ET.SubElement(el, "system-out").text = "\n".join([f"({outcomes})", *lines])
    notes = [f"warning: {w}" for w in summary.warnings]
    if summary.unmeasured:
        notes.append(f"error: {summary.unmeasured}")
    if notes:
        ET.SubElement(suite, "system-err").text = "\n".join(notes)
    return _xml(suite)
