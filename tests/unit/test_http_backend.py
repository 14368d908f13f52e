"""The asyncio network backend under httpcore's pool: plain and TLS requests against real servers
on loopback, and each failure mapped to the httpcore error the HTTP target classifies."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shutil
import socket
import ssl
import subprocess
import threading
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpcore
import pytest
import trustme

from bench.servers.llm import LlmServer
from noisefloor.targets.http_backend import AsyncioBackend


def _pool(ssl_context: ssl.SSLContext | None = None) -> httpcore.AsyncConnectionPool:
    return httpcore.AsyncConnectionPool(
        ssl_context=ssl_context, max_connections=2, network_backend=AsyncioBackend()
    )


async def _post(
    pool: httpcore.AsyncConnectionPool, url: str, timeout: float = 5.0
) -> httpcore.Response:
    limits = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    return await pool.request(
        "POST",
        url,
        headers=[(b"Content-Type", b"application/json")],
        content=b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}',
        extensions={"timeout": limits},
    )


def test_requests_share_a_kept_alive_connection() -> None:
    async def go(url: str) -> list[int]:
        async with _pool() as pool:
            statuses = [(await _post(pool, url)).status for _ in range(3)]
            assert len(pool.connections) == 1
            return statuses

    with LlmServer() as server:
        assert asyncio.run(go(server.base_url + "/chat/completions")) == [200, 200, 200]
        assert len(server.requests) == 3


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connecting is refused

        async def go() -> None:
            async with _pool() as pool:
                await _post(pool, f"http://127.0.0.1:{port}/v1/chat/completions")

        with pytest.raises(httpcore.ConnectError):
            asyncio.run(go())


def test_a_silent_server_is_a_read_timeout() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        async def go() -> None:
            async with _pool() as pool:
                await _post(pool, f"http://127.0.0.1:{port}/v1/chat/completions", timeout=0.2)

        with pytest.raises(httpcore.ReadTimeout, match="0.2 s"):
            asyncio.run(go())


def test_a_connection_the_server_closed_is_not_reused() -> None:
    """`is_readable` tells the pool that an idle connection was closed by the server."""

    async def go(url: str) -> tuple[int, int]:
        async with _pool() as pool:
            first = await _post(pool, url)
            stream = pool.connections[0]._connection._network_stream  # type: ignore[union-attr]
            assert stream.get_extra_info("is_readable") is False
            await asyncio.sleep(0.3)  # the server closes idle connections after 0.1 s
            assert stream.get_extra_info("is_readable") is True
            second = await _post(pool, url)
            return first.status, second.status

    server = _Server(("127.0.0.1", 0), _ClosingHandler)
    with _serving(server):
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        assert asyncio.run(go(url)) == (200, 200)
    assert server.connections == 2


def test_tls_through_start_tls(tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    server = _Server(("127.0.0.1", 0), _ClosingHandler)
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    server.socket = served.wrap_socket(server.socket, server_side=True)
    trusted = ssl.create_default_context(cafile=str(cert))

    async def go(url: str) -> bytes:
        async with _pool(trusted) as pool:
            response = await _post(pool, url)
            return response.content

    with _serving(server):
        url = f"https://localhost:{server.server_address[1]}/"
        assert asyncio.run(go(url)) == b"ok"

        async def untrusted() -> None:
            async with _pool(ssl.create_default_context()) as pool:
                await _post(pool, url)

        with pytest.raises(httpcore.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            asyncio.run(untrusted())


def test_a_tls_connection_to_a_silent_peer_is_closed_before_the_loop_ends() -> None:
    """Closing must not leave the TLS shutdown to outlive the loop: the transport would be freed
    by the garbage collector later, with a ResourceWarning blamed on whatever runs then."""
    ca = trustme.CA()
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(served)
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)

    async def go(url: str) -> bytes:
        async with _pool(trusted) as pool:
            response = await _post(pool, url)
            return response.content

    with _silent_tls_server(served) as port, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert asyncio.run(go(f"https://localhost:{port}/")) == b"ok"
        gc.collect()
    assert [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)] == []


@contextlib.contextmanager
def _silent_tls_server(context: ssl.SSLContext) -> Iterator[int]:
    """Answers one request over TLS, then neither reads nor closes until the `with` ends: the
    client's TLS shutdown never gets the peer's reply."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with context.wrap_socket(conn, server_side=True) as tls:
            tls.settimeout(5.0)
            received = b""
            while b"\r\n\r\n" not in received:
                received += tls.recv(65536)
            head, _, body = received.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(body) < length:
                body += tls.recv(65536)
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            done.wait(5.0)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join()
        listener.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    connections = 0


class _ClosingHandler(BaseHTTPRequestHandler):
    """Answers `ok`, keeps the connection 0.1 s, then closes it."""

    protocol_version = "HTTP/1.1"
    timeout = 0.1

    def setup(self) -> None:
        super().setup()
        assert isinstance(self.server, _Server)
        self.server.connections += 1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _serving(server: ThreadingHTTPServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
