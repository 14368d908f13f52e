"""Every built-in default, written here and only here, and the settings of the decision rules.

`resolved.resolve` puts flags over the environment over the suite's `defaults` over these; rules
ask `RuleSettings.scorer` for the effective thresholds of each scorer instead of resolving them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = [
    "BASELINE_REPEATS",
    "CONTROL_LOOKS",
    "DEFAULT_BRANCH",
    "DRIFT_PRIOR",
    "DRIFT_PRIOR_REPEATS",
    "DRIFT_PRIOR_SESSIONS",
    "EXECUTOR",
    "JOBS",
    "LOCK_TIMEOUT_S",
    "PLAN_CASES",
    "PLAN_POWER",
    "REMOTE_CLAIM_STALE_S",
    "REMOTE_CONNECTIONS",
    "REMOTE_CONNECT_TIMEOUT_S",
    "REMOTE_REQUEST_TIMEOUT_S",
    "REMOTE_RETRIES",
    "REMOTE_RETRY_TIMEOUT_S",
    "REMOTE_WRITES",
    "STORE_ROOT",
    "HISTORY_RUNS",
    "FUTILITY",
    "LOOKS",
    "MAX_REPEATS",
    "SPENDING_RHO",
    "MIN_EFFECT",
    "REFERENCE_CHANGE",
    "RELATIVE_EFFECT",
    "REPEATS",
    "SECRET_MIN_CHARS",
    "VALUE_MIN_EFFECT",
    "RuleName",
    "RuleSettings",
    "ScorerGate",
    "ScorerSettings",
    "resolve_settings",
]


class RuleName(enum.StrEnum):
    """The decision rules."""

    #: Fisher exact per case with Tarone across cases; Welch with Holm for continuous scorers.
    EXACT = "exact"
    #: The min-max noise band of the public noisefloor tool.
    BAND = "band"
    #: The quarantine-lane triage rule: Wilson intervals that must not overlap.
    WILSON = "wilson"


#: Repeats per case when neither a flag nor the suite sets them.
REPEATS = 5
#: Repeats per case a suite or a flag may ask for at most (repeats, max_repeats,
#: baseline_repeats): a number past it is a typo, not a design (each repeat is a target call).
REPEATS_LIMIT = 10_000
#: Candidate repeats per case a sequential check may take at most (--max-repeats): its last look.
MAX_REPEATS = 60
#: Repeats per case of a deep baseline: a check compares against at most this many, a first
#: check adopts this many, and `baseline deepen` tops a baseline up to it (--baseline-repeats).
#: The baseline's depth, not the candidate's repeats, limits mid-range drops (0.7 -> 0.4 is
#: flagged in about 25% of checks against 30 repeats, 43% against 100: research/statistics.md §5).
BASELINE_REPEATS = 100
#: Candidate repeats at which a sequential check looks between its first look (the suite's
#: repeats) and its last (the cap): doubling, so that each look can change a verdict.
LOOKS = (10, 20, 40)
#: After look j (every look but the last), a case whose smallest p of a worsening exceeds
#: FUTILITY[j] stops: no drop that matters is left plausible enough to pay for more repeats.
FUTILITY = (0.3, 0.2, 0.15, 0.1)
#: The looks of a concurrent control: repeats of the baseline's own version, each beside as many
#: fresh ones of the candidate's, which are judged against it, alpha spent across the looks as
#: across a check's. A break within the drift a case is allowed is confirmed at 10 (20 calls;
#: one beyond it takes none), a case in doubt mostly stops at 5, and the last look's 80 keeps
#: mid-range drops (0.7 -> 0.4 is found in 51% of noisy checks
#: without a control, 38% with a single control of 40 after the looks, 56% with these looks,
#: which also decide the cases left in doubt: docs/sequential.md).
CONTROL_LOOKS = (5, 10, 20, 40, 80)
#: The drift a case is allowed before the store shows how far it moves: the intra-session
#: correlation rho of its pass rate between sessions (docs/drift.md). 0.05 is the largest the
#: false-alarm rate of a check is held at (docs/sequential.md); the servers measured there showed
#: at most 0.017, and one adoption that sat 3.3 standard errors off (research/statistics.md §10).
DRIFT_PRIOR = 0.05
#: How much evidence the prior counts as: this many sessions of `DRIFT_PRIOR_REPEATS` repeats
#: (beyond one). Twenty sessions of 30 that show no drift bring a case's rho from 0.05 to 0.017,
#: about what they cannot rule out (two standard errors, docs/drift.md).
DRIFT_PRIOR_SESSIONS = 10
DRIFT_PRIOR_REPEATS = 30
#: The exponent of the alpha-spending function (n / cap) ** rho across a check's looks.
SPENDING_RHO = 1.0
#: The store's directory when neither --root nor NOISEFLOOR_ROOT names one.
STORE_ROOT = ".noisefloor"
#: Seconds a run waits for another run of its suite on the same store (--lock-timeout).
LOCK_TIMEOUT_S = 600.0
#: Target calls at once when neither --jobs, NOISEFLOOR_JOBS nor the target's kind says.
JOBS = 1
#: The branch whose baseline a check falls back to, and that a pointer moves on, when neither a
#: flag, the CI's variables nor git names one (NOISEFLOOR_DEFAULT_BRANCH).
DEFAULT_BRANCH = "main"
#: Seconds a remote store may take to accept a connection before the attempt counts as failed.
REMOTE_CONNECT_TIMEOUT_S = 5.0
#: Seconds one request to a remote store may take (a sample is a few kilobytes, a pack a few
#: hundred): a frozen server fails the attempt then.
REMOTE_REQUEST_TIMEOUT_S = 10.0
#: Retries of a request a remote store failed transiently (5xx, throttling, a reset), with backoff.
REMOTE_RETRIES = 4
#: Seconds after a request's first attempt past which it is not retried: with the request
#: timeout, a remote that went away or froze stops a command within 30 s (measured: 20 s on a
#: frozen server), never the SDK's 3 minutes.
REMOTE_RETRY_TIMEOUT_S = 20.0
#: Requests to a remote store in flight at once when a command fetches what it needs.
REMOTE_CONNECTIONS = 16
#: Seconds a runner waits for samples another runner claimed (both needing them at once) with
#: none of them arriving, before it takes over the claim and takes them itself.
REMOTE_CLAIM_STALE_S = 120.0
#: How a remote's writes are trusted: `conditional` (its server must honour If-None-Match and
#: If-Match, probed on first use), or `single-writer` for a server that does not
#: (NOISEFLOOR_REMOTE_WRITES; suite `defaults.remote_writes`).
REMOTE_WRITES = "conditional"
#: Where the target runs when neither --executor nor NOISEFLOOR_EXECUTOR says: this process.
EXECUTOR = "local"
#: The cases `plan` assumes can fail when neither --cases nor a suite says.
PLAN_CASES = 50
#: The power `plan`'s table of repeats needed aims at (--power).
PLAN_POWER = 0.8
#: The shortest secret (an endpoint's key, a variable named like a credential) that is looked for
#: in what a target printed and replaced there: a shorter one (`x`, `none`, `ollama`, the keys
#: local servers take) is a piece of ordinary text, and replacing it would rewrite the answers.
SECRET_MIN_CHARS = 8
#: Runs `history` lists per case, and runs of the current target version its flakiness pools.
HISTORY_RUNS = 20
#: The change a sequential check compares its cost with a fixed design's for: pass rates.
REFERENCE_CHANGE = (1.0, 0.6)
#: Smallest change of a continuous score called a regression, in score units. 0 states no
#: effect: any significant worsening regresses.
VALUE_MIN_EFFECT = 0.0
#: With no min_effect, the worsening of a continuous score that rule exact still calls worth more
#: repeats, as a share of the baseline mean's magnitude (Perfherder's default alert magnitude).
RELATIVE_EFFECT = 0.02
#: The rule-wide `min_effect` when neither a flag nor the suite sets one: a pass rate for exact
#: and wilson; score units for band, whose pass rates have a clause of their own (min_rate_drop).
MIN_EFFECT = {RuleName.EXACT: 0.10, RuleName.BAND: VALUE_MIN_EFFECT, RuleName.WILSON: 0.20}


@dataclass(frozen=True)
class ScorerGate:
    """The thresholds a scorer entry of the suite sets for itself (None: not set)."""

    min_effect: float | None = None
    """In the scorer's own units: a pass rate for pass/fail scorers, score units otherwise."""
    suspect_drop: float | None = None


