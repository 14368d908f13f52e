"""What the loopback test servers share: an HTTP server on 127.0.0.1 served from a background
thread while in a `with` block, over TLS when given a server context, and a quiet keep-alive
request handler."""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Generic, Self, TypeVar

__all__ = ["LoopbackHandler", "LoopbackServer"]

ServerT = TypeVar("ServerT", bound=ThreadingHTTPServer)


class LoopbackHandler(BaseHTTPRequestHandler):
    """A request handler that keeps connections alive and logs nothing."""

    # keep-alive, so that a client's connections are reused as with a real server
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without this, Nagle's algorithm and delayed ACKs
    # add ~40 ms to every answer
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: tests read what the server recorded, not a log."""

    def read_body(self) -> bytes:
        """The request's body, as long as its Content-Length says."""
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))


class LoopbackServer(Generic[ServerT]):
    """Starts the server `make_server` builds on entering a `with` block; stops it on leaving."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self._server: ServerT | None = None
        self._thread: threading.Thread | None = None

    def make_server(self) -> ServerT:
        """The server to run, bound to 127.0.0.1 port 0."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._server = self.make_server()
        if self.tls is not None:
            # a client that refuses the certificate fails the handshake in accept(), which the
            # server shrugs off as an OSError
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        # a short poll interval, so that leaving the `with` block takes milliseconds
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @property
    def port(self) -> int:
        assert self._server is not None, "use the server in a `with` block"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """E.g. `http://127.0.0.1:PORT/v1` (`https://` with `tls`)."""
        scheme = "http" if self.tls is None else "https"
        return f"{scheme}://127.0.0.1:{self.port}/v1"
