"""The versioned records the store keeps besides samples: runs, scores, bands and pointers.

Each carries a `version`, bumped whenever a field changes meaning; field docs feed the schema.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BaselinePointer",
    "CaseBand",
    "CaseRecord",
    "DriftCheck",
    "FailingExample",
    "Graded",
    "ImportedFrom",
    "JudgedLook",
    "RepeatScore",
    "RepeatStatus",
    "RunRecord",
    "ScoreFile",
    "ScorerBand",
    "ScorerUse",
    "SequentialRecord",
    "TargetRecord",
    "repeat_status",
]

RUN_VERSION = 1
SCORE_VERSION = 1
BAND_VERSION = 4


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class ScorerUse(_Record):
    """One scorer as a case uses it: its spec plus the gate settings that apply to it."""

    label: str
    """`<index>:<type>`, unique within the case; the key reports use."""
    name: str
    params: dict[str, Any]
    impl_hash: str
    min_effect: float | None = None
    """Smallest change that may be called a regression (rule units); None: the rule's default."""
    suspect_drop: float | None = None
    """Drop that is reported inconclusive when not significant; None: the rule's default."""


class CaseRecord(_Record):
    """One case of a run: where its samples are and how it is scored."""

    case_id: str
    case_key: str
    """Hash of what the target receives for this case (input and id)."""
    input: str
    repeats: int
    """Repeats the run took: r0 up to r<repeats-1> in the sample directory."""
    first_repeat: int = 0
    """Repeats below this one were taken by earlier runs of the run's label (`pooled_runs`)."""
    start: int = 0
    """The first repeat the verdict rests on (r<start> up to r<repeats-1>): a sequential check
    rests every case on all its repeats, a deep baseline keeps its newest repeats."""
    sample_dir: str
    """Directory of the sample files, relative to the store root."""
    tags: list[str] = []
    scorers: list[ScorerUse]
    line: int | None = None
    """Line of the case in the suite or cases file, for messages."""


class TargetRecord(_Record):
    """The target as it was when the run sampled it."""

    kind: str
    key: str
    """Version of the target: spec plus code fingerprint."""
    spec: dict[str, Any]
    """The comparable spec (argv template, cwd, model...): differing specs are not compared."""
    fingerprint: dict[str, str] = {}
    """Content hashes of the files that make up the target's code: the files named by argv or
    `fingerprint:` globs, and `git:`, the digest of the work tree's tracked files (listed in the
    store's `manifests/<digest>.json`)."""
    settings: dict[str, Any] | None = None
    """For a kind whose version is its settings alone (an endpoint): its fields of the suite's
    `target` as built, from which a concurrent control builds the same version again; None for
    a kind that versions code, or where a secret's value stood among them (never written)."""


class ImportedFrom(_Record):
    """Where an imported run came from: the public noisefloor tool's own identity of it."""

    tool: str
    """The tool and version that took the samples, e.g. `noisefloor 0.1.0 (public)`."""
    run_id: str
    suite_hash: str
    """That tool's hash of the whole suite (name, target, case definitions)."""
    git_sha: str | None
    """`git rev-parse --short HEAD` in the target's directory when it ran, if any."""
    target_cwd: str
    """The target's working directory as that suite file wrote it."""
    env: dict[str, str] = {}
    """The variables that suite set for the target."""
    definition_hashes: dict[str, str] = {}
    """That tool's hash of each case (input and scorers), by case id."""


class JudgedLook(_Record):
    """One look of a sequential check, as its run keeps it."""

    alpha_share: float
    """The share of alpha the look spent."""
    windows: dict[str, tuple[int, int, int, int]]
    """Per case: the first and the end repeat of the candidate, then of the baseline."""


