"""A local model's eval as ordinary pytest tests: each asks an OpenAI-compatible endpoint one
question and asserts on the answer; the answers vary, so each test is a pass rate.

Set NOISEFLOOR_EXAMPLE_MODEL_URL (e.g. `http://127.0.0.1:8765/v1`, served by
`examples/local-llm/serve.py`) to run them; without it they are skipped.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Callable

import pytest

URL = os.environ.get("NOISEFLOOR_EXAMPLE_MODEL_URL")
if not URL:
    pytest.skip(
        "set NOISEFLOOR_EXAMPLE_MODEL_URL to an OpenAI-compatible endpoint to run the model's eval",
        allow_module_level=True,
    )


def ask(prompt: str) -> tuple[str, float]:
    """The model's answer to `prompt`, and the seconds it took."""
    body = {
        "model": os.environ.get("NOISEFLOOR_EXAMPLE_MODEL", "local"),
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0.8,
        "max_tokens": 64,
    }
    request = urllib.request.Request(
        f"{URL}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.load(response)["choices"][0]["message"]["content"]
    return answer, time.perf_counter() - started


@pytest.fixture
def latency(noisefloor_score: Callable[[str, float], None]) -> Callable[[float], None]:
    """Records a call's seconds as the repeat's `latency_s`."""
    return lambda seconds: noisefloor_score("latency_s", seconds)


@pytest.mark.noisefloor(scores={"latency_s": "lower_is_better"})
def test_capital_in_one_word(latency: Callable[[float], None]) -> None:
    answer, seconds = ask("What is the capital of France? Answer with one word.")
    latency(seconds)
    assert "paris" in answer.lower()


@pytest.mark.noisefloor(min_effect=0.2)
def test_counts_the_letters() -> None:
    answer, _ = ask('How many times does the letter r occur in "strawberry"? Answer with a digit.')
    assert answer.strip().rstrip(".") == "3"
