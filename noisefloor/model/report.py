"""What a comparison produces, as versioned models: per scorer, per case, the suite, the report.

The JSON report is `Report.dump()`; a key a model does not set is absent, as before the models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

from noisefloor.model.parts import Part, Side, Usage
from noisefloor.model.sequential import Control, LookSummary, Sequential, SequentialSummary
from noisefloor.model.verdict import Verdict, side, title_of

if TYPE_CHECKING:
    from noisefloor.model.records import ScorerBand
from noisefloor.settings import RuleName

__all__ = [
    "REPORT_VERSION",
    "BaselineBranch",
    "CaseReport",
    "ComparedCase",
    "ComparedScorer",
    "Control",
    "Evidence",
    "LookSummary",
    "Report",
    "ReportFile",
    "RuleSummary",
    "RunSummary",
    "Sequential",
    "SequentialSummary",
    "Side",
    "SuiteSummary",
    "Usage",
    "VerdictFile",
    "report_json_schema",
]

#: The version of the report and of the verdict and report files under derived/; raised when
#: a field changes meaning or goes away (adding a field keeps it).
REPORT_VERSION: Final = 1


class ValuesEvidence(Part):
    """Rule exact, continuous scorers: Welch's test on the values."""

    diff: float | None
    direction: str
    deterministic: bool | None = None
    welch_ci: list[float | None] | None = None
    t: float | None = None
    df: float | None = None
    p_worse: float | None = None
    pooled_sd: float | None = None
    diff_sd: float | None = None
    threshold: float | None = None
    worse_end: float | None = None
    """How much worse the candidate may be: the worse end of the 95% Welch interval."""
    relevant_effect: float | None = None
    """A non-significant worsening is inconclusive only while `worse_end` reaches this: the
    scorer's min_effect, else `RELATIVE_EFFECT` of the baseline mean's magnitude."""


class ScorerDefinition(Part):
    """A scorer as a run recorded it."""

    name: str
    params: dict[str, Any]
    impl_hash: str | None


class Redefinition(Part):
    """A scorer whose definition differs from the baseline's (null baseline: added since)."""

    baseline: ScorerDefinition | None
    candidate: ScorerDefinition


class Evidence(Part):
    """The statistics behind a scorer's verdict; which keys exist depends on the rule."""

    test: str | None = None
    diff: float | None = None
    newcombe: list[float | None] | None = None
    p_regress: float | None = None
    p_improve: float | None = None
    threshold: float | None = None
    min_effect: float | None = None
    suspect_drop: float | None = None
    """Rule exact: a larger drop whose interval reaches `min_effect` is inconclusive."""
    min_detectable_drop: float | None = None
    values: ValuesEvidence | None = None
    scorer_redefined: Redefinition | None = None


class Gate(Part):
    """Rule exact: the thresholds a scorer is judged by, resolved while its case is compared."""

    min_effect: float
    value_min_effect: float
    suspect_drop: float


class ScorerReport(Part):
    """One scorer of one case: its verdict, why, both sides' numbers and the evidence."""

    key: str
    """`<index>:<type>`, as the suite lists the case's scorers."""
    verdict: Verdict
    reason: str
    baseline: Side
    candidate: Side
    evidence: Evidence
    title: str | None = None
    """The scorer as a person reads it: its name and the parameters that tell it apart
    (`contains "Paris" at answer`), as `model.verdict.scorer_title` words it."""


class ValidCounts(Part):
    """Valid results over repeats that reached the target, per side."""

    baseline: tuple[int, int]
    candidate: tuple[int, int]


class ErrorsTest(Part):
    """Rule exact: the test that found target errors rose."""

    p: float | None
    threshold: float | None


class InputChange(Part):
    """The case keys of an input that changed since the baseline."""

    baseline: str
    candidate: str


class CaseReport(Part):
    """One case: its verdict (the worst of its scorers', or the case's own), and its scorers."""

    case_id: str
    verdict: Verdict
    reason: str
    scorers: list[ScorerReport]
    valid: ValidCounts | None = None
    flaky: dict[str, float] | None = None
    """Rule exact: scorers whose baseline pass rate lies strictly between 0 and 1."""
    quarantine: dict[str, str] | None = None
    """Every rule: the scorers whose repeats disagree (pass and fail) within one side, with the
    pass counts of the sides that disagree. The quarantine lane, as information: under rules
    exact and band it never changes the verdict."""
    errors_test: ErrorsTest | None = None
    input_changed: InputChange | None = None
    sequential: Sequential | None = None
    usage: Usage | None = None
    """The usage of this case's samples this command took (endpoint targets)."""


class PendingTest(Part):
    """Rule exact, between compare and decide: one test awaiting the correction across cases."""

    family: str
    scorer: str | None
    p: float
    pmin: float | None = None


class ComparedScorer(Part):
    """A scorer as a rule's `compare` leaves it: without a verdict while it waits for `decide`."""

    key: str
    verdict: Verdict | None = None
    reason: str | None = None
    baseline: Side
    candidate: Side
    evidence: Evidence
    title: str | None = None
    """The scorer as a person reads it (`ScorerReport.title`)."""
    gate: Gate | None = None
    """Rule exact, on a scorer waiting for `decide`: the thresholds it is judged by."""
    pending: bool | None = None

    @classmethod
    def between(
        cls, key: str, base: ScorerBand | None, cand: ScorerBand | None, **fields: Any
    ) -> ComparedScorer:
        """A scorer's two bands as a rule starts comparing them: both sides' numbers, its title,
        no evidence yet unless `fields` give it."""
        return cls(
            key=key,
            baseline=Side.model_validate(side(base)),
            candidate=Side.model_validate(side(cand)),
            title=title_of(base, cand),
            **{"evidence": Evidence(), **fields},
        )


