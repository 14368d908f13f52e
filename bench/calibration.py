"""Calibration: false-alarm rate and power of every rule, through the real verdict code.

Simulates 50-case suites with a typical case mix (70% of cases always
pass, 15% pass with p ~ U[0.8, 0.99], 15% with p ~ U[0.3, 0.8]; continuous suites: 70%
deterministic cases, 30% noisy N(0, 1)), builds the bands both sides would produce, and asks each
rule's `compare` and `decide` for verdicts. Prints, per rule and N: the share of unchanged suites
that fail (exit 1 or 2), and the share of suites in which a changed case is flagged regressed.

The sequential design of `check` runs through the functions a check runs (`noisefloor.rules.sequential`
and the rule): looks at 5, 10, 20, 40 and 60 candidate repeats against a deep baseline, alpha
spent across them, each look's correction over every case, futility stops. It runs on two
mixes, the current one and an LLM-like noisy one (15 cases at pass rate 1.0, 10 at 0.9, 10 at
0.7, 10 at 0.5, 5 at 0.2), and prints the false-alarm rates, the power per change, the mean
candidate repeats per unchanged case, the repeats spent on the changed case, and the baseline's
one-time calls; --depth, --cap and --rho compare other designs through the same code.

Drift between sessions (--drift): a model server does not keep one pass rate per case. Each
session (the deep baseline's adoption, each check, with --look-sessions each look) draws a case's
rate from a beta around its mean with intra-session correlation rho; --off adds an adoption that
sits off. The drift table prints the deep baseline alone beside designs that guard against
drift: a concurrent control of the baseline's own version for a case the deep baseline calls
regressed (--control), or a baseline discounted by the design effect (--deff-prior). The
control `check` takes (`CHECKS_GUARD`) takes none for a drop beyond the drift each case is
allowed, learned from the store's sessions of the baseline's version (`,drift`; `,history=H`
adds H of them besides the adoption), and calls a case unchanged against its control only where
the interval of change excludes a drop that matters (`,evidence`).

Usage: python bench/calibration.py [--suites 2000] [--seed 1] [--rules ...] [--depth 100 30]
       python bench/calibration.py --rules --drift 0 0.02 0.05 0.1 --off --control matched:40,own,alpha=0.5
       python bench/calibration.py --rules --mixes noisy --drift 0 0.02 0.05 0.1 --off \
           --guarded-only --control 80,after,steps=5/10/20/40,doubt,futile,drift,evidence
"""

from __future__ import annotations

import argparse
import multiprocessing
import multiprocessing.pool
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
import orjson
import scipy.stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from noisefloor import stats  # noqa: E402
from noisefloor.model.records import CaseBand, ScorerBand  # noqa: E402
from noisefloor.model.report import CaseReport, ComparedCase  # noqa: E402
from noisefloor.model.verdict import Verdict  # noqa: E402
from noisefloor.rules import Rule, get_rule  # noqa: E402
from noisefloor.rules.exit_policy import exit_code_for  # noqa: E402
from noisefloor.rules.sequential import Stop, doubt_p, settle, step  # noqa: E402
from noisefloor.settings import (  # noqa: E402
    BASELINE_REPEATS,
    DRIFT_PRIOR,
    DRIFT_PRIOR_REPEATS,
    DRIFT_PRIOR_SESSIONS,
    FUTILITY,
    MAX_REPEATS,
    REPEATS,
    SPENDING_RHO,
    RuleName,
    RuleSettings,
)
from noisefloor.settings.design import Design  # noqa: E402
from noisefloor.stats import significant  # noqa: E402
from noisefloor.stats.drift import (  # noqa: E402
    Dispersion,
    dispersion,
    drift_p,
    learned_spread,
    prior_weight,
)

M = 50
RULES = (RuleName.EXACT, RuleName.BAND, RuleName.WILSON)
BINARY_CHANGES = [("1.0->0.0", 1.0, 0.0), ("1.0->0.6", 1.0, 0.6), ("0.9->0.5", 0.9, 0.5)]
SHIFT_SD = 2.0


def _band(case_id: str, n: int, k: int, values: list[float] | None = None) -> CaseBand:
    scorer = ScorerBand(
        label="0:score",
        name="score",
        kind="continuous" if values is not None else "binary",
        direction="higher_is_better",
        impl_hash="sim",
        params={},
        n=n,
        k=k,
        target_errors=0,
        infra_errors=0,
        scorer_errors=0,
        values=values or [],
        reliable=True,
        details=[],
    )
    return CaseBand(
        case_id=case_id, case_key="sim", repeats=n, outcomes={"ok": n}, errors=[], scorers=[scorer]
    )


@cache
def _binary_compare(rule: RuleName, kb: int, kc: int, n: int) -> bytes:
    """Binary cases depend only on the counts: compare once per (rule, kb, kc, n)."""
    return orjson.dumps(
        get_rule(rule)
        .compare("c", _band("c", n, kb), _band("c", n, kc), RuleSettings(rule=rule))
        .dump()
    )


def _decide(rule: RuleName, cases: list[ComparedCase]) -> tuple[bool, bool]:
    """(the suite fails, case 0 is flagged regressed)."""
    decided, _ = get_rule(rule).decide(cases, RuleSettings(rule=rule))
    counts: dict[str, int] = {}
    for case in decided:
        counts[case.verdict.value] = counts.get(case.verdict.value, 0) + 1
    failed = exit_code_for(counts, strict=False) != 0
    return failed, decided[0].verdict is Verdict.REGRESSED


def _null_rates(rng: np.random.Generator) -> np.ndarray:
    u = rng.random(M)
    return np.where(
        u < 0.70, 1.0, np.where(u < 0.85, rng.uniform(0.80, 0.99, M), rng.uniform(0.30, 0.80, M))
    )


def binary_suite(
    rule: RuleName, n: int, rng: np.random.Generator, change: tuple[float, float] | None
) -> tuple[bool, bool]:
    pb = _null_rates(rng)
    pc = pb.copy()
    if change is not None:
        pb[0], pc[0] = change
    kb, kc = rng.binomial(n, pb), rng.binomial(n, pc)
    cases = []
    for i in range(M):
        case = ComparedCase.model_validate_json(_binary_compare(rule, int(kb[i]), int(kc[i]), n))
        case.case_id = f"case-{i:02d}"
        cases.append(case)
    return _decide(rule, cases)


