"""What one HTTP attempt got back, read under a size cap and classified: a completion, a reason
to retry, or a configuration problem; and the completion's text read out of an OpenAI-compatible
body."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import orjson

from noisefloor.targets.http_retry import parse_retry_after

__all__ = ["Attempt", "AttemptKind", "BodyTooLarge", "classify", "read_body"]

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
    quoted_key: bool = False
    """Whether the body quoted the key sent with the request (replaced before it was read)."""


class BodyTooLarge(Exception):
    """A response body longer than the target reads."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body over {limit} bytes")


async def read_body(response: httpcore.Response, limit: int) -> bytes:
    """Read a streamed response's body, stopping as soon as it is over `limit` bytes.

    Raises:
        BodyTooLarge: The body (or the length its headers declare) is over `limit` bytes.
    """
    declared = (_header(response, b"content-length") or "").strip()
    # refused before a byte is read; ASCII only, as int() also reads other scripts' digits
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    pieces: list[bytes] = []
    size = 0
    async for piece in response.aiter_stream():
        size += len(piece)
        if size > limit:
            raise BodyTooLarge(limit)
        pieces.append(piece)
    return b"".join(pieces)


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


def classify(response: httpcore.Response, content: bytes, latency: float, url: str) -> Attempt:
    """Classify a response to a request for `url`, whose body is `content`, that arrived
    `latency` seconds after the request was sent."""
    status = response.status
    try:
        parsed: Any = orjson.loads(content)
        invalid = ""
    except orjson.JSONDecodeError as exc:
        parsed, invalid = _excerpt(content), str(exc)
    if 300 <= status < 400:
        return _redirect(response, latency, url, parsed)
    if 200 <= status < 300:
        if invalid:
            problem = _not_json(status, content, _header(response, b"content-type"), invalid)
            return Attempt(AttemptKind.RETRY, latency, status=status, problem=problem, raw=parsed)
        return _classify_success(status, latency, parsed)
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


def _redirect(response: httpcore.Response, latency: float, url: str, parsed: Any) -> Attempt:
    """A 3xx: never followed (the request carries the key), a configuration problem."""
    status = response.status
    location = _header(response, b"location")
    if location is None:
        problem = f"HTTP {status}, a redirect without a Location"
    else:
        elsewhere = urlsplit(urljoin(url, location)).netloc != urlsplit(url).netloc
        what = "redirect to another host refused" if elsewhere else "redirect not followed"
        problem = f"{what} ({status} to {location}): set base_url to where it points"
    return Attempt(AttemptKind.CONFIG, latency, status=status, problem=problem, raw=parsed)


def _not_json(status: int, content: bytes, content_type: str | None, invalid: str) -> str:
    """Why a 2xx body is not JSON, in words: empty, another content type, or where it breaks."""
    if not content.strip():
        return f"HTTP {status} with an empty body"
    media = (content_type or "").split(";")[0].strip().lower()
    if media and "json" not in media:
        return f"HTTP {status} with a {media} body, not JSON"
    return f"invalid JSON in response: {invalid}"


def _completion_problem(parsed: Any) -> str | None:
    """What keeps a parsed 2xx body from being a completion, in words; None when nothing."""
    if not isinstance(parsed, dict):
        return "whose body is not a JSON object"
    if parsed.get("error") is not None:
        return f"with an error object: {_short_error(parsed)}"
    choices = parsed.get("choices")
    if choices is None:
        return "without choices"
    if not isinstance(choices, list):
        return "whose choices is not a list"
    if not choices:
        return "whose choices is empty"
    choice = choices[0]
    if not isinstance(choice, dict):
        return "whose choices[0] is not an object"
    message = choice.get("message")
    if not isinstance(message, dict):
        return "whose choices[0].message is not an object"
    if _content_text(message.get("content")) is None:
        return "whose choices[0].message.content is neither text nor a list of parts"
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        return "whose choices[0].finish_reason is not a string"
    return None


def _classify_success(status: int, latency: float, parsed: Any) -> Attempt:
    """A 2xx with a JSON body: a completion, or (when its shape is wrong) an infrastructure
    error; a proxy's error or a half-written body means the endpoint, not the model, failed."""
    problem = _completion_problem(parsed)
    if problem is not None:
        problem = f"HTTP {status} {problem}"
        return Attempt(AttemptKind.RETRY, latency, status=status, problem=problem, raw=parsed)
    choice = parsed["choices"][0]
    message = choice["message"]
    return Attempt(
        AttemptKind.DONE,
        latency,
        status=status,
        raw=parsed,
        text=_content_text(message.get("content")) or "",
        finish_reason=choice.get("finish_reason"),
        tool_calls=message.get("tool_calls"),
    )
