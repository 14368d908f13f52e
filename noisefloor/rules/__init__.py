"""The decision rules behind one small interface: compare one case, then decide the suite.

`compare` sees one case's two bands; `decide` sees every case, for corrections across cases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from noisefloor.settings import RuleName, RuleSettings

if TYPE_CHECKING:
    # the report model is built by a comparison; the exit policy beside the rules needs none of it
    from noisefloor.model.records import CaseBand
    from noisefloor.model.report import CaseReport, ComparedCase, RuleSummary

__all__ = ["Rule", "get_rule"]


class Rule(Protocol):
    """A decision rule. Both methods are pure functions of their arguments."""

    name: RuleName

    def compare(
        self, case_id: str, base: CaseBand | None, cand: CaseBand | None, settings: RuleSettings
    ) -> ComparedCase:
        """The evidence for one case, with a verdict if the case alone decides it."""
        ...

    def decide(
        self, cases: list[ComparedCase], settings: RuleSettings
    ) -> tuple[list[CaseReport], RuleSummary]:
        """Final case verdicts and the suite-level figures (corrections, thresholds, warnings)."""
        ...


def get_rule(name: RuleName | str) -> Rule:
    """The rule of that name (its module loads only when a comparison uses it)."""
    name = RuleName(name)
    if name is RuleName.BAND:
        from noisefloor.rules.band import BandRule

        return BandRule()
    if name is RuleName.WILSON:
        from noisefloor.rules.wilson import WilsonRule

        return WilsonRule()
    from noisefloor.rules.exact import ExactRule

    return ExactRule()
