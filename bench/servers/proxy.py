"""A forward proxy on loopback: CONNECT tunnels and absolute-form requests, counted.

Optionally asks for Basic credentials, answering 407 without them, as a corporate proxy does.
"""

from __future__ import annotations

import base64
import selectors
import socket
import ssl
import threading
from types import TracebackType

__all__ = ["ProxyServer"]

#: Seconds any socket of the proxy waits before it gives up: no test hangs on it.
_TIMEOUT_S = 5.0


class ProxyServer:
    """Serves on 127.0.0.1 in background threads while in a `with` block."""

    def __init__(
        self, credentials: tuple[str, str] | None = None, tls: ssl.SSLContext | None = None
    ) -> None:
        """Configure the proxy; it starts on entering the `with` block.

        Args:
            credentials: User and password the proxy requires, or None to require none.
            tls: Speak TLS to clients with this server context (an `https://` proxy).
        """
        self.tls = tls
        self.expected = (
            None
            if credentials is None
            else "Basic " + base64.b64encode(":".join(credentials).encode()).decode()
        )
        self.tunnels = 0
        """CONNECT requests answered with a tunnel."""
        self.forwarded = 0
        """Absolute-form requests passed on."""
        self.refused = 0
        """Requests answered with 407."""
        self.targets: list[str] = []
        """The `host:port` of every request, in order."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._listener: socket.socket | None = None

    @property
    def url(self) -> str:
        """E.g. `http://127.0.0.1:PORT` (`https://` with `tls`)."""
        assert self._listener is not None, "use the proxy in a `with` block"
        scheme = "http" if self.tls is None else "https"
        return f"{scheme}://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> ProxyServer:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.02)
        self._spawn(self._accept)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        for thread in list(self._threads):
            thread.join(_TIMEOUT_S)
        assert self._listener is not None
        self._listener.close()

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(_TIMEOUT_S)
            self._spawn(self._serve, conn)

    def _serve(self, client: socket.socket) -> None:
        if self.tls is not None:
            try:
                client = self.tls.wrap_socket(client, server_side=True)
            except OSError:
                client.close()
                return
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(65536)
                if not chunk:
                    return
                head += chunk
            head, _, rest = head.partition(b"\r\n\r\n")
            first, *lines = head.decode("latin-1").split("\r\n")
            method, target, version = first.split(" ")
            headers = {
                k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)
            }
            if self.expected is not None and headers.get("proxy-authorization") != self.expected:
                with self._lock:
                    self.refused += 1
                client.sendall(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                    b'Proxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n'
                )
                return
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                with self._lock:
                    self.tunnels += 1
                    self.targets.append(target)
                with socket.create_connection((host, int(port)), timeout=_TIMEOUT_S) as upstream:
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    if rest:
                        upstream.sendall(rest)
                    self._relay(client, upstream)
                return
            # absolute form: one request per connection, passed on in origin form
            authority, _, path = target.removeprefix("http://").partition("/")
            host, _, port = authority.rpartition(":")
            with self._lock:
                self.forwarded += 1
                self.targets.append(authority)
            length = int(headers.get("content-length", "0"))
            while len(rest) < length:
                rest += client.recv(65536)
            kept = [
                line
                for line in lines
                if line.partition(":")[0].strip().lower()
                not in ("proxy-authorization", "connection")
            ]
            request = "\r\n".join([f"{method} /{path} {version}", *kept, "Connection: close"])
            with socket.create_connection((host, int(port)), timeout=_TIMEOUT_S) as upstream:
                upstream.sendall(request.encode("latin-1") + b"\r\n\r\n" + rest)
                while chunk := upstream.recv(65536):
                    client.sendall(chunk)

    def _relay(self, a: socket.socket, b: socket.socket) -> None:
        """Copy bytes both ways until one side closes or the proxy stops."""
        with selectors.DefaultSelector() as selector:
            selector.register(a, selectors.EVENT_READ, b)
            selector.register(b, selectors.EVENT_READ, a)
            while not self._stop.is_set():
                for key, _ in selector.select(0.02):
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    try:
                        data = source.recv(65536)
                        if not data:
                            return
                        key.data.sendall(data)
                    except OSError:
                        return