@dataclass(frozen=True)
class ScorerSettings:
    """The thresholds that apply to one scorer of one case, every default resolved."""

    min_effect: float
    """Smallest pass-rate change called a regression."""
    value_min_effect: float
    """Smallest change of a continuous score called a regression, in score units."""
    suspect_drop: float
    """A pass-rate drop at least this large that is not significant is inconclusive (exact)."""


@dataclass(frozen=True)
class RuleSettings:
    """Every knob a rule reads; the defaults are the documented ones."""

    rule: RuleName = RuleName.EXACT
    alpha: float = 0.05
    """Family-wise false-alarm rate per check (exact)."""
    min_effect: float | None = None
    """Smallest change called a regression, from a flag or the suite; None: `MIN_EFFECT`."""
    suspect_drop: float = 0.20
    """A drop at least this large that is not significant is inconclusive (exact)."""
    min_rate_drop: float = 0.20
    """Rate clause of the band rule."""
    min_valid: int = 3
    """Fewer valid repeats on either side is inconclusive (exact and wilson)."""
    strict: bool = False
    """Inconclusive fails the check."""
    suite_gate: bool = False
    """Fail when the suite-level paired difference lies wholly below -suite_min_effect."""
    suite_min_effect: float = 0.02
    gates: Mapping[str, ScorerGate] = field(default_factory=dict)
    """The scorers' own thresholds, by label, for the case being judged (`for_case`)."""

    def config(self) -> dict[str, Any]:
        """JSON-able form, for file names and the report (the scorers' own gates excluded).

        `n_min` repeats `min_valid`: reports named the exact rule's minimum so before the two
        settings became one.
        """
        out = asdict(self)
        del out["gates"]
        out["rule"] = self.rule.value
        out["n_min"] = self.min_valid
        return out

    def for_case(self, gates: Mapping[str, ScorerGate]) -> RuleSettings:
        """These settings with the scorers' own thresholds of one case (these very settings
        when they hold those already: a suite of thousands of cases mostly sets none)."""
        return self if gates == self.gates else replace(self, gates=gates)

    def scorer(self, label: str, continuous: bool = False) -> ScorerSettings:
        """The effective thresholds of one scorer: its own, else the rule-wide ones, else the
        defaults. A scorer's own `min_effect` is in its own units, so it replaces the pass-rate
        threshold of pass/fail scorers only (exact); wilson's table has no per-scorer threshold."""
        own = self.gates.get(label, ScorerGate())
        rule_wide = self.min_effect if self.min_effect is not None else MIN_EFFECT[self.rule]
        if self.rule is RuleName.BAND:
            value = own.min_effect if own.min_effect is not None else rule_wide
            return ScorerSettings(rule_wide, value, self.suspect_drop)
        if self.rule is RuleName.WILSON:
            return ScorerSettings(rule_wide, VALUE_MIN_EFFECT, self.suspect_drop)
        rate = own.min_effect if own.min_effect is not None and not continuous else rule_wide
        value = own.min_effect if own.min_effect is not None else VALUE_MIN_EFFECT
        suspect = own.suspect_drop if own.suspect_drop is not None else self.suspect_drop
        return ScorerSettings(rate, value, suspect)


#: Settings a suite's `defaults` may set, under the flag's name.
SUITE_DEFAULTS = ("min_effect", "suspect_drop")


def resolve_settings(given: Mapping[str, Any], suite_defaults: object = None) -> RuleSettings:
    """The rule settings: a value given (not None) first, then the suite's `defaults`, then the
    built-in default.

    Args:
        given: Values by setting name, None where the flag was not given.
        suite_defaults: The suite's `defaults` (None when comparing stored runs).
    """
    values = {k: v for k, v in given.items() if v is not None}
    for key in SUITE_DEFAULTS:
        suite_value = getattr(suite_defaults, key, None)
        if key not in values and suite_value is not None:
            values[key] = suite_value
    if "rule" in values:
        values["rule"] = RuleName(values["rule"])
    return RuleSettings(**values)