class ComparedCase(Part):
    """A case as a rule's `compare` leaves it; `decide` turns it into a `CaseReport`."""

    case_id: str
    verdict: Verdict | None = None
    reason: str | None = None
    scorers: list[ComparedScorer]
    valid: ValidCounts | None = None
    tests: list[PendingTest] | None = None

    def decided(self) -> CaseReport:
        """The case as a report shows it, once its verdict and every scorer's are set."""
        return CaseReport.model_validate(self.dump())


class VerdictFile(Part):
    """The file of one case's comparison under derived/verdicts/."""

    version: Literal[1]
    case: ComparedCase


class RuleSummary(Part):
    """What the rule computed across cases: its procedure and, for exact, the corrections."""

    procedure: str
    alpha: float | None = None
    family_alpha: dict[str, float | None] | None = None
    K: dict[str, int] | None = None
    testable: dict[str, int] | None = None
    thresholds: dict[str, float | None] | None = None
    continuous_tests: int | None = None
    min_valid: int | None = None


class ReportSettings(Part):
    """The settings the rule ran with (`RuleSettings.config()`)."""

    rule: RuleName
    alpha: float
    min_effect: float | None
    suspect_drop: float
    min_rate_drop: float
    n_min: int
    min_valid: int
    strict: bool
    suite_gate: bool
    suite_min_effect: float


class ReportFile(Part):
    """The file of a decided comparison under derived/reports/."""

    version: Literal[1]
    cases: list[CaseReport]
    suite: RuleSummary
    settings: ReportSettings


class SuiteSummary(Part):
    """The paired mean change in pass rate across cases, with its case-clustered 95% interval."""

    cases: int
    mean_diff: float | None = None
    ci95: list[float] | None = None
    """Null with a single case."""
    suite_min_effect: float | None = None
    gate_failed: bool | None = None


class RestsOn(Part):
    """A run whose repeats a labelled side holds, with the repeats per case it took."""

    run_id: str
    repeats: int | list[int]


class RunSummary(Part):
    """What a report says of one side's run."""

    run_id: str
    started_at: str
    target_key: str
    epoch: int
    repeats: int | list[int]
    calls: int
    jobs: int
    label: str | None
    cases: int
    target: dict[str, Any]
    """The target's kind and spec."""
    served_models: dict[str, int]
    rests_on: list[RestsOn] | None = None


class Runs(Part):
    """The compared runs (an adoption has only the candidate)."""

    baseline: RunSummary | None = None
    candidate: RunSummary


class Work(Part):
    """Engine tasks executed and found up to date, per kind."""

    executed: dict[str, int]
    up_to_date: dict[str, int]


class TargetChange(Part):
    """The files that moved a command target's version."""

    added: list[str]
    removed: list[str]
    modified: list[str]
    reasons: list[str]


class BaselineBranch(Part):
    """The branch of a remote whose baseline pointer a check compared with (or adopted into)."""

    name: str | None
    """None: no branch read had a pointer in the remote, and the check compared with the local
    store's baseline (a committed one)."""
    why: str
    """Why that branch: `--baseline-branch`, the request's target branch, the branch checked
    out or containing a detached commit, or the default branch and where it was read."""
    race: str | None = None
    """Set when this check adopted, lost the race to move the pointer, and compared with the
    winner's run instead: who moved it."""


class Report(Part):
    """The whole comparison report: `noisefloor check`, `diff` and `compare` print it."""

    version: Literal[1] = REPORT_VERSION
    """The report format's version; raised only when a field changes meaning or goes away."""
    suite: str
    rule: RuleName
    baseline: str | None
    """The baseline run id; null when a first check did not adopt its run."""
    candidate: str
    adopted: bool
    cases: list[CaseReport]
    """Worst first, then by case id."""
    warnings: list[str]
    notes: list[str] = []
    """Of `warnings`, those that tell of a routine event (an adoption, a change of the target's
    version) rather than of something that may be wrong: the terminal prints them as `note:`."""
    counts: dict[str, int]
    """Cases per verdict."""
    exit_code: int
    runs: Runs
    calls: int
    """Target calls this command made."""
    work: Work
    rule_summary: RuleSummary | None = None
    settings: ReportSettings | None = None
    suite_summary: SuiteSummary | None = None
    target_change: TargetChange | None = None
    baseline_branch: BaselineBranch | None = None
    """With a remote: the branch whose baseline this check compared with, and why that one."""
    sequential: SequentialSummary | None = None
    usage: Usage | None = None
    """What the target calls this command made used and cost (endpoint targets)."""
    unmeasured: str | None = None
    """Why the comparison measured too little to stand on, in one line (its exit code is then
    3): infrastructure errors left a case fewer valid candidate repeats than `min_valid`,
    whether a check just took them or `diff`, `report` or `compare` read them from the store."""

    def dump(self) -> dict[str, Any]:
        """The JSON report: the keys that were set, and always the version."""
        return {"version": self.version, **super().dump()}


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema of the JSON report (`noisefloor schema --report`)."""
    schema = Report.model_json_schema(mode="serialization")
    # the version has a default when the model is built, but the JSON report always has it
    schema["required"] = ["version", *schema["required"]]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
