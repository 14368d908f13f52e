"""S3 (and S3-compatible servers), Google Cloud Storage and Azure Blob Storage as a remote, through
obstore: bounded timeouts and retries, conditional writes, each SDK's own credential chain.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

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
_NO_CONTAINER = (("NoSuchBucket", "no such bucket"), ("ContainerNotFound", "no such container"))
#: What a failed request's text holds, and the cause it is reported as (the first match wins).
_CAUSES = (
    *_NO_CONTAINER,
    ("dns error", "the host name does not resolve"),
    ("Connection refused", "connection refused"),
    ("timed out", "timed out"),
    ("SlowDown", "throttled (503 SlowDown) past its retries"),
    ("connection reset", "connection reset"),
)


def _cause(exc: BaseException) -> str:
    """The cause of a failed request in a few words, never the SDK's whole chain of frames."""
    if isinstance(exc, PermissionDeniedError):
        return "access denied (403): the credentials may not use this bucket"
    if isinstance(exc, UnauthenticatedError):
        return "not authenticated: no valid credentials found in the SDK's standard chain"
    text = str(exc)
    for needle, cause in _CAUSES:
        if needle.lower() in text.lower():
            return cause
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first[:300]


class CloudRemote(Remote):
    """A bucket (and prefix) of S3, GCS or Azure; an S3-compatible server's endpoint comes from
    `AWS_ENDPOINT_URL`, as the AWS SDKs take it."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        client: Any = {
            "connect_timeout": timedelta(seconds=REMOTE_CONNECT_TIMEOUT_S),
            "timeout": timedelta(seconds=REMOTE_REQUEST_TIMEOUT_S),
            # a plain-HTTP endpoint is one the user named (a server on the LAN or loopback)
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

    def get(self, key: str) -> Fetched | None:
        self.counted("get")
        try:
            got = obstore.get(self._store, key)
            data = bytes(got.bytes())
        except FileNotFoundError as exc:  # obstore's NotFoundError; a missing bucket too
            if any(needle in str(exc) for needle, _ in _NO_CONTAINER):
                raise self.failed(key, _cause(exc)) from None
            return None
        except Exception as exc:
            raise self.failed(key, _cause(exc)) from None
        return Fetched(data, str(got.meta.get("e_tag") or ""))

    def put_new(self, key: str, data: bytes) -> bool:
        self.counted("put")
        try:
            obstore.put(self._store, key, data, mode="create")
        except AlreadyExistsError:
            return False
        except PreconditionError:  # some servers answer If-None-Match with 412 alone
            return False
        except Exception as exc:
            raise self.failed(key, _cause(exc)) from None
        return True

    def put_over(self, key: str, data: bytes, version: str | None) -> str:
        self.counted("put")
        mode: Any = "create" if version is None else {"e_tag": version}
        try:
            written = obstore.put(self._store, key, data, mode=mode)
        except (AlreadyExistsError, PreconditionError):
            raise Moved(key) from None
        except Exception as exc:
            raise self.failed(key, _cause(exc)) from None
        return str(written.get("e_tag") or "")

    def keys(self, prefix: str) -> list[str]:
        self.counted("list")
        try:
            pages = obstore.list(self._store, prefix or None)
            return sorted(str(meta["path"]) for page in pages for meta in page)
        except Exception as exc:
            raise self.failed(prefix or "(all)", _cause(exc)) from None