def continuous_suite(
    rule: RuleName, n: int, rng: np.random.Generator, shift: float | None
) -> tuple[bool, bool]:
    noisy = rng.random(M) < 0.30
    if shift is not None:
        noisy[0] = True
    b, c = rng.normal(size=(M, n)), rng.normal(size=(M, n))
    b, c = b * noisy[:, None], c * noisy[:, None]
    if shift is not None:
        c[0] -= shift
    settings = RuleSettings(rule=rule)
    cases = []
    for i in range(M):
        if noisy[i]:
            case = get_rule(rule).compare(
                "c",
                _band("c", n, n, list(map(float, b[i]))),
                _band("c", n, n, list(map(float, c[i]))),
                settings,
            )
        else:  # deterministic cases are all alike: compare one once
            case = ComparedCase.model_validate_json(_constant_compare(rule, n))
        case.case_id = f"case-{i:02d}"
        cases.append(case)
    return _decide(rule, cases)


@cache
def _constant_compare(rule: RuleName, n: int) -> bytes:
    zeros = [0.0] * n
    return orjson.dumps(
        get_rule(rule)
        .compare("c", _band("c", n, n, zeros), _band("c", n, n, zeros), RuleSettings(rule=rule))
        .dump()
    )


@cache
def _pair_compare(kb: int, nb: int, kc: int, nc: int) -> bytes:
    """A binary case of the sequential design: counts on each side, unequal repeats."""
    rule = get_rule(RuleName.EXACT)
    return orjson.dumps(rule.compare("c", _band("c", nb, kb), _band("c", nc, kc), SEQ).dump())


SEQ = RuleSettings(rule=RuleName.EXACT)


def _named(raw: bytes, i: int) -> ComparedCase:
    case = ComparedCase.model_validate_json(raw)
    case.case_id = f"case-{i:02d}"
    return case


#: Pass rates of the LLM-like noisy mix: 15 cases at 1.0, 10 at 0.9, 10 at 0.7, 10 at 0.5, 5 at 0.2.
NOISY = np.repeat([1.0, 0.9, 0.7, 0.5, 0.2], [15, 10, 10, 10, 5])
#: The same mix in 21 cases, as the suite `bench/noisy_checks.py` checks through the command line
#: (research/statistics.md's 21-case version: 20 of the mix and the changed case, here at 1.0).
NOISY_21 = np.repeat([1.0, 0.9, 0.7, 0.5, 0.2], [7, 4, 4, 4, 2])
#: The pass rates of each fixed mix; the current mix draws its own (`_null_rates`).
MIX_RATES = {"noisy": NOISY, "noisy-21": NOISY_21}


def cases_of(mix: str) -> int:
    """How many cases a suite of the mix holds."""
    return len(MIX_RATES[mix]) if mix in MIX_RATES else M


#: The changes whose power the sequential rows print (the changed case replaces case 0).
SEQ_CHANGES = [
    ("1.0->0.6", 1.0, 0.6),
    ("0.9->0.5", 0.9, 0.5),
    ("0.7->0.4", 0.7, 0.4),
    ("0.5->0.2", 0.5, 0.2),
    ("1.0->0.0", 1.0, 0.0),
]
#: Share of noisy continuous cases per mix (the rest are deterministic).
NOISY_SHARE = {"current": 0.30, "noisy": 0.70, "noisy-21": 0.70}


@dataclass
class Outcome:
    """One simulated sequential check."""

    failed: bool
    """Exit 1 or 2 (the check fails)."""
    flagged: bool
    """Case 0 regressed."""
    calls: int
    """Candidate repeats over every case."""
    spent: int
    """Candidate repeats of case 0."""
    control_calls: int = 0
    """Repeats of concurrent controls over every case."""
    control_spent: int = 0
    """Repeats of case 0's concurrent control."""
    inconclusive: int = 0
    """Cases left inconclusive."""
    verdict0: str = ""
    """Case 0's verdict."""
    doubt0: str = ""
    """The verdict a control gave case 0 when the looks left it in doubt ("": none did)."""
    skipped: int = 0
    """Cases the looks left regressed that were confirmed without a control: beyond drift."""
    skipped0: bool = False
    """Case 0 among them."""


def _look(
    rule: Rule,
    settings: RuleSettings,
    looked: list[tuple[int, int]],
    running: set[int],
    controlled: set[int],
    draw: Callable[[int, int], ComparedCase],
    control: BinaryCheck | None,
    look: int,
) -> dict[int, CaseReport]:
    """One look's verdicts. Without a control, the rule's decision over every looked case against
    the deep baseline. With one, a running case the look calls regressed against the baseline
    takes its control and is judged against it (in the look's family, decided again until no new
    case is called regressed against the baseline; or in a family of the controlled cases)."""
    compared = {i: draw(i, n) for i, n in looked}
    ids = [i for i, _ in looked]
    at = dict(looked)
    if control is None:
        decided, _ = rule.decide([compared[i] for i in ids], settings)
        return dict(zip(ids, decided, strict=True))
    for i in controlled & running:
        control.take_control(i, at[i], look)
    own = control.guard.own_family
    while True:
        if not own:
            for i in controlled & set(ids):
                compared[i] = control.against_control(i, at[i])
        decided, _ = rule.decide([compared[i] for i in ids], settings)
        flagged = [
            i
            for i, case in zip(ids, decided, strict=True)
            if i in running and i not in controlled and case.verdict is Verdict.REGRESSED
        ]
        controlled.update(flagged)
        for i in flagged:
            control.take_control(i, at[i], look)
        if own or not flagged:
            break
    verdicts = dict(zip(ids, decided, strict=True))
    judged = sorted(controlled & set(ids))
    if own and judged:
        strict = replace(settings, alpha=settings.alpha * control.guard.control_alpha)
        against, _ = rule.decide([control.against_control(i, at[i]) for i in judged], strict)
        verdicts.update(zip(judged, against, strict=True))
    return verdicts


