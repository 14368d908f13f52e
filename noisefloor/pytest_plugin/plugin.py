"""The plugin's entry (`pytest11`): its options, its marker and its fixtures, inert unless
`--noisefloor` is given or the ini sets `noisefloor = true`.

Loaded by every pytest run of a project that installs noisefloor, so it imports nothing heavy
until a session turns it on (`session.py`, registered from `pytest_configure`).
"""

from __future__ import annotations

import pytest

from noisefloor.pytest_plugin.fixtures import SESSION_PLUGIN, noisefloor_repeat, noisefloor_score

__all__ = ["active", "noisefloor_repeat", "noisefloor_score"]

_MARKER = (
    "noisefloor(repeats=None, min_effect=None, max_repeats=None, scores=None, timeout_s=None, "
    "min_pass_rate=None): with --noisefloor, the test runs once per repeat, and it fails only "
    "when its pass rate regressed (or it broke) against the stored baseline, or is confidently "
    "below min_pass_rate; the marked tests of a session share its false-alarm rate"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("noisefloor", "noisefloor: a test fails when its pass rate regressed")
    group.addoption(
        "--noisefloor",
        action="store_true",
        default=None,
        help="sample every test marked @pytest.mark.noisefloor and judge it against its baseline",
    )
    group.addoption(
        "--noisefloor-fresh",
        action="store_true",
        help="take new samples instead of the stored ones of this version (as `check --fresh`)",
    )
    group.addoption(
        "--noisefloor-rule",
        metavar="RULE",
        help="the decision rule: exact (default), band or wilson (as `check --rule`)",
    )
    group.addoption(
        "--noisefloor-max-calls",
        metavar="N",
        type=int,
        help="repeats a test's sequential check takes at most (as `check --max-calls`)",
    )
    group.addoption(
        "--noisefloor-alpha",
        metavar="RATE",
        type=float,
        help="the session's false-alarm rate, which its marked tests share (default 0.05; as "
        "`check --alpha`, whose suite's cases share it)",
    )
    group.addoption(
        "--noisefloor-adopt",
        action="store_true",
        help="adopt a baseline for a test that has none even when CI is set (as `check "
        "--adopt`); without it, such a test fails in CI",
    )
    group.addoption(
        "--noisefloor-strict",
        action="store_true",
        help="an inconclusive test fails instead of passing with a warning",
    )
    parser.addini("noisefloor", "sample the marked tests (as --noisefloor)", type="bool")
    parser.addini(
        "noisefloor_fingerprint",
        "globs (relative to the rootdir) of the files that make up the tests' version; "
        "default: every file git tracks",
        type="linelist",
    )
    parser.addini(
        "noisefloor_root",
        "the store, relative to the rootdir (default: NOISEFLOOR_ROOT, else .noisefloor)",
    )
    parser.addini(
        "noisefloor_baseline_repeats",
        "the deep baseline's repeats per test (as --baseline-repeats; default 100)",
    )
    parser.addini(
        "noisefloor_alpha",
        "the session's false-alarm rate, which its marked tests share (as --noisefloor-alpha; "
        "default 0.05)",
    )
    parser.addini(
        "noisefloor_timeout_s",
        "seconds a repeat may run before it is stopped and counted as a target error (default 60)",
    )


def active(config: pytest.Config) -> bool:
    """Whether this session samples its marked tests."""
    flag = config.getoption("noisefloor", None)
    return bool(flag) if flag is not None else bool(config.getini("noisefloor"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER)
    if active(config):
        from noisefloor.pytest_plugin.session import SamplingSession

        config.pluginmanager.register(SamplingSession(config), SESSION_PLUGIN)
