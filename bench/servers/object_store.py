"""An S3-compatible server on loopback for the remote store's tests and bench: moto's server mode
in a process of its own that dies with the process that started it, on a port the system picks.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import threading
import time
from types import TracebackType
from typing import Self

__all__ = ["S3_ENV", "S3Server"]

#: Credentials moto accepts; the secret is one a test can look for in every file written.
S3_ENV = {
    "AWS_ACCESS_KEY_ID": "nf-test-access-key",
    "AWS_SECRET_ACCESS_KEY": "nf-test-secret-key-never-written",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


class S3Server:
    """moto's S3 server, started on entering a `with` block and stopped on leaving it."""

    def __init__(self) -> None:
        self.url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._drain: threading.Thread | None = None

    @property
    def pid(self) -> int:
        """The server's process id (its process group's, too)."""
        assert self._process is not None
        return self._process.pid

    def __enter__(self) -> Self:
        # this very file runs the server (`_serve`): a test worker killed with no chance to
        # leave its `with` block leaves no server behind
        self._process = subprocess.Popen(
            [sys.executable, "-P", __file__, str(os.getpid())],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self._process.stderr is not None
        deadline = time.monotonic() + 60
        seen = b""
        while time.monotonic() < deadline:
            line = self._process.stderr.readline()
            seen += line
            found = re.search(rb"Running on (http://127\.0\.0\.1:\d+)", line)
            if found:
                self.url = found[1].decode()
                break
            if not line and self._process.poll() is not None:
                break
        if not self.url:
            self.kill()
            raise RuntimeError(f"moto's server did not start: {seen.decode(errors='replace')}")
        # its log goes on being written: drained to nowhere, so a full pipe never stalls it
        self._drain = threading.Thread(target=self._process.stderr.read, daemon=True)
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
        if self._process is not None and self._process.stderr is not None:
            self._process.stderr.close()

    def bucket(self, name: str) -> str:
        """Create bucket `name`; its name."""
        host, port = self.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("PUT", f"/{name}")
        answer = connection.getresponse()
        answer.read()
        connection.close()
        if answer.status != 200:
            raise RuntimeError(f"creating bucket {name}: HTTP {answer.status}")
        return name

    def env(self) -> dict[str, str]:
        """The variables a command reaches this server with, as the AWS SDKs read them."""
        return {**S3_ENV, "AWS_ENDPOINT_URL": self.url}


def _serve(parent: int) -> None:
    """The server's process: moto's server, with a watchdog that kills its process group once
    the process that started it is gone (its parent changes), however that process ended."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()
    from moto.server import main

    main(["-H", "127.0.0.1", "-p", "0"])


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
