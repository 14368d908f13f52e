"""A faulty way to an S3-compatible server: a loopback proxy that forwards each request, or first
fails it as a cloud's front end does (latency, 5xx, 503 SlowDown, a reset, an upload cut short).

A request meets at most `burst` faults in a row (its path and method counted), so that a client
retrying as the SDKs do gets through: the trials count what the faults cost, not an outage.
"""

from __future__ import annotations

import contextlib
import http.client
import random
import socket
import struct
import threading
import time
from collections import Counter
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from bench.servers.loopback import LoopbackHandler, LoopbackServer

__all__ = ["OBJECT_FAULTS", "REFUSALS", "ObjectFaultProxy"]

#: The faults, each as the front end of a cloud's store shows it.
OBJECT_FAULTS = ("latency", "error_500", "slow_down", "reset", "cut_upload", "lost_answer")
#: Answers no retry gets past: credentials the bucket refuses.
REFUSALS = ("denied", "bad_signature", "skewed")

_SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)
_DENIED = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
    b"<Message>Access Denied</Message></Error>"
)
_BAD_SIGNATURE = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>'
    b"<Message>The request signature we calculated does not match the signature you provided."
    b"</Message></Error>"
)
_SKEWED = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>RequestTimeTooSkewed</Code>'
    b"<Message>The difference between the request time and the current time is too large."
    b"</Message></Error>"
)
_INTERNAL = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code>'
    b"<Message>We encountered an internal error. Please try again.</Message></Error>"
)


class _Handler(LoopbackHandler):
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        if self.server.down:  # an outage: every request meets a connection reset
            with contextlib.suppress(OSError):
                self._reset()
            return
        fault = self.server.draw(self.command, self.path)
        with contextlib.suppress(OSError):
            if fault == "latency":
                time.sleep(self.server.rng_uniform(0.05, 0.3))
            if fault == "reset":
                self._reset()
                return
            if fault == "cut_upload":
                # read half the body, then drop the connection as a cut upload does
                self.rfile.read(int(self.headers.get("Content-Length") or 0) // 2)
                self._reset()
                return
            body = self.read_body()
            if fault in ("error_500", "slow_down", *REFUSALS):
                code, text = {
                    "error_500": (500, _INTERNAL),
                    "slow_down": (503, _SLOW_DOWN),
                    "denied": (403, _DENIED),
                    "bad_signature": (403, _BAD_SIGNATURE),
                    "skewed": (403, _SKEWED),
                }[fault]
                self._answer(code, {"Content-Type": "application/xml"}, text)
                return
            code, headers, answer = self.server.forward(self.command, self.path, self.headers, body)
            if fault == "lost_answer":  # the write landed, its answer never came
                self._answer(500, {"Content-Type": "application/xml"}, _INTERNAL)
                return
            self._answer(code, headers, answer)

    def _answer(self, code: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(code)
        for name, value in headers.items():
            if name.lower() not in (
                "content-length",
                "connection",
                "transfer-encoding",
                "date",
                "server",
            ):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _reset(self) -> None:
        """Close with RST, as a peer that went away does."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, backend: str, fault: str, rate: float, burst: int, seed: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.backend = urlsplit(backend)
        self.fault, self.rate, self.burst = fault, rate, burst
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.streak: Counter[tuple[str, str]] = Counter()
        self.faults: Counter[str] = Counter()
        self.requests = 0
        self.down = False

    def rng_uniform(self, low: float, high: float) -> float:
        with self.lock:
            return self.rng.uniform(low, high)

    def draw(self, method: str, path: str) -> str | None:
        """The fault this request meets, if any: at most `burst` in a row per request."""
        with self.lock:
            self.requests += 1
            key = (method, path)
            applies = self.fault not in ("cut_upload", "lost_answer") or method == "PUT"
            if applies and self.streak[key] < self.burst and self.rng.random() < self.rate:
                self.streak[key] += 1
                self.faults[self.fault] += 1
                return self.fault
            self.streak[key] = 0
            return None

    def forward(
        self, method: str, path: str, headers: object, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """The backend's answer to the request, as it was sent."""
        assert self.backend.hostname is not None and self.backend.port is not None
        connection = http.client.HTTPConnection(
            self.backend.hostname, self.backend.port, timeout=60
        )
        sent = {k: v for k, v in headers.items() if k.lower() != "connection"}  # type: ignore[attr-defined]
        try:
            connection.request(method, path, body=body or None, headers=sent)
            answer = connection.getresponse()
            return answer.status, dict(answer.getheaders()), answer.read()
        finally:
            connection.close()


class ObjectFaultProxy(LoopbackServer[_Server]):
    """Forwards to `backend` (moto's URL), failing a `rate` of the requests with `fault`, and
    every request while it is `down` (an outage of the server)."""

    def __init__(self, backend: str, fault: str, rate: float = 0.3, burst: int = 2, seed: int = 0):
        super().__init__()
        if fault not in (*OBJECT_FAULTS, *REFUSALS):
            known = ", ".join((*OBJECT_FAULTS, *REFUSALS))
            raise ValueError(f"unknown fault {fault!r}: one of {known}")
        self._args = (backend, fault, rate, burst, seed)

    def make_server(self) -> _Server:
        return _Server(*self._args)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def down(self) -> bool:
        """Whether the server is out: every request, and every connection kept alive, meets a
        reset until it is back (`down = False`)."""
        assert self._server is not None
        return self._server.down

    @down.setter
    def down(self, value: bool) -> None:
        assert self._server is not None
        self._server.down = value

    @property
    def faults(self) -> Counter[str]:
        """The faults served so far, by kind."""
        assert self._server is not None
        return self._server.faults
