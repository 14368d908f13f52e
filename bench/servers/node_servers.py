"""Object stores from npm on loopback for the remote store's tests and bench: s3rver (an S3 server
that ignores conditional writes) and Azurite (Microsoft's Azure Storage emulator), each in a
process group that dies with the process that started it, on a port the system picks.

They are installed outside the repository: `npm install --prefix DIR s3rver@3.7.1
azurite@3.35.0`, DIR from NOISEFLOOR_NODE_SERVERS (default `~/.cache/noisefloor-node`), as
`.ci/run` does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from email.utils import formatdate
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

__all__ = ["AZURITE_ACCOUNT", "Azurite", "NodeServer", "S3rver", "missing"]

#: Azurite's well-known development account and key (public, in Microsoft's documentation).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
#: s3rver's one account.
S3RVER_KEY = "S3RVER"


def _bin(name: str) -> Path:
    base = os.environ.get("NOISEFLOOR_NODE_SERVERS") or str(Path.home() / ".cache/noisefloor-node")
    return Path(base) / "node_modules" / ".bin" / name


def missing(name: str) -> str | None:
    """Why the npm server `name` cannot start here (no node, or the package not installed);
    None when it can."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not _bin(name).exists():
        return (
            f"{name} is not installed under {_bin(name).parents[1]} (npm install --prefix "
            "$NOISEFLOOR_NODE_SERVERS s3rver@3.7.1 azurite@3.35.0; .ci/run does)"
        )
    return None


class NodeServer:
    """A server from npm, started on entering a `with` block and killed on leaving it."""

    name = ""
    #: What the server prints once it listens, its URL (or host:port) the first group.
    ready = re.compile(rb"")

    def __init__(self) -> None:
        self.url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._drain: threading.Thread | None = None
        self._dir = tempfile.mkdtemp(prefix=f"nf-{self.name}-")

    def argv(self) -> list[str]:
        """The server's own command line (after its executable)."""
        raise NotImplementedError

    @property
    def pid(self) -> int:
        """The process group's id (the watchdog's process)."""
        assert self._process is not None
        return self._process.pid

    def __enter__(self) -> Self:
        why = missing(self.name)
        if why is not None:
            raise RuntimeError(why)
        argv = [str(_bin(self.name)), *self.argv()]
        self._process = subprocess.Popen(
            [sys.executable, "-P", __file__, str(os.getpid()), *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self._dir,
        )
        assert self._process.stdout is not None
        deadline, seen = time.monotonic() + 60, b""
        while time.monotonic() < deadline:
            line = self._process.stdout.readline()
            seen += line
            found = self.ready.search(line)
            if found:
                where = found[1].decode()
                self.url = where if where.startswith("http") else f"http://{where}"
                break
            if not line and self._process.poll() is not None:
                break
        if not self.url:
            self.kill()
            raise RuntimeError(f"{self.name} did not start: {seen.decode(errors='replace')}")
        self._drain = threading.Thread(target=self._process.stdout.read, daemon=True)
        self._drain.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()

    def kill(self) -> None:
        """SIGKILL the server (a test's outage), once."""
        if self._process is not None and self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
        if self._drain is not None:
            self._drain.join()
        if self._process is not None and self._process.stdout is not None:
            self._process.stdout.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def freeze(self) -> None:
        """SIGSTOP the server: it keeps its connections and answers nothing."""
        os.killpg(self.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.killpg(self.pid, signal.SIGCONT)


class S3rver(NodeServer):
    """s3rver 3.7.1: an S3 server that answers `If-None-Match: *` and a stale `If-Match` with
    200 and overwrites (what `remote_trust.probe` finds)."""

    name = "s3rver"
    ready = re.compile(rb"listening on (\S+:\d+)")

    def argv(self) -> list[str]:
        return ["-d", os.path.join(self._dir, "data"), "-a", "127.0.0.1", "-p", "0", "--silent"]

    def bucket(self, name: str) -> str:
        """Create bucket `name`; its name."""
        parts = urlsplit(self.url)
        assert parts.hostname is not None and parts.port is not None
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        connection.request("PUT", f"/{name}")
        answer = connection.getresponse()
        answer.read()
        connection.close()
        if answer.status != 200:
            raise RuntimeError(f"creating bucket {name}: HTTP {answer.status}")
        return name

    def env(self) -> dict[str, str]:
        """The variables a command reaches this server with."""
        return {
            "AWS_ACCESS_KEY_ID": S3RVER_KEY,
            "AWS_SECRET_ACCESS_KEY": S3RVER_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_ENDPOINT_URL": self.url,
        }


class Azurite(NodeServer):
    """Azurite's Blob service, in memory: it honours If-None-Match and If-Match."""

    name = "azurite-blob"
    ready = re.compile(rb"listens on (http://\S+)")

    def argv(self) -> list[str]:
        return [
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            "0",
            "--inMemoryPersistence",
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--silent",
        ]

    def container(self, name: str) -> str:
        """Create container `name` (a request signed with the account's key); its name."""
        parts = urlsplit(self.url)
        assert parts.hostname is not None and parts.port is not None
        path = f"/{AZURITE_ACCOUNT}/{name}"
        headers = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
        signed = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
        text = "PUT\n" + "\n" * 11 + signed + f"/{AZURITE_ACCOUNT}{path}\nrestype:container"
        digest = hmac.new(base64.b64decode(AZURITE_KEY), text.encode(), hashlib.sha256).digest()
        headers["Authorization"] = (
            f"SharedKey {AZURITE_ACCOUNT}:{base64.b64encode(digest).decode()}"
        )
        headers["Content-Length"] = "0"
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        connection.request("PUT", f"{path}?restype=container", headers=headers)
        answer = connection.getresponse()
        body = answer.read()
        connection.close()
        if answer.status != 201:
            raise RuntimeError(f"creating container {name}: HTTP {answer.status}: {body[:200]!r}")
        return name

    def env(self) -> dict[str, str]:
        """The variables a command reaches this emulator with: its account and a plain-HTTP
        endpoint, as the Azure SDKs read them."""
        return {
            "AZURE_STORAGE_ACCOUNT_NAME": AZURITE_ACCOUNT,
            "AZURE_STORAGE_ACCOUNT_KEY": AZURITE_KEY,
            "AZURE_STORAGE_ENDPOINT": f"{self.url}/{AZURITE_ACCOUNT}",
        }


def _serve(parent: int, argv: list[str]) -> None:
    """The watchdog's process: runs the server as its child, passing its output on, and kills
    its process group once the process that started it is gone."""
    child = subprocess.Popen(argv)

    def watch() -> None:
        while os.getppid() == parent and child.poll() is None:
            time.sleep(0.5)
        os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()
    child.wait()
    os.killpg(0, signal.SIGKILL)


if __name__ == "__main__":
    _serve(int(sys.argv[1]), sys.argv[2:])
