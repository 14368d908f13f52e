"""One command's settings resolved once: a flag over its variable over the suite's defaults over
the built-in default, with a check's design fixed or sequential and never left to decide."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest

from noisefloor.errors import UsageError
from noisefloor.settings import (
    BASELINE_REPEATS,
    EXECUTOR,
    JOBS,
    LOCK_TIMEOUT_S,
    MAX_REPEATS,
    STORE_ROOT,
    RuleName,
    RuleSettings,
)
from noisefloor.settings.design import Design, Fixed, Sequential
from noisefloor.settings.resolved import resolve

SUITE = SimpleNamespace(
    min_effect=0.3,
    suspect_drop=None,
    max_repeats=30,
    baseline_repeats=None,
    baseline_max_age="2h",
)


def test_nothing_given_is_every_built_in_default() -> None:
    resolved = resolve({}, {})
    assert resolved.rule == RuleSettings()
    assert resolved.design == Design()
    assert isinstance(resolved.design.candidate, Sequential)
    assert (resolved.sampling.jobs, resolved.sampling.executor) == (JOBS, EXECUTOR)
    assert (resolved.store.root, resolved.store.lock_timeout_s) == (STORE_ROOT, LOCK_TIMEOUT_S)


def test_a_flag_wins_over_its_variable_which_wins_over_the_suite_and_the_target() -> None:
    environ = {
        "NOISEFLOOR_ROOT": "env-root",
        "NOISEFLOOR_JOBS": "3",
        "NOISEFLOOR_EXECUTOR": "dask://env:1",
        "NOISEFLOOR_LOCK_TIMEOUT": "5",
    }
    from_env = resolve({}, environ, SUITE, target_jobs=8)
    assert from_env.store.root == "env-root" and from_env.store.lock_timeout_s == 5
    assert (from_env.sampling.jobs, from_env.sampling.executor) == (3, "dask://env:1")
    flags = {"root": "r", "jobs": 2, "executor": "local", "lock_timeout": 1.0, "fresh": True}
    flagged = resolve(flags, environ, SUITE, target_jobs=8)
    assert (flagged.store.root, flagged.store.lock_timeout_s) == ("r", 1.0)
    assert (flagged.sampling.jobs, flagged.sampling.executor, flagged.sampling.fresh) == (
        2,
        "local",
        True,
    )
    assert resolve({}, {}, SUITE, target_jobs=8).sampling.jobs == 8


def test_the_design_takes_the_flags_then_the_suites_defaults() -> None:
    design = resolve({"max_calls": 40, "max_cost": Decimal("0.5")}, {}, SUITE).design
    assert design.max_repeats == 30 and design.baseline_repeats == BASELINE_REPEATS
    assert design.baseline_max_age_s == 7200 and design.max_calls == 40
    assert design.max_cost == Decimal("0.5")
    flagged = resolve({"max_repeats": 12, "baseline_repeats": 7}, {}, SUITE).design
    assert (flagged.max_repeats, flagged.baseline_repeats) == (12, 7)
    assert resolve({}, {}).design.max_repeats == MAX_REPEATS


def test_repeats_given_make_the_design_fixed() -> None:
    fixed = resolve({"repeats": 9}, {}).design
    assert fixed.candidate == Fixed(9) and fixed.fixed_repeats == 9
    assert not fixed.applies(RuleSettings(), [9])
    sequential = resolve({}, {}).design
    assert sequential.fixed_repeats is None and sequential.applies(RuleSettings(), [5])
    assert not sequential.applies(RuleSettings(rule=RuleName.BAND), [5])


def test_the_rule_settings_take_the_suites_defaults() -> None:
    rule = resolve({"rule": "band", "alpha": None}, {}, SUITE).rule
    assert rule.rule is RuleName.BAND and rule.min_effect == 0.3
    assert rule.alpha == RuleSettings.alpha


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("NOISEFLOOR_JOBS", "many", "NOISEFLOOR_JOBS: must be a whole number, got 'many'"),
        ("NOISEFLOOR_JOBS", "0", "NOISEFLOOR_JOBS: must be at least 1, got 0"),
        ("NOISEFLOOR_LOCK_TIMEOUT", "-1", "NOISEFLOOR_LOCK_TIMEOUT must be a number of seconds"),
    ],
)
def test_a_variable_with_a_wrong_value_is_a_usage_error(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        resolve({}, {name: value})


def test_the_top_level_root_help_names_the_settings_default() -> None:
    # the top-level parser reads no settings (`--help` stays fast): its text must agree with them
    from noisefloor.cli.parser import build_parser

    assert f"default {STORE_ROOT})" in build_parser("").format_help()
