"""Settings resolved once: flags over the suite's defaults over the built-in defaults, per scorer."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from noisefloor.settings import (
    MIN_EFFECT,
    RuleName,
    RuleSettings,
    ScorerGate,
    resolve_settings,
)

SUITE = SimpleNamespace(min_effect=0.3, suspect_drop=0.4)


def test_a_flag_wins_over_the_suite_which_wins_over_the_default() -> None:
    flagged = resolve_settings({"min_effect": 0.5, "suspect_drop": None}, SUITE)
    assert (flagged.min_effect, flagged.suspect_drop) == (0.5, 0.4)
    assert resolve_settings({}, SimpleNamespace(min_effect=None, suspect_drop=None)) == (
        RuleSettings()
    )
    assert resolve_settings({"rule": "wilson", "min_valid": None}).rule is RuleName.WILSON


@pytest.mark.parametrize("rule", list(RuleName))
def test_without_flag_or_suite_each_rule_takes_its_documented_min_effect(rule: RuleName) -> None:
    settings = resolve_settings({"rule": rule})
    effective = settings.scorer("0:contains", continuous=rule is RuleName.BAND)
    documented = {RuleName.EXACT: 0.10, RuleName.BAND: 0.0, RuleName.WILSON: 0.20}[rule]
    shown = effective.value_min_effect if rule is RuleName.BAND else effective.min_effect
    assert shown == MIN_EFFECT[rule] == documented


def test_a_scorers_own_threshold_is_in_its_own_units() -> None:
    gates = {"0:contains": ScorerGate(min_effect=0.3, suspect_drop=0.5)}
    exact = RuleSettings(min_effect=0.15).for_case(gates)
    # a pass/fail scorer: its own min_effect is a pass rate
    assert exact.scorer("0:contains") == exact.scorer("0:contains", continuous=False)
    assert (exact.scorer("0:contains").min_effect, exact.scorer("0:contains").suspect_drop) == (
        0.3,
        0.5,
    )
    # a continuous scorer: in score units, so the pass-rate threshold stays the rule-wide one
    continuous = exact.scorer("0:contains", continuous=True)
    assert (continuous.min_effect, continuous.value_min_effect) == (0.15, 0.3)
    # a scorer without its own: the rule-wide ones
    other = exact.scorer("1:json_valid")
    assert (other.min_effect, other.value_min_effect, other.suspect_drop) == (0.15, 0.0, 0.2)
    band = RuleSettings(rule=RuleName.BAND, min_effect=2.0).for_case(gates)
    assert band.scorer("0:contains").value_min_effect == 0.3
    assert band.scorer("1:json_valid").value_min_effect == 2.0
    # the quarantine-lane table has one threshold for every scorer
    wilson = RuleSettings(rule=RuleName.WILSON).for_case(gates)
    assert wilson.scorer("0:contains").min_effect == 0.20


def test_config_leaves_the_gates_out_and_keeps_n_min_for_the_report() -> None:
    settings = RuleSettings(min_valid=4).for_case({"0:contains": ScorerGate(min_effect=0.3)})
    config = settings.config()
    assert "gates" not in config
    assert config["n_min"] == config["min_valid"] == 4
    assert config == RuleSettings(min_valid=4).config()
