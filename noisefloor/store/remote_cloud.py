"""S3 (and S3-compatible servers), Google Cloud Storage and Azure Blob Storage as a remote, through
obstore: bounded timeouts and retries, conditional writes, each SDK's own credential chain.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# obstore (Rust's object_store) is imported here only, when a cloud remote is opened: it serves
# the three clouds from one wheel, with conditional writes, retries and credential chains
import obstore
from obstore.exceptions import (
    AlreadyExistsError,
    PermissionDeniedError,
    PreconditionError,
    UnauthenticatedError,
)
from obstore.store import from_url

from noisefloor.settings import (
    REMOTE_CONNECT_TIMEOUT_S,
    REMOTE_REQUEST_TIMEOUT_S,
    REMOTE_RETRIES,
    REMOTE_RETRY_TIMEOUT_S,
)
from noisefloor.store.remote import Fetched, Moved, Remote

__all__ = ["CloudRemote"]

#: What a 404 that is no missing object holds: the bucket or container itself is missing.
_NO_CONTAINER = (("NoSuchBucket", "bucket"), ("ContainerNotFound", "container"))
#: What a failed request's text holds, and the cause it is reported as (the first match wins):
#: each cause a cloud's answer names by its code, then what the connection itself met.
_CAUSES = (
    (
        "InvalidAccessKeyId",
        "unknown access key: the server knows no such key id (check AWS_ACCESS_KEY_ID or the profile)",
    ),
    (
        "SignatureDoesNotMatch",
        "bad signature: the secret key does not match the access key id (check AWS_SECRET_ACCESS_KEY)",
    ),
    (
        "RequestTimeTooSkewed",
        "clock skew: this machine's clock differs too much from the server's (sync it, e.g. with NTP)",
    ),
    (
        "AuthenticationFailed",
        "bad signature: the account key does not match the account (check AZURE_STORAGE_ACCOUNT_KEY)",
    ),
    (
        "AuthorizationFailure",
        "not authorized: the server failed to authenticate the request (check the account key or token)",
    ),
    ("SlowDown", "throttled (503 SlowDown) past its retries"),
    ("TooManyRequests", "throttled (429 Too Many Requests) past its retries"),
    ("ServerBusy", "throttled (503 ServerBusy) past its retries"),
    ("dns error", "the host name does not resolve"),
    ("Connection refused", "connection refused"),
    ("timed out", "timed out"),
    ("connection reset", "connection reset"),
)


def _cause(exc: BaseException, elapsed: float = 0.0) -> str:
    """The cause of a failed request in a few words, never the SDK's whole chain of frames."""
    text = str(exc)
    for needle, cause in _CAUSES:
        if needle.lower() in text.lower():
            return cause
    if isinstance(exc, PermissionDeniedError):
        return "access denied (403): the credentials may not use this bucket"
    if isinstance(exc, UnauthenticatedError):
        return "not authenticated: no valid credentials found in the SDK's standard chain"
    if elapsed >= REMOTE_REQUEST_TIMEOUT_S:
        # a server that accepts a connection and never answers (frozen) fails the request's
        # own timeout, which the SDK words as "error sending request"
        return f"timed out (no answer in {elapsed:.0f} s)"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first[:300]


def _endpoint(scheme: str, environ: Mapping[str, str]) -> str | None:
    """The endpoint the user named for a cloud, from the variables its SDK reads: an
    S3-compatible server's (`AWS_ENDPOINT_URL`), Azure's (`AZURE_STORAGE_ENDPOINT`, or the
    emulator's with `AZURE_STORAGE_USE_EMULATOR`), GCS's (`GOOGLE_BASE_URL`, or a service
    account file's `gcs_base_url`); None for the cloud's own."""
    names: tuple[str, ...]
    if scheme == "s3":
        names = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT")
    elif scheme == "az":
        names = ("AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT")
        if environ.get("AZURE_STORAGE_USE_EMULATOR", "").lower() in ("1", "true"):
            return environ.get("AZURITE_BLOB_STORAGE_URL") or "http://127.0.0.1:10000"
    else:
        names = ("GOOGLE_BASE_URL",)
        for name in ("GOOGLE_SERVICE_ACCOUNT", "GOOGLE_SERVICE_ACCOUNT_PATH"):
            if environ.get(name) and not any(environ.get(n) for n in names):
                return _gcs_base_url(environ[name])
    return next((environ[n] for n in names if environ.get(n)), None)