def sequential_suite(
    design: Design,
    first: int,
    draw: Callable[[int, int], ComparedCase],
    family: str = "every",
    control: BinaryCheck | None = None,
    cases_in: int = M,
) -> Outcome:
    """One suite through the sequential design's own functions: each look compares every case
    (the running ones at their new repeats, the stopped ones at the tables they stopped with),
    decides at the look's share of alpha, then `step` stops cases; `settle` ends the rest.
    `draw(i, n)` compares case i with its first n candidate repeats. `family="running"` is the
    trap the design avoids: each look's correction over the running cases only. With `control`,
    a running case the look calls regressed takes its concurrent control instead, and the look
    decides again with that case judged against its control (until no new case is called
    regressed against the baseline); or, with a control taken after the last look, each case
    the looks left regressed is confirmed against it then."""
    rule = get_rule(RuleName.EXACT)
    sizes = design.schedule(first)
    shares = stats.spending(sizes, design.rho)
    at = dict.fromkeys(range(cases_in), first)
    running = set(range(cases_in))
    controlled: set[int] = set()
    per_look = control if control is not None and not control.guard.after_last_look else None
    final: dict[int, CaseReport] = {}
    stops: dict[int, Stop] = {}
    for j, size in enumerate(sizes):
        for i in running:
            at[i] = size
        looked = [i for i in range(cases_in) if family == "every" or i in running]
        settings = design.look(SEQ, shares[j])
        decided = _look(
            rule, settings, [(i, at[i]) for i in looked], running, controlled, draw, per_look, j
        )
        futility = design.futility_at(j, len(sizes))
        for i in looked:
            if i in running:
                case = decided[i]
                final[i] = case
                stop = step(case, futility)
                if stop is not None:
                    stops[i] = stop
                    running.discard(i)
        if not running:
            break
    cases = [settle(final[i], stops[i], "raise --max-repeats") for i in range(cases_in)]
    if control is not None and control.guard.after_last_look:
        cases = control.confirm_after_last_look(cases, at, len(sizes) - 1)
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.verdict.value] = counts.get(case.verdict.value, 0) + 1
    outcome = Outcome(
        failed=exit_code_for(counts, strict=False) != 0,
        flagged=cases[0].verdict is Verdict.REGRESSED,
        calls=sum(at.values()),
        spent=at[0],
        inconclusive=counts.get(Verdict.INCONCLUSIVE.value, 0),
        verdict0=cases[0].verdict.value,
    )
    if control is not None:
        outcome.control_calls = int(control.control_n.sum() + control.fresh_n.sum())
        outcome.control_spent = int(control.control_n[0] + control.fresh_n[0])
        outcome.doubt0 = control.doubt_outcome.get(0, "")
        outcome.skipped = len(control.skipped)
        outcome.skipped0 = 0 in control.skipped
    return outcome


@dataclass(frozen=True)
class Sessions:
    """How a case's pass rate moves between sessions of the target (a model server's load,
    batch and state). Every session draws each case's rate from a beta distribution with the
    case's mean and intra-session correlation `rho` (a + b = (1 - rho) / rho; a case at 0 or 1
    stays there; rho 0 is the fixed rate). The deep baseline's adoption is one session, a check
    another, and with `per_look` each look of a check its own. `off`: the adoption session sits
    off, as measured once (research/statistics.md section 10): each mid-range case (mean in
    [0.3, 0.8]) adopted at its mean plus or minus U[0.15, 0.20], the sign a coin toss per case,
    clipped to [0.02, 0.98]; every other session as `rho` says."""

    rho: float = 0.0
    off: bool = False
    per_look: bool = False

    @property
    def fixed(self) -> bool:
        """Every session at the case's mean: the simulation without drift."""
        return self.rho == 0 and not self.off

    def label(self) -> str:
        label = f"rho {self.rho:g}" + (", baseline off" if self.off else "")
        return label + (", a session per look" if self.per_look else "")


def session_rates(means: np.ndarray, u: np.ndarray, rho: float) -> np.ndarray:
    """Each case's rate in each session (columns of `u`): the beta quantile `u` around the case's
    mean. Two versions of a case given the same `u` move together (a session's state pushes both
    the same way); at rho 0 every session sits at the mean."""
    rates = np.broadcast_to(means[:, None], u.shape).copy()
    if rho == 0:
        return rates
    inner = (means > 0) & (means < 1)
    total = (1 - rho) / rho
    p = means[inner, None]
    rates[inner] = scipy.stats.beta.ppf(u[inner], p * total, (1 - p) * total)
    return rates


#: Mean pass rates whose adoption sits off in an off session, how far, and the clip.
OFF_MEANS, OFF_SHIFT, OFF_CLIP = (0.3, 0.8), (0.15, 0.20), (0.02, 0.98)


@dataclass(frozen=True)
class Guard:
    """What a design does against drift. The deep-only design does nothing. `control`: a case
    the deep baseline calls regressed takes that many repeats of the baseline's own version in
    the candidate's session (with `matched`, as many as the candidate has beyond that, growing
    with its looks), and from then on is judged against that control by the same rule at each
    look's alpha: in the same family as every other case, or with `own_family` in a family of
    the controlled cases alone, at `control_alpha` times the look's alpha. `after_last_look`
    (as `check` takes it): the looks run against the deep baseline alone; each case they leave
    regressed then takes its control once, beside as many fresh candidate repeats, and stays
    regressed only when those are worse than the control (the controlled cases one family, at
    the check's alpha); with `pooled`, every repeat the candidate took is judged against the
    control, the looks' and the fresh ones, as `check` judges them. `deff_prior`: the
    baseline's n and k shrunk by the design effect 1 + (n - 1) rho of n repeats taken in one
    session. `baseline_sessions`: the deep baseline's repeats taken over that many sessions.
    `steps`: the looks of a control taken after the last look (the last is `control`), alpha
    spent across them with exponent `steps_rho`; `doubt`: the cases the looks leave inconclusive
    take one too, and with `futile` stop at the check's futility bounds (`doubt_stop` "p": as
    soon as their p of a worsening passes the bound, inconclusive or not). `drift`: the prior
    rho of the drift each case is allowed, learned from the adoption and `history` more sessions
    of the baseline's version (fresh checks of it, `HISTORY_REPEATS` each) and shrunk across the
    suite (`noisefloor.stats.drift`); a case the looks leave regressed whose drop that much drift
    does not reach is confirmed without a control. `evidence`: a case the control does not call
    regressed is unchanged only where the control pair's interval excludes a drop that matters,
    else inconclusive (`rules.sequential.settle`)."""

    control: int | None = None
    matched: bool = False
    own_family: bool = False
    control_alpha: float = 1.0
    after_last_look: bool = False
    pooled: bool = False
    deff_prior: float = 0.0
    steps: tuple[int, ...] = ()
    steps_rho: float = SPENDING_RHO
    doubt: bool = False
    futile: bool = False
    baseline_sessions: int = 1
    drift: float | None = None
    history: int = 0
    evidence: bool = False
    doubt_stop: str = "step"

    def confirm_sizes(self, candidate: int) -> list[int]:
        """The control's looks after the last look: `steps`, the last raised to what the
        design wants beside `candidate` repeats; one look of that many without steps."""
        want = self.control_repeats(candidate)
        return [m for m in self.steps if m < want] + [want]

    def control_repeats(self, candidate: int) -> int:
        """The control a case wants beside `candidate` repeats."""
        least = self.control or 0
        return max(least, candidate) if self.matched else least

    def label(self) -> str:
        if self.control is not None:
            label = (
                "control "
                + ("matched" if self.matched else "")
                + (f"{', at least ' if self.matched else ''}{self.control}" if self.control else "")
            )
            label += ", own family" if self.own_family else ""
            label += ", after the last look, beside fresh repeats" if self.after_last_look else ""
            label += ", every candidate repeat" if self.pooled else ""
            label += ", and the cases left in doubt" if self.doubt else ""
            label += ", futility stops for those" if self.futile else ""
            label += " (p alone)" if self.futile and self.doubt_stop == "p" else ""
            if self.steps:
                label += f", looks {'/'.join(map(str, self.steps))} (rho {self.steps_rho:g})"
            if self.drift is not None:
                label += f", none beyond drift (prior rho {self.drift:g}"
                label += f", {self.history} more sessions)" if self.history else ")"
            label += ", unchanged on evidence" if self.evidence else ""
            return label + (f", alpha x{self.control_alpha:g}" if self.control_alpha < 1 else "")
        if self.deff_prior:
            return f"deff {self.deff_prior:g}"
        if self.baseline_sessions > 1:
            return f"baseline over {self.baseline_sessions} sessions"
        return "deep only"


