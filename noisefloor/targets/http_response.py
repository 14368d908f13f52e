"""What one HTTP attempt got back, classified: a completion, a reason to retry, or a
configuration problem; and the completion's text read out of an OpenAI-compatible body."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import httpcore
import orjson

from noisefloor.targets.http_retry import parse_retry_after

__all__ = ["Attempt", "AttemptKind", "classify"]

#: Characters of a response body kept when it is not JSON.
EXCERPT_CHARS = 2000
#: Characters of an error body quoted in the one-line error of a configuration problem.
SHORT_EXCERPT_CHARS = 200
#: Statuses that say "try again later" rather than "your request is wrong".
RETRYABLE_STATUS = frozenset({408, 409, 429})


class AttemptKind(enum.Enum):
    """What an attempt means for the call."""

    DONE = "done"
    RETRY = "retry"
    CONFIG = "config"


@dataclass
class Attempt:
    """What one HTTP attempt returned, already classified."""

    kind: AttemptKind
    latency_s: float
    status: int | None = None
    problem: str | None = None
    """The failure in words, for the error and the retry log."""
    raw: Any = None
    """The parsed body, or an excerpt of its text when it is not JSON."""
    retry_after: float | None = None
    text: str = ""
    finish_reason: Any = None
    tool_calls: Any = None


def _excerpt(content: bytes, limit: int = EXCERPT_CHARS) -> str:
    text = content.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "..."


def _short_error(raw: Any) -> str:
    """One line saying what an error body says: its `error.message` when it has one."""
    text: Any = raw
    if isinstance(raw, dict):
        error = raw.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
        else:
            text = orjson.dumps(raw).decode()
    line = " ".join(str(text).split())
    return line if len(line) <= SHORT_EXCERPT_CHARS else line[:SHORT_EXCERPT_CHARS] + "..."


def _content_text(content: Any) -> str | None:
    """The message content as text; None when its shape is not one the API defines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # content parts: only text parts carry output text
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return None


def _header(response: httpcore.Response, name: bytes) -> str | None:
    """The first value of a response header (`name` in lower case), or None."""
    for key, value in response.headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def classify(response: httpcore.Response, latency: float) -> Attempt:
    """Classify a response that arrived `latency` seconds after its request was sent."""
    status = response.status
    content = response.content
    try:
        parsed: Any = orjson.loads(content)
        is_json = True
    except orjson.JSONDecodeError:
        parsed, is_json = _excerpt(content), False
    if 200 <= status < 300:
        return _classify_success(status, latency, parsed, is_json)
    if status in RETRYABLE_STATUS or status >= 500:
        return Attempt(
            AttemptKind.RETRY,
            latency,
            status=status,
            problem=f"HTTP {status}",
            raw=parsed,
            retry_after=parse_retry_after(_header(response, b"retry-after")),
        )
    return Attempt(
        AttemptKind.CONFIG,
        latency,
        status=status,
        problem=f"HTTP {status}: {_short_error(parsed)}",
        raw=parsed,
    )


def _classify_success(status: int, latency: float, parsed: Any, is_json: bool) -> Attempt:
    """A 2xx: a completion, or (when its body is unusable) an infrastructure error."""
    if not is_json:
        problem = f"HTTP {status} with a body that is not JSON"
        return Attempt(AttemptKind.RETRY, latency, status=status, problem=problem, raw=parsed)
    choice: Any = None
    if isinstance(parsed, dict) and isinstance(parsed.get("choices"), list) and parsed["choices"]:
        choice = parsed["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    text = _content_text(message.get("content")) if isinstance(message, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict) or text is None:
        # a proxy's error page or a half-written body: the endpoint, not the model, failed
        problem = f"HTTP {status} without a usable choices[0].message"
        return Attempt(AttemptKind.RETRY, latency, status=status, problem=problem, raw=parsed)
    return Attempt(
        AttemptKind.DONE,
        latency,
        status=status,
        raw=parsed,
        text=text,
        finish_reason=choice.get("finish_reason"),
        tool_calls=message.get("tool_calls"),
    )