def _gcs_base_url(path: str) -> str | None:
    """The `gcs_base_url` of a service account file (an emulator's), if it names one."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # the SDK reports a file it cannot read
    url = doc.get("gcs_base_url") if isinstance(doc, dict) else None
    return str(url) if url else None


class CloudRemote(Remote):
    """A bucket (and prefix) of S3, GCS or Azure. An endpoint of the user's (an S3-compatible
    server, an emulator) comes from each SDK's own variables (`_endpoint`)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        parts = urlsplit(url)
        self._scheme = parts.scheme
        self._container = parts.netloc
        endpoint = _endpoint(parts.scheme, os.environ)
        self._server = endpoint
        client: Any = {
            "connect_timeout": timedelta(seconds=REMOTE_CONNECT_TIMEOUT_S),
            "timeout": timedelta(seconds=REMOTE_REQUEST_TIMEOUT_S),
            # a plain-HTTP endpoint is one the user named (a server on the LAN, an emulator)
            "allow_http": bool(endpoint and endpoint.startswith("http://")),
        }
        retry: Any = {
            "max_retries": REMOTE_RETRIES,
            "retry_timeout": timedelta(seconds=REMOTE_RETRY_TIMEOUT_S),
            "backoff": {
                "init_backoff": timedelta(milliseconds=100),
                "max_backoff": timedelta(seconds=5),
                "base": 2,
            },
        }
        try:
            self._store = from_url(url, client_options=client, retry_config=retry)
        except Exception as exc:  # a URL or configuration obstore refuses
            raise self.failed("(none)", f"not usable: {_cause(exc)}") from None

    @property
    def server(self) -> str:
        return self._server or f"{self._scheme}:// (the cloud's own endpoint)"

    def _failed(self, key: str, exc: BaseException, started: float) -> Exception:
        elapsed = time.monotonic() - started
        for code, what in _NO_CONTAINER:
            if code in str(exc):
                return self.failed(key, f"no such {what} {self._container!r}")
        return self.failed(key, _cause(exc, elapsed))

    def _version(self, meta: Any) -> str:
        """The version a conditional write names: GCS moves an object by its generation, the
        others by the ETag."""
        if self._scheme == "gs":
            return str(meta.get("version") or "")
        return str(meta.get("e_tag") or "")

    def get(self, key: str) -> Fetched | None:
        self.counted("get")
        started = time.monotonic()
        try:
            got = obstore.get(self._store, key)
            data = bytes(got.bytes())
        except FileNotFoundError as exc:  # obstore's NotFoundError; a missing bucket too
            if any(code in str(exc) for code, _ in _NO_CONTAINER):
                raise self._failed(key, exc, started) from None
            return None
        except Exception as exc:
            raise self._failed(key, exc, started) from None
        return Fetched(data, self._version(got.meta))

    def put_new(self, key: str, data: bytes) -> bool:
        self.counted("put")
        started = time.monotonic()
        try:
            obstore.put(self._store, key, data, mode="create")
        except AlreadyExistsError:
            return False
        except PreconditionError:  # some servers answer If-None-Match with 412 alone
            return False
        except Exception as exc:
            raise self._failed(key, exc, started) from None
        return True

    def put_over(self, key: str, data: bytes, version: str | None) -> str:
        self.counted("put")
        started = time.monotonic()
        mode: Any = "create"
        if version is not None:
            # GCS refuses an update that names no generation before any request is sent
            mode = {"version": version} if self._scheme == "gs" else {"e_tag": version}
        try:
            written = obstore.put(self._store, key, data, mode=mode)
        except (AlreadyExistsError, PreconditionError):
            raise Moved(key) from None
        except Exception as exc:
            raise self._failed(key, exc, started) from None
        return self._version(written)

    def put_any(self, key: str, data: bytes) -> str:
        self.counted("put")
        started = time.monotonic()
        try:
            written = obstore.put(self._store, key, data, mode="overwrite")
        except Exception as exc:
            raise self._failed(key, exc, started) from None
        return self._version(written)

    def delete(self, key: str) -> None:
        self.counted("delete")
        started = time.monotonic()
        try:
            obstore.delete(self._store, key)
        except FileNotFoundError:
            return
        except Exception as exc:
            raise self._failed(key, exc, started) from None

    def keys(self, prefix: str) -> list[str]:
        self.counted("list")
        started = time.monotonic()
        try:
            pages = obstore.list(self._store, prefix or None)
            return sorted(str(meta["path"]) for page in pages for meta in page)
        except Exception as exc:
            raise self._failed(prefix or "(all)", exc, started) from None
