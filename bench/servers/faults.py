"""A hostile OpenAI-compatible endpoint on loopback: each request gets the fault its prompt names
(`[fault:NAME]`, see `FAULTS`), and faults that quote a body quote the caller's credential too.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from bench.servers.loopback import LoopbackHandler, LoopbackServer

__all__ = ["FAULTS", "HUGE_BYTES", "FaultServer"]

_MARKER = re.compile(r"\[fault:(\w+)\]")
#: The size of the huge bodies, sent in pieces and never held whole.
HUGE_BYTES = 100 * 1024 * 1024
_PIECE = b"x" * 65536


def _answer(text: str = '{"answer": "Paris"}', **choice: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "model": "fault-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", **choice}],
    }


class _Handler(LoopbackHandler):
    server: _Server

    def do_POST(self) -> None:
        raw = self.read_body()
        match = _MARKER.search(raw.decode("utf-8", errors="replace"))
        name = match.group(1) if match else "ok"
        self.server.record(name)
        # the credential, quoted back in whatever the fault sends, to test that it is scrubbed
        self.secret = self.headers.get("Authorization") or ""
        # a client hanging up mid-answer is what a client facing this server should do
        with contextlib.suppress(OSError):
            FAULTS[name](self)
            self.wfile.flush()
        self.close_connection = True

    # -- writing -------------------------------------------------------------------------------

    def head(self, code: int, kind: str, length: int | None, **headers: str) -> None:
        """Send a status line and headers; `length` None means a chunked body."""
        self.send_response(code)
        # every connection serves one fault: a client must not send its next request on it
        self.send_header("Connection", "close")
        self.send_header("Content-Type", kind)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.flush()

    def body(self, code: int, data: bytes, kind: str = "application/json") -> None:
        self.head(code, kind, len(data))
        self.wfile.write(data)

    def json(self, obj: Any) -> None:
        self.body(200, json.dumps(obj).encode())

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def reset(self) -> None:
        """Close with a TCP reset (SO_LINGER 0) instead of an orderly shutdown."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


def _truncated(h: _Handler) -> None:
    data = json.dumps(_answer()).encode()
    h.head(200, "application/json", len(data) + 1000)
    h.wfile.write(data[: len(data) // 2])


def _invalid_json(h: _Handler) -> None:
    h.body(200, b'{"choices": [{"message": {"content": "Paris"}')


def _html(h: _Handler) -> None:
    # the credential ends just past the 2,000th character, where a quoted excerpt of the page
    # ends: an excerpt cut before the key is scrubbed keeps all of it but its last characters
    page = "<html><head><title>502 Bad Gateway</title></head><body>"
    page = page.ljust(2000 - len(h.secret) + 4, " ")
    h.body(200, f"{page}{h.secret}</body></html>".encode(), "text/html; charset=utf-8")


def _error_200(h: _Handler) -> None:
    h.json({"error": {"message": f"upstream overloaded ({h.secret})", "type": "server_error"}})


def _huge(h: _Handler) -> None:
    h.head(200, "application/json", HUGE_BYTES)
    for _ in range(HUGE_BYTES // len(_PIECE)):
        h.wfile.write(_PIECE)


def _huge_chunked(h: _Handler) -> None:
    h.head(200, "application/json", None)
    for _ in range(HUGE_BYTES // len(_PIECE)):
        h.chunk(_PIECE)
    h.wfile.write(b"0\r\n\r\n")


def _declared_huge(h: _Handler) -> None:
    """Headers declaring a huge body, then nothing until the client hangs up (10 s at most)."""
    h.head(200, "application/json", HUGE_BYTES)
    h.connection.settimeout(10)
    h.connection.recv(1)


def _drip(h: _Handler) -> None:
    """One byte per `drip_s`, the status line included: no single read ever waits long."""
    data = json.dumps(_answer()).encode()
    head = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(data)
    response = head + data
    for i in range(len(response)):
        h.wfile.write(response[i : i + 1])
        h.wfile.flush()
        time.sleep(h.server.drip_s)


def _reset(h: _Handler) -> None:
    h.head(200, "application/json", 10000)
    h.wfile.write(b'{"choices": [' + b" " * 4000)
    h.reset()


def _redirect(code: int) -> Callable[[_Handler], None]:
    def send(h: _Handler) -> None:
        port = h.server.server_address[1]
        # the same server under another name: another host to a client
        h.head(code, "text/plain", 0, Location=f"http://localhost:{port}/v1/chat/completions")

    return send


def _empty(h: _Handler) -> None:
    h.body(200, b"")


def _chunked_cut(h: _Handler) -> None:
    h.head(200, "application/json", None)
    h.chunk(b'{"choices": [')
    h.wfile.flush()


def _hang_up(h: _Handler) -> None:
    h.connection.shutdown(socket.SHUT_RDWR)


def _no_choices(h: _Handler) -> None:
    h.json({**_answer(), "choices": []})


def _choices_text(h: _Handler) -> None:
    h.json({**_answer(), "choices": "Paris"})


def _message_text(h: _Handler) -> None:
    h.json({**_answer(), "choices": [{"index": 0, "message": "Paris", "finish_reason": "stop"}]})


def _odd_types(h: _Handler) -> None:
    """A usable answer whose other fields have the wrong types."""
    h.json({**_answer(finish_reason={"why": "stop"}), "model": ["m"], "usage": "lots"})


def _nan(h: _Handler) -> None:
    h.body(200, b'{"choices": [{"message": {"content": "Paris"}, "logprob": NaN}]}')


def _ok(h: _Handler) -> None:
    h.json(_answer())


#: Every fault by name; `ok` answers properly.
FAULTS: dict[str, Callable[[_Handler], None]] = {
    "ok": _ok,
    "truncated": _truncated,
    "invalid_json": _invalid_json,
    "html": _html,
    "error_200": _error_200,
    "huge": _huge,
    "huge_chunked": _huge_chunked,
    "declared_huge": _declared_huge,
    "drip": _drip,
    "reset": _reset,
    "redirect_302": _redirect(302),
    "redirect_307": _redirect(307),
    "empty": _empty,
    "chunked_cut": _chunked_cut,
    "hang_up": _hang_up,
    "no_choices": _no_choices,
    "choices_text": _choices_text,
    "message_text": _message_text,
    "odd_types": _odd_types,
    "nan": _nan,
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, drip_s: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.drip_s = drip_s
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def record(self, name: str) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer is expected here, not worth a traceback."""


class FaultServer(LoopbackServer[_Server]):
    """Serves the faults on 127.0.0.1 in a background thread while in a `with` block."""

    def __init__(self, *, drip_s: float = 1.0, tls: ssl.SSLContext | None = None) -> None:
        """Configure the server; it starts on entering the `with` block.

        Args:
            drip_s: Seconds between two bytes of the `drip` fault.
            tls: Serve HTTPS with this server context.
        """
        self.drip_s = drip_s
        super().__init__(tls)

    def make_server(self) -> _Server:
        return _Server(self.drip_s)

    @property
    def counts(self) -> dict[str, int]:
        """Requests received so far, by fault name."""
        assert self._server is not None
        with self._server.lock:
            return dict(self._server.counts)