#: The guard `check` takes (docs/sequential.md, step 8): a control after the last look of each
#: case the looks leave regressed or in doubt, at looks of 5/10/20/40/80 beside fresh candidate
#: repeats, the controlled cases one family, futility stops for those in doubt; none for a drop
#: beyond the learned drift; unchanged against a control only on evidence.
CHECKS_GUARD = Guard(
    control=80,
    own_family=True,
    after_last_look=True,
    steps=(5, 10, 20, 40),
    doubt=True,
    futile=True,
    drift=DRIFT_PRIOR,
    evidence=True,
)

#: Repeats of each session of the baseline's version a store holds besides the adoption
#: (`Guard.history`): a fresh check of that version, its looks' repeats.
HISTORY_REPEATS = 20


@cache
def _drift_p(k_b: int, n_b: int, k_c: int, n_c: int, rho: float) -> float:
    return drift_p(k_b, n_b, k_c, n_c, rho)


class BinaryCheck:
    """One simulated suite's binary cases: case i's deep baseline drawn once in the adoption
    session, its candidate repeat by repeat in the check's session (or each look's), and the
    repeats of a concurrent control in the session of the look that takes them. Called as
    `check(i, n)`: case i against the deep baseline at n candidate repeats. The control and its
    fresh candidate repeats draw from `control_rng`, the store's other sessions of the baseline's
    version from `history_rng`, so that every design meets the same baselines and candidates
    whatever its control draws."""

    def __init__(
        self,
        mix: str,
        depth: int,
        sizes: list[int],
        change: tuple[float, float] | None,
        rng: np.random.Generator,
        sessions: Sessions,
        guard: Guard,
        control_rng: np.random.Generator,
        history_rng: np.random.Generator | None = None,
    ) -> None:
        cap = sizes[-1]
        pb = MIX_RATES[mix].copy() if mix in MIX_RATES else _null_rates(rng)
        m = self.m = len(pb)
        pc = pb.copy()
        if change is not None:
            pb[0], pc[0] = change
        looks = len(sizes) if sessions.per_look and not sessions.fixed else 1
        self.per_look = looks > 1
        if sessions.fixed:
            adopted, cand_rates, self.control_rates = pb, pc[:, None], pb[:, None]
        else:
            adopted = session_rates(pb, rng.random((m, 1)), sessions.rho)[:, 0]
            if sessions.off:
                shift = rng.uniform(*OFF_SHIFT, m) * rng.choice([-1.0, 1.0], m)
                mid = (pb >= OFF_MEANS[0]) & (pb <= OFF_MEANS[1])
                adopted = np.where(mid, np.clip(pb + shift, *OFF_CLIP), adopted)
            u = rng.random((m, looks))
            cand_rates = session_rates(pc, u, sessions.rho)
            self.control_rates = session_rates(pb, u, sessions.rho)
        self.kb = rng.binomial(depth, adopted)
        if guard.baseline_sessions > 1 and not sessions.fixed:
            # the same depth taken over several sessions, the first at the adoption's rate drawn
            # above, the others drawn anew: from the control's stream, so that the suite's own
            # stream (and with it every candidate) stays the deep baseline's
            share = depth // guard.baseline_sessions
            more = session_rates(
                pb, control_rng.random((m, guard.baseline_sessions - 1)), sessions.rho
            )
            self.kb = control_rng.binomial(share, adopted)
            self.kb += control_rng.binomial(share, more).sum(axis=1)
            depth = share * guard.baseline_sessions
        self.depth = depth
        segment = np.searchsorted(sizes, np.arange(cap), side="right")
        rates = cand_rates[:, segment] if self.per_look else cand_rates
        self.passes = np.cumsum(rng.random((m, cap)) < rates, axis=1)
        self.guard = guard
        self.baseline_n = depth
        if guard.deff_prior:
            self.baseline_n = max(1, round(depth / (1 + (depth - 1) * guard.deff_prior)))
        self.rho = np.zeros(m)
        if guard.drift is not None:
            self.rho = self._learned(pb, sessions, history_rng)
        self.skipped: set[int] = set()
        self.doubt_outcome: dict[int, str] = {}
        if guard.control is not None:
            most = guard.control_repeats(cap)
            self.control_u = control_rng.random((m, most))
            self.control_k = np.zeros(m, dtype=int)
            self.control_n = np.zeros(m, dtype=int)
            self.fresh_n = np.zeros(m, dtype=int)
            if guard.after_last_look:
                self.fresh_u = control_rng.random((m, most))
                self.last_rates = cand_rates[:, -1]

    def _learned(
        self, means: np.ndarray, sessions: Sessions, history_rng: np.random.Generator | None
    ) -> np.ndarray:
        """Each case's rho as the check learns it: from the adoption and the store's other
        sessions of the baseline's version, each in a session of its own."""
        held = self.guard.history
        assert self.guard.drift is not None
        found: dict[str, Dispersion | None] = {}
        k_more = np.zeros((self.m, 0), dtype=int)
        if held:
            assert history_rng is not None
            rates = (
                np.broadcast_to(means[:, None], (self.m, held))
                if sessions.fixed
                else session_rates(means, history_rng.random((self.m, held)), sessions.rho)
            )
            k_more = history_rng.binomial(HISTORY_REPEATS, rates)
        for i in range(self.m):
            kept = [(int(self.kb[i]), self.depth)]
            kept += [(int(k), HISTORY_REPEATS) for k in k_more[i]]
            found[str(i)] = dispersion(kept)
        weight = prior_weight(DRIFT_PRIOR_SESSIONS, DRIFT_PRIOR_REPEATS)
        spread = learned_spread(found, self.guard.drift, weight)
        return np.array([spread[str(i)].rho for i in range(self.m)])

    def __call__(self, i: int, n: int) -> ComparedCase:
        nb = self.baseline_n
        kb = round(int(self.kb[i]) * nb / self.depth)
        return _named(_pair_compare(kb, nb, int(self.passes[i, n - 1]), n), i)

    def beyond_drift(self, i: int, case: CaseReport, n: int) -> bool:
        """Whether case i, regressed at n candidate repeats, is so even if the candidate's
        session sat as far from the adoption's as the case's learned drift allows: its p
        against that drift within the threshold of the look that decided it."""
        (scorer,) = case.scorers
        threshold = scorer.evidence.threshold
        if threshold is None:
            return False
        nb = self.baseline_n
        kb = round(int(self.kb[i]) * nb / self.depth)
        p = _drift_p(kb, nb, int(self.passes[i, n - 1]), n, round(float(self.rho[i]), 6))
        return significant(p, threshold)

    def take_control(self, i: int, n: int, look: int, exact: int | None = None) -> None:
        """Case i's control, up to what the design wants beside n candidate repeats (or `exact`
        repeats), taken in the session of look `look`."""
        want = self.guard.control_repeats(n) if exact is None else exact
        have = int(self.control_n[i])
        if want <= have:
            return
        rate = self.control_rates[i, look if self.per_look else 0]
        self.control_k[i] += int(np.sum(self.control_u[i, have:want] < rate))
        self.control_n[i] = want

    def confirm_after_last_look(
        self, cases: list[CaseReport], at: dict[int, int], last_look: int
    ) -> list[CaseReport]:
        """Each case the looks left regressed takes its control and as many fresh candidate
        repeats beside it, in the last look's session, and stays regressed only when those are
        worse than the control (the rule's decide over the controlled cases, at the check's
        alpha); else its verdict is the one against the control. With `drift`, a regressed case
        beyond its learned drift takes none; with `evidence`, one the control does not call
        regressed is unchanged only where the pair's interval excludes a drop that matters."""
        judged = (
            {Verdict.REGRESSED, Verdict.INCONCLUSIVE} if self.guard.doubt else {Verdict.REGRESSED}
        )
        flagged = [i for i, case in enumerate(cases) if case.verdict in judged]
        if self.guard.drift is not None:
            self.skipped = {
                i
                for i in flagged
                if cases[i].verdict is Verdict.REGRESSED and self.beyond_drift(i, cases[i], at[i])
            }
            flagged = [i for i in flagged if i not in self.skipped]
        if not flagged:
            return cases
        sizes = {i: self.guard.confirm_sizes(at[i]) for i in flagged}
        looks = max(len(v) for v in sizes.values())
        running = set(flagged)
        tables: dict[int, ComparedCase] = {}
        verdicts: dict[int, CaseReport] = {}
        for j in range(looks):
            for i in sorted(running):
                m = sizes[i][min(j, len(sizes[i]) - 1)]
                self.control_n[i] = 0
                self.control_k[i] = 0
                self.take_control(i, m, last_look, exact=m)
                fresh = int(np.sum(self.fresh_u[i, :m] < self.last_rates[i]))
                self.fresh_n[i] = m
                kc, nc = fresh, m
                if self.guard.pooled:  # the looks' repeats count beside the fresh ones
                    kc, nc = int(self.passes[i, at[i] - 1]) + fresh, at[i] + m
                tables[i] = _named(_pair_compare(int(self.control_k[i]), m, kc, nc), i)
            share = stats.spending(sizes[flagged[0]], self.guard.steps_rho)
            share_j = share[min(j, len(share) - 1)] if len(share) > 1 else 1.0
            settings = replace(SEQ, alpha=SEQ.alpha * share_j)
            decided, _ = get_rule(RuleName.EXACT).decide([tables[i] for i in flagged], settings)
            bound = FUTILITY[min(j, len(FUTILITY) - 1)]
            for i, case in zip(flagged, decided, strict=True):
                if i not in running:
                    continue
                last = j >= len(sizes[i]) - 1
                futile = False
                if self.guard.futile and cases[i].verdict is Verdict.INCONCLUSIVE:
                    if self.guard.doubt_stop == "p":
                        futile = case.verdict is not Verdict.REGRESSED and doubt_p(case) > bound
                    else:
                        futile = step(case, bound) is not None
                if case.verdict is Verdict.REGRESSED or last or futile:
                    verdicts[i] = case
                    running.discard(i)
            if not running:
                break
        confirmed = list(cases)
        for i in flagged:
            verdict = verdicts[i]
            if self.guard.evidence and verdict.verdict is Verdict.UNCHANGED:
                verdict = settle(verdict, Stop.CAP, "")
            if cases[i].verdict is Verdict.INCONCLUSIVE:
                self.doubt_outcome[i] = verdict.verdict.value
            confirmed[i] = verdict
        return confirmed

    def against_control(self, i: int, n: int) -> ComparedCase:
        k, m = int(self.control_k[i]), int(self.control_n[i])
        return _named(_pair_compare(k, m, int(self.passes[i, n - 1]), n), i)


