"""The HTTP target: one OpenAI-compatible chat completion per sample, over shared connections.

Endpoint failures are data: classified (http_response), retried (http_retry), kept as `error:infra`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import urlsplit

import httpcore
import orjson

from noisefloor import __version__
from noisefloor.errors import TargetConfigError
from noisefloor.settings import SECRET_MIN_CHARS
from noisefloor.targets.base import (
    CaseInput,
    Outcome,
    RawSample,
    VersionedTarget,
    decode_stream,
    exchange_hashes,
    output_sha,
)
from noisefloor.targets.command import utc_now_iso
from noisefloor.targets.http_connections import Connections
from noisefloor.targets.http_response import (
    Attempt,
    AttemptKind,
    BodyTooLarge,
    classify,
    read_body,
)
from noisefloor.targets.http_retry import (
    BACKOFF_BASE_S,
    BACKOFF_CAP_S,
    RETRY_AFTER_MAX_S,
    backoff_delay,
)
from noisefloor.targets.http_spec import HttpSpec
from noisefloor.targets.templating import check_value, render_value

__all__ = ["HttpTarget"]

#: What the transport raises when a request did not get an answer: worth another attempt.
_TRANSPORT_ERRORS = (
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    OSError,
)
_REDACTED = b"[REDACTED]"


class HttpTarget(VersionedTarget):
    """Sends each case to an OpenAI-compatible `/chat/completions` endpoint, once per sample.

    All samples share one set of connections (`Connections`), a run-wide retry budget and a
    pause: a 429 seen by any call holds back every call until the endpoint's requested delay has
    passed.

    Requests go through httpcore, the transport under httpx, used directly: httpx's client
    layer (request and response models, auth, redirects, cookies) cost 1.2 ms of CPU per
    request here, as much as the transport itself, and none of it applies to one POST. The
    environment's proxy and CA settings apply as httpx applies them (see `http_env`).
    """

    kind = "http"

    def __init__(
        self, http: HttpSpec, *, key: str, spec: dict[str, Any], api_key: str | None
    ) -> None:
        """Check the configuration; no connection is opened until `sample`.

        Args:
            http: The endpoint, model, generation settings and retry policy.
            key: The target's version, computed by the caller.
            spec: The comparable spec, computed by the caller.
            api_key: Sent as a bearer token when given; never recorded.

        Raises:
            TargetConfigError: The URL, a message template, or the proxy or CA bundle named by
                the environment cannot work.
        """
        where = "target.http"
        parts = urlsplit(http.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise TargetConfigError(
                f"base_url {http.base_url!r} is not an http(s) URL",
                where=f"{where}.base_url",
                hint="e.g. http://127.0.0.1:8080/v1 (`/chat/completions` is appended)",
            )
        if http.messages is not None:
            if not http.messages:
                raise TargetConfigError("messages is empty", where=f"{where}.messages")
            check_value(http.messages, f"{where}.messages")
        if http.system is not None:
            check_value(http.system, f"{where}.system")
        self.http = http
        self.url = http.base_url.rstrip("/") + "/chat/completions"
        self.host = parts.netloc
        #: Backoff parameters; attributes so that a caller can shorten them.
        self.backoff_base_s = BACKOFF_BASE_S
        self.backoff_cap_s = BACKOFF_CAP_S
        super().__init__(key, spec)
        self._api_key = api_key or None
        #: The key as an answer would quote it, when it is long enough to be told from the
        #: answer's own words; a shorter one (`x`, `ollama`) leaves every answer as it came.
        self._quotable_key = (
            self._api_key.encode()
            if self._api_key and len(self._api_key) >= SECRET_MIN_CHARS
            else None
        )
        #: The variable holding the key, as a sample names what was redacted in it (a target
        #: given its key directly, not from the environment, names the setting).
        self._key_variable = http.api_key_env or "api_key"
        self._headers = [
            (b"Content-Type", b"application/json"),
            (b"Accept", b"application/json"),
            (b"User-Agent", f"noisefloor/{__version__}".encode()),
        ]
        if self._api_key:
            self._headers.append((b"Authorization", f"Bearer {self._api_key}".encode()))
        timeout = http.timeout_s
        self._extensions = {
            "timeout": {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
        }
        self._connections = Connections(self.url)
        self._calls_started = 0
        self._retries_used = 0
        # time.monotonic(), not the loop's clock, so the pause survives a new event loop
        self._paused_until = 0.0

    @property
    def retry_budget(self) -> int:
        """Retries the whole run may make, counting those already made.

        Without a configured budget: one retry per call started, plus one call's own
        `max_retries` so that a failure on the very first call can still be retried in full.
        """
        if self.http.retry_budget is not None:
            return self.http.retry_budget
        return self._calls_started + self.http.max_retries

    @property
    def retries_used(self) -> int:
        """Retries made so far by all calls together."""
        return self._retries_used

    async def sample(self, case: CaseInput, repeat: int, concurrency: int) -> RawSample:
        """Request one chat completion, retrying infrastructure errors.

        Args:
            case: The case whose input fills the messages.
            repeat: The 0-based repeat index.
            concurrency: How many calls the harness allows at once (recorded).

        Returns:
            The sample; the endpoint's failures are its outcome, never an exception.
        """
        started_at = utc_now_iso()
        self._calls_started += 1
        messages = self._messages(case, repeat)
        body = self._body(messages)
        payload = orjson.dumps(body)
        retries: list[dict[str, Any]] = []
        paused_s = 0.0
        attempts = 0
        stop_note = ""
        quoted_key = False
        while True:
            paused_s += await self._wait_for_pause()
            attempts += 1
            attempt = await self._attempt(payload)
            quoted_key = quoted_key or attempt.quoted_key
            if attempt.kind is not AttemptKind.RETRY:
                break
            wait, stop_note = self._next_wait(attempt, attempts)
            if attempt.status == 429:
                # everyone backs off together: hammering a rate-limited endpoint only extends it,
                # and the endpoint's own delay holds for the others even when this call gives up
                pause = wait if wait is not None else attempt.retry_after
                if pause is not None and pause <= RETRY_AFTER_MAX_S:
                    self._paused_until = max(self._paused_until, time.monotonic() + pause)
            if wait is None:
                break
            entry: dict[str, Any] = {"status": attempt.status} if attempt.status is not None else {}
            if attempt.status is None or attempt.status < 300:
                entry["error"] = attempt.problem
            entry["waited_s"] = round(wait, 3)
            retries.append(entry)
            await asyncio.sleep(wait)
        return self._result(
            case,
            repeat,
            concurrency,
            attempt,
            attempts=attempts,
            started_at=started_at,
            body=body,
            messages=messages,
            retries=retries,
            paused_s=paused_s,
            stop_note=stop_note,
            quoted_key=quoted_key,
        )

    async def aclose(self) -> None:
        """Close the shared connections."""
        await self._connections.aclose()

    # -- one call ----------------------------------------------------------------------------

    def _messages(self, case: CaseInput, repeat: int) -> list[Any]:
        values = {"input": case.input, "case_id": case.case_id, "repeat": str(repeat)}
        if self.http.messages is not None:
            rendered: list[Any] = render_value(self.http.messages, values)
            return rendered
        messages: list[Any] = []
        if self.http.system is not None:
            messages.append({"role": "system", "content": render_value(self.http.system, values)})
        messages.append({"role": "user", "content": case.input})
        return messages

    def _body(self, messages: list[Any]) -> dict[str, Any]:
        http = self.http
        body: dict[str, Any] = {"model": http.model, "messages": messages}
        optional = {
            "temperature": http.temperature,
            "seed": http.seed,
            "max_tokens": http.max_tokens,
            "response_format": http.response_format,
        }
        body.update({name: value for name, value in optional.items() if value is not None})
        body.update(http.extra_body)
        return body

    async def _wait_for_pause(self) -> float:
        """Sleep until the shared 429 pause is over; return the seconds slept."""
        slept = 0.0
        # a loop, because another call may extend the pause while this one sleeps
        while (delay := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(delay)
            slept += delay
        return slept

    async def _attempt(self, payload: bytes) -> Attempt:
        """Send the request once, read the answer within the body cap, and classify it."""
        carrier = await self._connections.take()
        started = time.perf_counter()
        status: int | None = None
        try:
            # the transport's timeouts bound each read; this bounds the whole attempt, body
            # included: a server sending a byte at a time never trips a per-read timeout
            async with asyncio.timeout(self.http.timeout_s):
                async with carrier.stream(
                    "POST",
                    self.url,
                    headers=self._headers,
                    content=payload,
                    extensions=self._extensions,
                ) as response:
                    status = response.status
                    # streamed: a body over the cap is never held, only its first bytes
                    content = await read_body(response, self.http.max_response_bytes)
        except (TimeoutError, httpcore.TimeoutException):
            return Attempt(
                AttemptKind.RETRY,
                time.perf_counter() - started,
                status=status,
                problem=f"timeout (no answer within {self.http.timeout_s:g} s)",
            )
        except BodyTooLarge as exc:
            return Attempt(
                AttemptKind.RETRY, time.perf_counter() - started, status=status, problem=str(exc)
            )
        except _TRANSPORT_ERRORS as exc:
            detail = " ".join(str(exc).split())
            name = type(exc).__name__
            proxy = self._connections.proxy
            # where it failed, as a URL names it (the transport's words vary by platform)
            via = (
                f" (through the proxy {proxy.shown})" if proxy is not None else f" (at {self.host})"
            )
            return Attempt(
                AttemptKind.RETRY,
                time.perf_counter() - started,
                status=status,
                problem=(f"{name}: {detail}" if detail else name) + via,
            )
        finally:
            self._connections.give_back(carrier)
        key, quoted = self._quotable_key, False
        if key is not None and key in content:
            # here, before any excerpt is cut from the body (a cut through the key would keep a
            # piece), and so that the key never leaves the target, even on a cluster's worker
            content, quoted = content.replace(key, _REDACTED), True
        attempt = classify(response, content, time.perf_counter() - started, self.url)
        attempt.quoted_key = quoted
        return attempt

    def _next_wait(self, attempt: Attempt, attempts: int) -> tuple[float | None, str]:
        """How long to wait before retrying, or None (and why, in words) when not retrying."""
        if attempts > self.http.max_retries:
            return None, ""
        if attempt.retry_after is not None and attempt.retry_after > RETRY_AFTER_MAX_S:
            return None, f" (Retry-After of {attempt.retry_after:g} s is too long to wait)"
        if self._retries_used >= self.retry_budget:
            return None, f" (the run's retry budget of {self.retry_budget} is spent)"
        self._retries_used += 1
        if attempt.retry_after is not None:
            return attempt.retry_after, ""
        return backoff_delay(attempts - 1, base_s=self.backoff_base_s, cap_s=self.backoff_cap_s), ""

    # -- the sample --------------------------------------------------------------------------

    def _result(
        self,
        case: CaseInput,
        repeat: int,
        concurrency: int,
        attempt: Attempt,
        *,
        attempts: int,
        started_at: str,
        body: dict[str, Any],
        messages: list[Any],
        retries: list[dict[str, Any]],
        paused_s: float,
        stop_note: str,
        quoted_key: bool,
    ) -> RawSample:
        raw = attempt.raw
        served = raw.get("model") if isinstance(raw, dict) else None
        if not isinstance(served, str):
            served = None  # an endpoint's odd value stays in `raw`, not in the served model
        usage = raw.get("usage") if isinstance(raw, dict) else None
        envelope: dict[str, Any] = {
            "status": attempt.status,
            "finish_reason": attempt.finish_reason,
            "usage": usage,
            "latency_ms": round(attempt.latency_s * 1000.0, 3),
            **exchange_hashes(messages),
            "output_sha": None,
            "raw": raw,
            "requested_model": self.http.model,
            "served_model": served,
            "host": self.host,
            "harness_version": __version__,
            "retries": retries,
            "paused_s": round(paused_s, 3),
            "request": body,
        }
        output = ""
        if attempt.kind is AttemptKind.DONE:
            output = attempt.text
            if attempt.tool_calls is not None:
                envelope["tool_calls"] = attempt.tool_calls
            finish = attempt.finish_reason
            # as the quarantine-lane design: a reason not accepted (`length`, `content_filter`)
            # cuts the answer short; none at all says nothing, and the scorers judge the answer
            if finish is None or finish in self.http.accept_finish:
                outcome, error = Outcome.OK, None
            else:
                outcome, error = Outcome.FINISH, f"finish:{finish}"
                envelope["error_class"] = "finish"
        elif attempt.kind is AttemptKind.CONFIG:
            outcome, error = Outcome.INFRA, f"config: {attempt.problem}"
            envelope["error_class"] = "config"
        else:
            plural = "attempt" if attempts == 1 else "attempts"
            outcome = Outcome.INFRA
            error = f"infra: {attempt.problem} after {attempts} {plural}{stop_note}"
            envelope["error_class"] = "infra"
        if attempt.kind is AttemptKind.DONE:
            envelope["output_sha"] = output_sha(output)
        return RawSample(
            kind=self.kind,
            case_id=case.case_id,
            repeat=repeat,
            outcome=outcome,
            error=error,
            output=decode_stream(output.encode("utf-8")),
            wall_s=attempt.latency_s,
            started_at=started_at,
            concurrency=concurrency,
            envelope=envelope,
            attempts=attempts,
            redacted=[self._key_variable] if quoted_key else None,
        )
