"""A stand-in for an OpenAI-compatible chat-completions server, on loopback, with scripted faults.

A marker in the last user message picks the behaviour, e.g. `[429:2]`, `[slow:0.5]`, `[pass:2/3]`,
`[finish:null]`, `[status:404]` (every time), `[status:408:1]` (the first time only),
`[length:3]` (answers cut at `max_tokens` after the first three) or `[key]` (answers with the
bearer token it was sent); `drift(n)` makes every n-th answer to each prompt off, whatever asked.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

from bench.servers.loopback import LoopbackHandler, LoopbackServer

__all__ = ["LlmServer"]

_MARKER = re.compile(r"\[(\w+)(?::([^\]]*))?\]")
_WORD = re.compile(r"[A-Za-z0-9_]+")
_SAMPLES = ("Paris", "Paris, France", "It is Paris.", "Lyon")


def _markers(text: str) -> dict[str, str]:
    return {name: arg or "" for name, arg in _MARKER.findall(text)}


def _last_user_text(body: Any) -> str:
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


class _Handler(LoopbackHandler):
    server: _Server

    def do_POST(self) -> None:
        raw = self.read_body()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        prompt = _last_user_text(body)
        headers = {name.lower(): value for name, value in self.headers.items()}
        count = self.server.record(self.path, headers, body, prompt)
        if self.server.delay_s:
            time.sleep(self.server.delay_s)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": f"no route {self.path}", "code": 404}})
            return
        self._answer(body, prompt, count)

    def _answer(self, body: Any, prompt: str, count: int) -> None:
        """Act on the prompt's markers; `count` is how many times this prompt was received."""
        marks = _markers(prompt)
        if "slow" in marks:
            time.sleep(float(marks["slow"]))
        code_text, _, times = marks.get("status", "").partition(":")
        if code_text and (not times or count <= int(times)):
            code = int(code_text)
            # like some real servers, quote the credential back, to test that it is scrubbed
            message = f"scripted status {code}; credentials: {self.headers.get('Authorization')}"
            self._json(code, {"error": {"message": message, "code": code}})
            return
        if "429" in marks and count <= int(marks["429"]):
            headers = (
                {} if self.server.retry_after is None else {"Retry-After": self.server.retry_after}
            )
            self._json(429, {"error": {"message": "rate limited", "code": 429}}, headers)
            return
        if "500" in marks and count <= int(marks["500"]):
            self._json(500, {"error": {"message": "scripted failure", "code": 500}})
            return
        if "malformed" in marks:
            self._send(200, b"<html>upstream hiccup</html>", "text/html")
            return
        finish = "stop"
        tool_calls = None
        words = _WORD.findall(_MARKER.sub(" ", prompt))
        content: str | None = json.dumps({"answer": words[-1] if words else ""})
        if "sample" in marks:
            content = json.dumps({"answer": _SAMPLES[count % len(_SAMPLES)]})
        if "key" in marks:
            # like a server that quotes its caller's credential in an answer
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            content = json.dumps({"answer": token})
        if "fenced" in marks:
            content = f"```json\n{content}\n```"
        if "length" in marks and count > int(marks["length"] or 0):
            content, finish = content[: len(content) // 2], "length"
        if "pass" in marks:
            passes, period = (int(part) for part in marks["pass"].split("/"))
            content = "PASS" if (count - 1) % period < passes else "FAIL"
        if self.server.off_every and count % self.server.off_every == 0:
            # the world moved (a silent update, a loaded server): every n-th answer is off
            content = json.dumps({"answer": "Lyon"})
        if "tools" in marks:
            content, finish = None, "tool_calls"
            call = {"name": "lookup", "arguments": json.dumps({"q": words[-1] if words else ""})}
            tool_calls = [{"id": f"call_{count}", "type": "function", "function": call}]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls is not None:
            message["tool_calls"] = tool_calls
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
        if "finish" in marks:
            # `[finish:null]` sends a null, `[finish:absent]` none at all, else the reason given
            reason = marks["finish"]
            choice["finish_reason"] = None if reason == "null" else reason
            if reason == "absent":
                del choice["finish_reason"]
        prompt_tokens = sum(
            len(_WORD.findall(str(m.get("content")))) for m in body.get("messages", [])
        )
        completion_tokens = len(_WORD.findall(content or ""))
        requested = body.get("model") if isinstance(body, dict) else None
        self._json(
            200,
            {
                "id": f"chatcmpl-{self.server.total}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.server.served_model or requested,
                "choices": [choice],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(code, json.dumps(obj).encode(), "application/json", headers)

    def _send(
        self, code: int, data: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.server.answered(data)
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # the default backlog of 5 drops connections when a client opens 50 at once
    request_queue_size = 256

    def __init__(
        self, *, delay_s: float, served_model: str | None, retry_after: str | None, port: int
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.delay_s = delay_s
        self.served_model = served_model
        self.retry_after = retry_after
        self.lock = threading.Lock()
        self.log: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []
        self.counts: dict[str, int] = {}
        self.total = 0
        self.off_every = 0

    def record(self, path: str, headers: dict[str, str], body: Any, prompt: str) -> int:
        """Log one request; return how many times its prompt has been received, this one included."""
        with self.lock:
            self.total += 1
            self.counts[prompt] = self.counts.get(prompt, 0) + 1
            self.log.append(
                {"path": path, "headers": headers, "body": body, "at": time.monotonic()}
            )
            return self.counts[prompt]

    def answered(self, body: bytes) -> None:
        """Log the body of one answer, as sent."""
        with self.lock:
            self.bodies.append(body)


class LlmServer(LoopbackServer[_Server]):
    """Serves `POST /v1/chat/completions` on 127.0.0.1 in a background thread while in a `with`."""

    def __init__(
        self,
        *,
        delay_s: float = 0.0,
        served_model: str | None = None,
        retry_after: str | None = "0",
        tls: ssl.SSLContext | None = None,
        port: int = 0,
    ) -> None:
        """Configure the server; it starts on entering the `with` block.

        Args:
            delay_s: Seconds slept before every answer.
            served_model: The `model` reported in answers (default: the requested one).
            retry_after: The `Retry-After` header of a 429, or None for none.
            tls: Serve HTTPS with this server context (its certificate must name 127.0.0.1).
            port: The port to listen on (0: a free one), e.g. an earlier server's, to come back.
        """
        self.delay_s = delay_s
        self.served_model = served_model
        self.retry_after = retry_after
        self._port = port
        super().__init__(tls)

    def make_server(self) -> _Server:
        return _Server(
            delay_s=self.delay_s,
            served_model=self.served_model,
            retry_after=self.retry_after,
            port=self._port,
        )

    def drift(self, off_every: int) -> None:
        """From now on every `off_every`-th answer to each prompt is off (`Lyon`), whatever the
        request asked: the server's world moved, not its caller (0: none is)."""
        assert self._server is not None
        with self._server.lock:
            self._server.off_every = off_every

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request so far: `path`, `headers` (lower-case names), `body` (parsed), `at`.

        `at` is the arrival time on `time.monotonic()`.
        """
        assert self._server is not None
        with self._server.lock:
            return list(self._server.log)

    @property
    def answers(self) -> list[bytes]:
        """The body of every answer so far, byte for byte as sent, in the order sent."""
        assert self._server is not None
        with self._server.lock:
            return list(self._server.bodies)