def continuous_draws(
    mix: str, depth: int, cap: int, shift: float | None, rng: np.random.Generator
) -> Callable[[int, int], ComparedCase]:
    """Noisy cases draw N(0, 1) scores (case 0 shifted down by `shift` sd); the rest are constant."""
    m = cases_of(mix)
    noisy = rng.random(m) < NOISY_SHARE[mix]
    if shift is not None:
        noisy[0] = True
    base = rng.normal(size=(m, depth))
    cand = rng.normal(size=(m, cap))
    if shift is not None:
        cand[0] -= shift
    rule = get_rule(RuleName.EXACT)

    def draw(i: int, n: int) -> ComparedCase:
        if not noisy[i]:
            return _named(_constant_pair(depth, n), i)
        b, c = list(map(float, base[i])), list(map(float, cand[i, :n]))
        case = rule.compare("c", _band("c", depth, depth, b), _band("c", n, n, c), SEQ)
        case.case_id = f"case-{i:02d}"
        return case

    return draw


@cache
def _constant_pair(nb: int, nc: int) -> bytes:
    rule = get_rule(RuleName.EXACT)
    return orjson.dumps(
        rule.compare(
            "c", _band("c", nb, nb, [0.0] * nb), _band("c", nc, nc, [0.0] * nc), SEQ
        ).dump()
    )


@dataclass(frozen=True)
class Variant:
    """One sequential design the bench compares: a mix, the baseline's depth, the cap, the
    spending function's exponent, which cases each look's correction counts, how pass rates
    move between sessions, and what the design does against that drift."""

    mix: str
    depth: int
    cap: int
    rho: float
    family: str = "every"
    sessions: Sessions = Sessions()
    guard: Guard = Guard()

    def design(self) -> Design:
        return Design(max_repeats=self.cap, baseline_repeats=self.depth, rho=self.rho)


