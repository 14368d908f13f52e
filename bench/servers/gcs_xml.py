"""A Google Cloud Storage stand-in on loopback that speaks the XML API as GCS documents it (the
requests obstore makes): objects by bucket and name, each write a new generation, a write's
`x-goog-if-generation-match` honoured (0: only if absent), a listing as `list-type=2`.

It records each write's precondition, so a test sees a pointer moved by its generation.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tempfile
import threading
from email.utils import formatdate
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

from bench.servers.loopback import LoopbackHandler, LoopbackServer

__all__ = ["GcsXmlServer"]


def _error(code: str, message: str) -> bytes:
    return (
        f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code>"
        f"<Message>{message}</Message></Error>"
    ).encode()


class _Handler(LoopbackHandler):
    server: _Server

    def _where(self) -> tuple[str, str, dict[str, list[str]]]:
        parts = urlsplit(self.path)
        bucket, _, name = parts.path.lstrip("/").partition("/")
        return unquote(bucket), unquote(name), parse_qs(parts.query)

    def _send(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if body and "Content-Type" not in (headers or {}):
            self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _meta(self, data: bytes, generation: int) -> dict[str, str]:
        return {
            "ETag": f'"{hashlib.md5(data).hexdigest()}"',  # noqa: S324 (GCS's ETag is an MD5)
            "x-goog-generation": str(generation),
            "Last-Modified": formatdate(usegmt=True),
        }

    def do_GET(self) -> None:
        bucket, name, query = self._where()
        with self.server.lock:
            if bucket not in self.server.buckets:
                self._send(404, _error("NoSuchBucket", "The specified bucket does not exist."))
                return
            if not name and query.get("list-type") == ["2"]:
                self._send(200, self.server.listing(bucket, query.get("prefix", [""])[0]))
                return
            held = self.server.objects.get((bucket, name))
        if held is None:
            self._send(404, _error("NoSuchKey", "The specified key does not exist."))
            return
        data, generation = held
        headers = {**self._meta(data, generation), "Content-Type": "application/octet-stream"}
        self._send(200, data, headers)

    do_HEAD = do_GET

    def do_PUT(self) -> None:
        bucket, name, _ = self._where()
        data = self.read_body()
        match = self.headers.get("x-goog-if-generation-match")
        with self.server.lock:
            self.server.writes.append((name, match))
            if bucket not in self.server.buckets:
                self._send(404, _error("NoSuchBucket", "The specified bucket does not exist."))
                return
            held = self.server.objects.get((bucket, name))
            now = held[1] if held is not None else 0
            if match is not None and int(match) != now:
                self._send(
                    412,
                    _error(
                        "PreconditionFailed",
                        "At least one of the pre-conditions you specified did not hold.",
                    ),
                )
                return
            generation = next(self.server.generations)
            self.server.objects[(bucket, name)] = (data, generation)
        self._send(200, b"", self._meta(data, generation))

    def do_DELETE(self) -> None:
        bucket, name, _ = self._where()
        with self.server.lock:
            gone = self.server.objects.pop((bucket, name), None)
        self._send(204 if gone is not None else 404)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.buckets: set[str] = set()
        self.objects: dict[tuple[str, str], tuple[bytes, int]] = {}
        self.generations = itertools.count(1_700_000_000_000_001)
        self.writes: list[tuple[str, str | None]] = []
        """Each PUT's object name and its `x-goog-if-generation-match`, in order."""

    def listing(self, bucket: str, prefix: str) -> bytes:
        rows = "".join(
            f"<Contents><Key>{escape(name)}</Key><Size>{len(data)}</Size>"
            f"<LastModified>2026-01-01T00:00:00.000Z</LastModified>"
            f"<ETag>&quot;{hashlib.md5(data).hexdigest()}&quot;</ETag></Contents>"  # noqa: S324
            for (b, name), (data, _) in sorted(self.objects.items())
            if b == bucket and name.startswith(prefix)
        )
        return (
            "<?xml version='1.0' encoding='UTF-8'?><ListBucketResult>"
            f"<Name>{bucket}</Name><Prefix>{escape(prefix)}</Prefix><KeyCount>0</KeyCount>"
            f"<IsTruncated>false</IsTruncated>{rows}</ListBucketResult>"
        ).encode()


class GcsXmlServer(LoopbackServer[_Server]):
    """The stand-in, with the service account file a client reaches it with (no OAuth)."""

    def __init__(self) -> None:
        super().__init__()
        self._account = Path(tempfile.mkdtemp(prefix="nf-gcs-")) / "account.json"

    def make_server(self) -> _Server:
        return _Server()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def bucket(self, name: str) -> str:
        """Create bucket `name`; its name."""
        assert self._server is not None
        with self._server.lock:
            self._server.buckets.add(name)
        return name

    @property
    def writes(self) -> list[tuple[str, str | None]]:
        assert self._server is not None
        with self._server.lock:
            return list(self._server.writes)

    def env(self) -> dict[str, str]:
        """The variables a command reaches this server with: a service account file naming it
        as `gcs_base_url`, with OAuth off, as GCS's emulators are reached."""
        doc = {
            "gcs_base_url": self.url,
            "disable_oauth": True,
            "client_email": "",
            "private_key": "",
            "private_key_id": "",
        }
        self._account.write_text(json.dumps(doc), encoding="utf-8")
        return {"GOOGLE_SERVICE_ACCOUNT": str(self._account)}