class DriftCheck(_Record):
    """Whether drift between sessions could explain a case's drop: its pass rate's drop tested
    as if the check's session sat as far from the baseline's as the case's learned drift allows
    (`noisefloor.stats.drift`). Beyond it, no concurrent control is needed."""

    scorer: str
    """The scorer whose drop was tested (the first regressed pass rate)."""
    baseline: tuple[int, int]
    """The deep baseline's passes and repeats."""
    candidate: tuple[int, int]
    """The candidate's passes and repeats at the look that called the case regressed."""
    rho: float
    """The drift allowed: the intra-session correlation of the case's pass rate between sessions,
    its own sessions' shrunk towards the suite's, the suite's towards the prior."""
    sessions: int
    """Sessions of the baseline's version the case's own estimate rests on (0: none, or one)."""
    suite_rho: float
    """The suite's rho, shrunk towards the prior."""
    suite_sessions: int
    """Sessions over every case of the suite that told something about drift."""
    prior: float
    """The prior rho (`settings.DRIFT_PRIOR`)."""
    p: float
    """The drop's p-value under that much drift."""
    threshold: float
    """The level the look that called it regressed held its p to."""
    beyond: bool
    """`p` is within `threshold`: no plausible drift reaches the drop."""


class SequentialRecord(_Record):
    """How a sequential check judged its run, so that `diff` and `report` judge it again by the
    same looks and give its verdicts."""

    baseline: str
    """The baseline run the check compared with."""
    looks: list[JudgedLook]
    last_look: dict[str, int]
    """Per case, the look its verdict comes from."""
    stops: dict[str, str]
    """Per case, why it stopped (`noisefloor.rules.sequential.Stop`)."""
    why: dict[str, str]
    """Per case, why it stopped, in words."""
    advice: dict[str, str] = {}
    """Per case stopped at the cap or by the budget: what would narrow its interval."""
    controls: dict[str, tuple[int, int, int, int]] = {}
    """Per case the deep baseline called regressed and a concurrent control was taken for: the
    first and the end repeat of the candidate, then of the control (the baseline's version, in
    the baseline's sample directory)."""
    control_looks: list[int] = []
    """The repeats of the controls' looks (`settings.CONTROL_LOOKS` when the check ran); empty:
    one look, at each control's own repeats."""
    uncontrolled: dict[str, str] = {}
    """Per case the deep baseline called regressed without a concurrent control: why none."""
    drift: dict[str, DriftCheck] = {}
    """Per case the looks left regressed: whether drift could explain its drop (beyond it, no
    control was taken)."""


class RunRecord(_Record):
    """A run: which samples answered which cases, with which scorers. Written when it completes."""

    version: int = RUN_VERSION
    run_id: str
    suite: str
    suite_file: str | None = None
    label: str | None = None
    started_at: str
    finished_at: str
    harness_version: str
    target: TargetRecord
    epoch: int
    jobs: int
    calls: int
    """Target calls this run made (0 when every sample came from the cache)."""
    rescored_from: str | None = None
    pooled_runs: list[str] = []
    """Earlier runs of the same label whose repeats this run's cases include, oldest first."""
    served_models: dict[str, int] = {}
    """HTTP targets: how many samples each model the endpoint said it served answered."""
    imported_from: ImportedFrom | None = None
    """Set when `noisefloor import` read this run from a store of the public noisefloor tool."""
    sequential: SequentialRecord | None = None
    """Set when a sequential check took this run: the looks it was judged by."""
    schedule_seed: int | None = None
    """The seed of the order its target calls went out in (`executors.schedule.call_order`);
    None for a run taken before the order was drawn, or read from another tool's store."""
    cases: list[CaseRecord]


class BaselinePointer(_Record):
    """`baselines/<suite>.json`: which run is the suite's baseline."""

    version: int = 1
    suite: str
    run_id: str
    set_at: str


class RepeatStatus(enum.StrEnum):
    """How one repeat counts for one scorer."""

    PASS = "pass"
    FAIL = "fail"
    #: The program failed (crash, timeout, bad output): a fail for quality, tested as an error rate.
    TARGET_ERROR = "target_error"
    #: The infrastructure failed: excluded from the statistics.
    INFRA_ERROR = "infra_error"
    #: The scorer raised: the harness's fault, reported apart.
    SCORER_ERROR = "scorer_error"


class RepeatScore(_Record):
    """One scorer applied to one repeat."""

    repeat: int
    status: RepeatStatus
    outcome: str = "ok"
    """How the call ended (`ok`, `error:exit`, ...), so bands need not reread samples."""
    value: float | None = None
    detail: str = ""
    reliable: bool = True
    traceback: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """A scorer error's traceback, the harness's own frames left out (`noisefloor show`)."""