def sequential_cell(cell: tuple[Variant, int, int, int, str]) -> list[Outcome]:
    """One cell of a sequential row: a variant, and nothing changed (binary or continuous), or
    one change; its own random stream. Sessions and guards act on binary cases only."""
    variant, first, suites, seed, what = cell
    mix, depth, cap = variant.mix, variant.depth, variant.cap
    design = variant.design()
    sizes = design.schedule(first)
    rng = np.random.default_rng(seed)
    control_rng = np.random.default_rng([seed, 1])
    history_rng = np.random.default_rng([seed, 2])
    changes = {label: (p_b, p_c) for label, p_b, p_c in SEQ_CHANGES}
    m = cases_of(mix)
    if what in ("null continuous", f"{SHIFT_SD:g} sd"):
        shift = None if what == "null continuous" else SHIFT_SD
        return [
            sequential_suite(
                design,
                first,
                continuous_draws(mix, depth, cap, shift, rng),
                variant.family,
                cases_in=m,
            )
            for _ in range(suites)
        ]
    outcomes = []
    guard = variant.guard
    for _ in range(suites):
        check = BinaryCheck(
            mix,
            depth,
            sizes,
            changes.get(what),
            rng,
            variant.sessions,
            guard,
            control_rng,
            history_rng,
        )
        control = check if guard.control is not None else None
        outcomes.append(sequential_suite(design, first, check, variant.family, control, m))
    return outcomes


SEQ_CELLS = ["null binary", "null continuous", *(c[0] for c in SEQ_CHANGES), f"{SHIFT_SD:g} sd"]


def sequential_row(variant: Variant, first: int, results: dict[str, list[Outcome]]) -> list[str]:
    """A variant's row: FAR, power per change, repeats per unchanged case and on the changed
    one, and the baseline's one-time calls."""
    depth = variant.depth
    looks = "/".join(map(str, variant.design().schedule(first)))
    row = [variant.mix, f"{depth}", looks, f"{variant.rho:g}", variant.family]
    row.append(f"{100 * np.mean([o.failed for o in results['null binary']]):.1f}%")
    row.append(f"{100 * np.mean([o.failed for o in results['null continuous']]):.1f}%")
    flagged, spent = _per_change(results, first, lambda o: o.spent)
    row.extend(flagged)
    row.append(f"{100 * np.mean([o.flagged for o in results[f'{SHIFT_SD:g} sd']]):.1f}%")
    m = cases_of(variant.mix)
    row.append(f"{np.mean([o.calls for o in results['null binary']]) / m:.2f}")
    row.append(" / ".join(spent))
    row.append(f"{depth * m}")
    return row


def _per_change(
    results: dict[str, list[Outcome]], first: int, spent_of: Callable[[Outcome], float]
) -> tuple[list[str], list[str]]:
    """Per change, the share of suites that flag it (a total break only when the first look
    decides it) and the mean repeats `spent_of` counts on the changed case."""
    flagged, spent = [], []
    for label, _, _ in SEQ_CHANGES:
        hits = [o.flagged for o in results[label]]
        if label == "1.0->0.0":  # it must be decided at the first look
            hits = [o.flagged and o.spent <= first for o in results[label]]
        flagged.append(f"{100 * np.mean(hits):.1f}%")
        spent.append(f"{np.mean([spent_of(o) for o in results[label]]):.1f}")
    return flagged, spent


#: The cells of a drift row: binary only (sessions move pass rates).
DRIFT_CELLS = ["null binary", *(c[0] for c in SEQ_CHANGES)]


def drift_row(variant: Variant, first: int, results: dict[str, list[Outcome]]) -> list[str]:
    """A row of the drift table: a design under one way sessions drift, with its FAR, power
    per change, calls per unchanged case (controls included, and of them the controls'), and
    the repeats spent on the changed case (controls included)."""
    null = results["null binary"]
    row = [variant.mix, variant.guard.label(), variant.sessions.label()]
    row.append(f"{100 * np.mean([o.failed for o in null]):.1f}%")
    changed = all(c[0] in results for c in SEQ_CHANGES)
    flagged, spent = (
        _per_change(results, first, lambda o: o.spent + o.control_spent)
        if changed
        else (["-"] * len(SEQ_CHANGES), ["-"] * len(SEQ_CHANGES))
    )
    row.extend(flagged)
    m = cases_of(variant.mix)
    row.append(f"{np.mean([o.calls + o.control_calls for o in null]) / m:.2f}")
    row.append(f"{np.mean([o.control_calls for o in null]) / m:.2f}")
    row.append(" / ".join(spent))
    row.append(f"{np.mean([o.inconclusive for o in null]):.2f}")
    row.append(f"{np.mean([o.skipped for o in null]):.3f}")
    if not changed:
        return [*row, "-", "-", "-", "-"]
    row.append(
        " / ".join(_share_of(results[c[0]], lambda o: o.skipped0, o_flagged) for c in SEQ_CHANGES)
    )
    for verdict in (Verdict.UNCHANGED, Verdict.INCONCLUSIVE):
        row.append(
            " / ".join(
                f"{100 * np.mean([o.verdict0 == verdict.value for o in results[c[0]]]):.1f}%"
                for c in SEQ_CHANGES
            )
        )
    row.append(" / ".join(_doubt(results[label]) for label in DOUBT_CHANGES))
    return row


#: The real drops of 0.2-0.3 whose cases left in doubt a row says the controls' verdicts of.
DOUBT_CHANGES = ("0.9->0.5", "0.7->0.4", "0.5->0.2")


def o_flagged(outcome: Outcome) -> bool:
    return outcome.flagged


def _share_of(
    outcomes: list[Outcome], which: Callable[[Outcome], bool], among: Callable[[Outcome], bool]
) -> str:
    """The share of the outcomes `among` selects that `which` holds for ("-": none selected)."""
    chosen = [o for o in outcomes if among(o)]
    return f"{100 * np.mean([which(o) for o in chosen]):.0f}%" if chosen else "-"


def _doubt(outcomes: list[Outcome]) -> str:
    """How the controls of a changed case left in doubt ended: regressed, unchanged and
    inconclusive, as shares of those suites, and their share of every suite."""
    doubted = [o.doubt0 for o in outcomes if o.doubt0]
    if not doubted:
        return "-"
    shares = [
        f"{100 * doubted.count(v.value) / len(doubted):.0f}%"
        for v in (Verdict.REGRESSED, Verdict.UNCHANGED, Verdict.INCONCLUSIVE)
    ]
    return f"{100 * len(doubted) / len(outcomes):.1f}%: " + " ".join(shares)


