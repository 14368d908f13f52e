"""The JUnit XML report, for CI systems that show test results: one testcase per case, a failure
for regressed or broken cases, carrying the same numbers as the other formats."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from noisefloor.model.report import Report, Usage
from noisefloor.report._evidence import evidence_line, quoted_examples, side_text
from noisefloor.report._usage import amount

__all__ = ["render"]

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
        if case.verdict in _FAILING:
            # readers that require a failure's type (Ant, Surefire) get the verdict
            failure = ET.SubElement(
                el, "failure", message=f"{case.verdict}: {case.reason}", type=case.verdict
            )
            failure.text = body
        elif case.verdict in ("inconclusive", "quarantine", "invalid"):
            ET.SubElement(el, "system-out").text = f"{case.verdict}: {case.reason}\n{body}"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )
