"""The redactor: the suite's patterns and the secrets long enough to be credentials replaced in a
sample, the variables found named in it and counted, and a secret too short to redact warned of."""

from __future__ import annotations

from typing import Any

from noisefloor.executors.redaction import Redactor
from noisefloor.settings import SECRET_MIN_CHARS
from noisefloor.targets.source import Secret

LONG = "sk-live-0123456789"


def sample(text: str, redacted: list[str] | None = None) -> dict[str, Any]:
    """A sample as dumped, its output and its raw answer holding `text`."""
    return {
        "output": {"text": text},
        "envelope": {"raw": {text: text, "usage": {"total_tokens": 3}}},
        "redacted": redacted,
    }


def test_a_short_secret_rewrites_nothing_and_is_warned_of_once() -> None:
    redactor = Redactor(secrets=[Secret("LOCAL_KEY", "k"), Secret("OLLAMA_KEY", "ollama")])
    kept = [redactor.sample(sample(f"kiosk {n} ollama")) for n in range(3)]
    assert kept == [sample(f"kiosk {n} ollama") for n in range(3)]
    assert not redactor and redactor.text("kiosk") == "kiosk"
    [warning] = redactor.warnings()
    assert warning.startswith("LOCAL_KEY and OLLAMA_KEY hold secrets too short to redact")
    assert f"under {SECRET_MIN_CHARS} characters" in warning


def test_a_short_ambient_secret_is_left_alone_without_a_word() -> None:
    redactor = Redactor(secrets=[Secret("KEYTIMEOUT", "1", ambient=True)])
    assert redactor.sample(sample("take 1")) == sample("take 1")
    assert redactor.warnings() == []


def test_a_long_secret_is_replaced_keys_included_named_and_counted_per_sample() -> None:
    redactor = Redactor(secrets=[Secret("API_KEY", LONG), Secret("API_KEY", LONG, ambient=True)])
    stored = [redactor.sample(sample(f"key {LONG}")) for _ in range(2)]
    stored.append(redactor.sample(sample("no key")))
    assert stored[0] == {
        "output": {"text": "key [REDACTED]"},
        "envelope": {"raw": {"key [REDACTED]": "key [REDACTED]", "usage": {"total_tokens": 3}}},
        "redacted": ["API_KEY"],
    }
    assert stored[2]["redacted"] is None
    [warning] = redactor.warnings()
    assert warning.startswith("the value of API_KEY was found in 2 samples taken")


def test_what_the_target_redacted_itself_is_named_and_counted_with_the_rest() -> None:
    redactor = Redactor(secrets=[Secret("PROXY_PASSWORD", "pxpw-never-on-disk")])
    stored = redactor.sample(sample("[REDACTED] and pxpw-never-on-disk", redacted=["API_KEY"]))
    assert stored["output"]["text"] == "[REDACTED] and [REDACTED]"
    assert stored["redacted"] == ["API_KEY", "PROXY_PASSWORD"]
    assert [w.split(" was ")[0] for w in redactor.warnings()] == [
        "the value of API_KEY",
        "the value of PROXY_PASSWORD",
    ]


def test_the_suites_patterns_apply_each_as_written_beside_the_secrets() -> None:
    # a group in one pattern, a backreference and a group of the same name in the others
    patterns = [r"(?P<id>acct_[0-9]{6})", r"(['\"])pin\1", r"(?P<id>card_[0-9]{4})"]
    redactor = Redactor(patterns, [Secret("API_KEY", LONG)])
    stored = redactor.sample(sample(f"acct_314159 'pin' card_1234 {LONG} acct_1"))
    assert stored["output"]["text"] == "[REDACTED] [REDACTED] [REDACTED] [REDACTED] acct_1"
    assert stored["redacted"] == ["API_KEY"]
    assert redactor.text("acct_271828 in input") == "[REDACTED] in input"