def share(
    fn: Callable[[np.random.Generator], tuple[bool, bool]],
    suites: int,
    rng: np.random.Generator,
    which: int,
) -> float:
    return sum(fn(rng)[which] for _ in range(suites)) / suites


def row_of(cell: tuple[RuleName, int, int, int]) -> list[str]:
    """One table row: a rule at one N, with its own random stream."""
    rule, n, suites, seed = cell
    rng = np.random.default_rng(seed)
    row = [rule.value, str(n)]
    row.append(f"{100 * share(lambda r: binary_suite(rule, n, r, None), suites, rng, 0):.1f}%")
    row.append(f"{100 * share(lambda r: continuous_suite(rule, n, r, None), suites, rng, 0):.1f}%")
    for _, p_b, p_c in BINARY_CHANGES:
        row.append(
            f"{100 * share(lambda r, pb=p_b, pc=p_c: binary_suite(rule, n, r, (pb, pc)), suites, rng, 1):.1f}%"
        )
    row.append(
        f"{100 * share(lambda r: continuous_suite(rule, n, r, SHIFT_SD), suites, rng, 1):.1f}%"
    )
    return row


def _control_guard(value: str) -> Guard:
    """`M` (a control of M repeats), `matched` (as many as the candidate's), `matched:M` (as
    many, at least M), then `,own` for a family of the controlled cases alone, `,alpha=S` for
    a share S of the look's alpha against the control, `,after` for a control taken after the
    last look beside fresh candidate repeats, and with it `,pooled` to judge every candidate
    repeat against the control, `,steps=M/M` for its looks before the last (`,srho=R` their
    spending exponent), `,doubt` for the cases left in doubt too, `,futile` for their futility
    stops (`,stop=p` on the p of a worsening alone), `,drift[=R]` for no control beyond the drift
    learned from a prior rho R (default `settings.DRIFT_PRIOR`) and `,history=H` more sessions,
    and `,evidence` for an unchanged verdict only where the control's interval excludes a drop
    that matters (`Guard`)."""
    spec, *options = value.split(",")
    own, after, pooled, alpha = False, False, False, 1.0
    steps: tuple[int, ...] = ()
    steps_rho = SPENDING_RHO
    doubt = False
    futile = False
    drift: float | None = None
    history = 0
    evidence = False
    doubt_stop = "step"
    for option in options:
        if option == "own":
            own = True
        elif option == "after":
            after = True
        elif option == "pooled":
            pooled = True
        elif option.startswith("alpha="):
            alpha = float(option.removeprefix("alpha="))
        elif option == "doubt":
            doubt = True
        elif option == "futile":
            futile = True
        elif option.startswith("steps="):
            steps = tuple(int(m) for m in option.removeprefix("steps=").split("/"))
        elif option.startswith("srho="):
            steps_rho = float(option.removeprefix("srho="))
        elif option == "drift":
            drift = DRIFT_PRIOR
        elif option.startswith("drift="):
            drift = float(option.removeprefix("drift="))
        elif option.startswith("history="):
            history = int(option.removeprefix("history="))
        elif option == "evidence":
            evidence = True
        elif option == "stop=p":
            doubt_stop = "p"
        else:
            raise argparse.ArgumentTypeError(
                f"{value}: {option!r} is not 'own', 'after', 'pooled', 'alpha=S', 'steps=M/M', "
                "'srho=R', 'doubt', 'futile', 'stop=p', 'drift[=R]', 'history=H' or 'evidence'"
            )
    matched, _, least = spec.partition(":") if spec.startswith("matched") else ("", "", spec)
    repeats = int(least) if least else 0
    if repeats < 0 or not (repeats or matched) or not 0 < alpha <= 1 or (alpha < 1 and not own):
        raise argparse.ArgumentTypeError(
            f"{value}: no control, or an alpha share outside (0, 1] or without a family of its own"
        )
    return Guard(
        control=repeats,
        matched=bool(matched),
        own_family=own or after,
        control_alpha=alpha,
        after_last_look=after,
        pooled=pooled and after,
        steps=steps if after else (),
        steps_rho=steps_rho,
        doubt=doubt and after,
        futile=futile and after,
        drift=drift if after else None,
        history=history,
        evidence=evidence and after,
        doubt_stop=doubt_stop,
    )


def drift_table(pool: multiprocessing.pool.Pool, args: argparse.Namespace) -> None:
    """The deep-only design and the guarded ones, under every drift cell, side by side. A cell's
    random stream is that of the same mix and change in the sequential table: at rho 0 the deep-only
    design prints the sequential table's binary figures, and every design meets the same draws
    of baselines and candidates."""
    drifts = [Sessions(rho, per_look=args.look_sessions) for rho in args.drift]
    if args.off:
        drifts.append(Sessions(0.0, off=True, per_look=args.look_sessions))
    guards = [
        *([] if args.guarded_only else [Guard()]),
        *args.control,
        *(Guard(deff_prior=rho) for rho in args.deff_prior),
        *(Guard(baseline_sessions=k) for k in args.baseline_sessions),
    ]
    print(
        "\n# drift between sessions: each session draws a case's pass rate from a beta around its "
        "mean with intra-session correlation rho; the adoption of the deep baseline is one "
        "session, each check another"
        + (", each look its own" if args.look_sessions else "")
        + "; baseline off = the adoption session puts each case with a mean in [0.3, 0.8] at its "
        "mean +/- U[0.15, 0.20] (random sign); calls/case = mean candidate repeats per case on "
        "unchanged suites, controls included (of them: controls); spent = on the changed case, "
        "controls included; inconclusive = cases left inconclusive per unchanged suite; "
        "confirmed beyond drift = cases per unchanged suite regressed with no control; of the "
        "flagged, without a control = the changed case's share of its regressions confirmed "
        "with none; missed = suites whose changed case ended unchanged, or inconclusive; in "
        "doubt = suites whose changed case took a control in doubt, and how those ended\n"
    )
    head = [
        "mix",
        "design",
        "sessions",
        "FAR binary",
        *(f"flag {c[0]}" for c in SEQ_CHANGES),
        "calls/case",
        "of them controls",
        "spent " + " / ".join(c[0] for c in SEQ_CHANGES),
        "inconclusive",
        "confirmed beyond drift",
        "of the flagged, without a control",
        "missed, unchanged",
        "missed, inconclusive",
        "in doubt " + " / ".join(DOUBT_CHANGES) + ": regressed unchanged inconclusive",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    base = args.depth[0], args.cap[0], args.rho[0]
    variants = [
        Variant(mix, *base, sessions=sessions, guard=guard)
        for mix in args.mixes
        for guard in guards
        for sessions in drifts
    ]

    def measured(variant: Variant) -> list[str]:
        """The cells of a row: with --null-under-drift, a drifting row's unchanged one alone."""
        if args.null_under_drift and not variant.sessions.fixed:
            return ["null binary"]
        return DRIFT_CELLS

    cells = [
        (variant, args.first, args.suites, _sequential_seed(args.seed, variant.mix, what), what)
        for variant in variants
        for what in measured(variant)
    ]
    outcomes = pool.imap(sequential_cell, cells, chunksize=1)
    for variant in variants:
        results = {what: next(outcomes) for what in measured(variant)}
        print("| " + " | ".join(drift_row(variant, args.first, results)) + " |", flush=True)


def _sequential_seed(seed: int, mix: str, what: str) -> int:
    """The seed of a mix's cell in the sequential table (its default variant, both mixes)."""
    return seed * 7919 + list(NOISY_SHARE).index(mix) * len(SEQ_CELLS) + SEQ_CELLS.index(what)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suites", type=int, default=2000, help="simulated suites per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, nargs="+", default=[3, 5, 10])
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument(
        "--rules", nargs="*", default=[r.value for r in RULES], help="rules of the fixed rows"
    )
    parser.add_argument(
        "--depth",
        type=int,
        nargs="+",
        default=[BASELINE_REPEATS],
        help=f"deep baseline repeats of the sequential rows (default {BASELINE_REPEATS})",
    )
    parser.add_argument(
        "--cap",
        type=int,
        nargs="+",
        default=[MAX_REPEATS],
        help=f"candidate repeats per case at most (default {MAX_REPEATS})",
    )
    parser.add_argument(
        "--rho",
        type=float,
        nargs="+",
        default=[SPENDING_RHO],
        help=f"exponents of the alpha-spending function (default {SPENDING_RHO:g})",
    )
    parser.add_argument(
        "--family",
        nargs="+",
        choices=["every", "running"],
        default=["every"],
        help="which cases each look's correction counts: every case of the suite (the design), "
        "or only those still running (the trap it avoids)",
    )
    parser.add_argument("--first", type=int, default=REPEATS, help="the first look's repeats")
    parser.add_argument(
        "--mixes",
        nargs="*",
        default=["current", "noisy"],
        help="case mixes of the sequential rows: current, noisy, noisy-21 (the noisy mix in 21 "
        "cases)",
    )
    parser.add_argument(
        "--drift",
        type=float,
        nargs="+",
        help="intra-session correlations of pass rates: prints the drift table (binary cells, "
        "the deep baseline alone and the designs --control and --deff-prior name) in place of the "
        "sequential one",
    )
    parser.add_argument(
        "--off",
        action="store_true",
        help="adds a drift cell whose adoption session sits off (Sessions), every other at the mean",
    )
    parser.add_argument(
        "--look-sessions",
        action="store_true",
        help="each look of a check is its own session (default: the whole check is one)",
    )
    parser.add_argument(
        "--control",
        type=_control_guard,
        nargs="+",
        default=[],
        help="designs with a concurrent control: M repeats, 'matched' (as many as the "
        "candidate's, growing with its looks) or 'matched:M' (at least M); ',own' judges the "
        "controlled cases in a family of their own",
    )
    parser.add_argument(
        "--baseline-sessions",
        type=int,
        nargs="+",
        default=[],
        help="designs whose deep baseline is taken over this many sessions, its depth split "
        "evenly (with --off, the first session sits off)",
    )
    parser.add_argument(
        "--null-under-drift",
        action="store_true",
        help="the drift table measures a row whose sessions drift (or whose adoption sits off) on "
        "unchanged suites alone: its false-alarm rate and cost, the power columns left empty",
    )
    parser.add_argument(
        "--guarded-only",
        action="store_true",
        help="the drift table leaves out the deep baseline alone (its rows do not depend on the "
        "guards: print them once)",
    )
    parser.add_argument(
        "--deff-prior",
        type=float,
        nargs="+",
        default=[],
        help="designs whose baseline is shrunk by the design effect at this correlation",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    head = (
        ["rule", "N", "FAR binary", "FAR contin."]
        + [f"flag {c[0]}" for c in BINARY_CHANGES]
        + [f"flag {SHIFT_SD:g} sd"]
    )
    print(
        f"# {args.suites} simulated {M}-case suites per cell, seed {args.seed}, alpha 0.05; "
        "FAR = share of unchanged suites that fail; flag = share of suites whose changed case is regressed\n"
    )
    cells = [
        (rule, n, args.suites, args.seed * 1000 + i)
        for i, (rule, n) in enumerate(
            (rule, n) for rule in map(RuleName, args.rules) for n in args.repeats
        )
    ]
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        if cells:
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for row in pool.imap(row_of, cells):
                print("| " + " | ".join(row) + " |", flush=True)
        if args.drift:
            drift_table(pool, args)
        elif args.mixes:
            print(
                "\n# the sequential design of `check`: looks at growing candidate repeats against "
                "a deep baseline; mixes: current (70% of cases at 1.0, 15% at U[0.8, 0.99], 15% at "
                "U[0.3, 0.8]; continuous 30% noisy) and noisy (15 cases at 1.0, 10 at 0.9, 10 at "
                "0.7, 10 at 0.5, 5 at 0.2; continuous 70% noisy); 1.0->0.0 counts only a "
                "regression at the first look; calls = mean candidate repeats per case on "
                "unchanged binary suites; spent = mean candidate repeats on the changed case; "
                "baseline = the one-time calls of the deep baseline\n"
            )
            seq_head = [
                "mix",
                "baseline",
                "looks",
                "rho",
                "family",
                "FAR binary",
                "FAR contin.",
                *(f"flag {c[0]}" for c in SEQ_CHANGES),
                f"flag {SHIFT_SD:g} sd",
                "calls/case",
                "spent " + " / ".join(c[0] for c in SEQ_CHANGES),
                "baseline calls",
            ]
            print("| " + " | ".join(seq_head) + " |")
            print("|" + "---|" * len(seq_head))
            variants = [
                Variant(mix, depth, cap, rho, family)
                for mix in args.mixes
                for depth in args.depth
                for cap in args.cap
                for rho in args.rho
                for family in args.family
            ]
            seq_cells = [
                (variant, args.first, args.suites, args.seed * 7919 + i, what)
                for i, (variant, what) in enumerate(
                    (variant, what) for variant in variants for what in SEQ_CELLS
                )
            ]
            outcomes = pool.map(sequential_cell, seq_cells, chunksize=1)
            for variant in variants:
                results = {
                    cell[4]: got
                    for cell, got in zip(seq_cells, outcomes, strict=True)
                    if cell[0] == variant
                }
                row = sequential_row(variant, args.first, results)
                print("| " + " | ".join(row) + " |", flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