class Graded(Protocol):
    """What `repeat_status` reads of a score: a `RepeatScore`, or a lighter copy of these two."""

    @property
    def status(self) -> RepeatStatus: ...

    @property
    def detail(self) -> str: ...


def repeat_status(scores: Sequence[tuple[str, Graded]]) -> tuple[str, str]:
    """Pass, fail or invalid for one repeat across every scorer of its case, with the reason.

    `scores` holds each scorer's label and its score of the repeat, in the case's scorer order.
    An infrastructure, then a scorer error makes the repeat invalid; a target error, then a
    scorer's fail makes it fail (the first one found gives the reason).
    """
    for status, prefix in (
        (RepeatStatus.INFRA_ERROR, "infra"),
        (RepeatStatus.SCORER_ERROR, "grader"),
    ):
        for _, score in scores:
            if score.status is status:
                return "invalid", f"{prefix}:{score.detail}"
    for _, score in scores:
        if score.status is RepeatStatus.TARGET_ERROR:
            return "fail", score.detail
    for label, score in scores:
        if score.status is RepeatStatus.FAIL:
            return "fail", f"{label}: {score.detail}"
    return "pass", "ok"


class ScoreFile(_Record):
    """`scores/...`: one scorer over every repeat of one case. Byte-deterministic."""

    version: int = SCORE_VERSION
    case_id: str
    scorer: ScorerUse
    """The scorer without its gate thresholds: they tune verdicts, not scores."""
    kind: str
    direction: str
    repeats: list[RepeatScore]


class FailingExample(_Record):
    """One failing repeat of a scorer, as reports quote it: what the target said and why it failed."""

    repeat: int
    """0-based repeat index (`noisefloor show` prints that repeat in full)."""
    output: str
    """The output, on one line with control characters escaped, shortened to about 120 characters."""
    stderr: str = ""
    """The last line of stderr, likewise shortened; only when the output is empty."""
    detail: str
    """The scorer's detail for that repeat, or the call's error when the target failed."""


class ScorerBand(_Record):
    """One scorer's repeats collapsed into counts and values."""

    label: str
    name: str
    kind: str
    direction: str
    impl_hash: str
    params: dict[str, Any]
    n: int
    """Valid repeats: passes, fails and target errors (infrastructure and scorer errors excluded)."""
    k: int
    """Passing repeats."""
    target_errors: int
    infra_errors: int
    scorer_errors: int
    values: list[float]
    """Continuous values of the repeats that produced one, in repeat order."""
    reliable: bool
    details: list[str]
    """Distinct failure details, most frequent first (at most five)."""
    example: FailingExample | None = None
    """The first failing repeat (a fail or a target error), quoted; None when every repeat passed."""
    scorer_error: str | None = None
    """The first scorer error, as `repeat N: file:line in function: what`; None without one."""
    unmatched: str | None = None
    """Set when the scorer's path matched nothing in any output it scored (`path 'x' matched
    nothing`): it then passes or fails whatever the answers."""


class CaseBand(_Record):
    """`bands/...`: every scorer of one case over one sample set. Byte-deterministic."""

    version: int = BAND_VERSION
    case_id: str
    case_key: str
    repeats: int
    outcomes: dict[str, int]
    """Count of repeats per outcome (`ok`, `error:exit`, ...)."""
    errors: list[str]
    """Distinct error messages of failed calls, most frequent first (at most five)."""
    scorers: list[ScorerBand]

    @property
    def answered(self) -> int:
        """Repeats the target answered: a valid result, or an answer cut short (a finish reason
        not accepted, such as `length`), which the scorers count as a fail: the model failed,
        the target did not (research/quarantine-lane.md)."""
        return self.outcomes.get("ok", 0) + self.outcomes.get("error:finish", 0)

    @property
    def infra(self) -> int:
        """Repeats lost to the infrastructure."""
        return self.outcomes.get("error:infra", 0)

    @property
    def valid(self) -> int:
        """Repeats that count: all but infrastructure failures."""
        return self.repeats - self.infra
