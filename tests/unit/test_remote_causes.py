"""Each cause an object store's SDK reports reads as its own plain message, and a remote's URL
forms and endpoints are the ones the client reads."""

from __future__ import annotations

import json

import pytest
from obstore.exceptions import GenericError, PermissionDeniedError

from noisefloor.settings import REMOTE_REQUEST_TIMEOUT_S
from noisefloor.store.remote_cloud import _cause, _endpoint


def _body(code: str) -> str:
    return (
        "Error performing GET http://127.0.0.1:9000/b/k in 3ms - Server returned non-2xx "
        f"status code: 403 Forbidden: <Error><Code>{code}</Code></Error>"
    )


@pytest.mark.parametrize(
    ("error", "elapsed", "says"),
    [
        (PermissionDeniedError(_body("InvalidAccessKeyId")), 0.0, "unknown access key"),
        (PermissionDeniedError(_body("SignatureDoesNotMatch")), 0.0, "bad signature"),
        (PermissionDeniedError(_body("RequestTimeTooSkewed")), 0.0, "clock skew"),
        (PermissionDeniedError(_body("AccessDenied")), 0.0, "access denied (403)"),
        (GenericError(_body("SlowDown")), 0.0, "throttled (503 SlowDown)"),
        (GenericError("HTTP error: error sending request"), 10.0, "timed out"),
        (GenericError("HTTP error: error sending request"), 0.1, "error sending request"),
        (GenericError("dns error: failed to lookup address"), 0.0, "does not resolve"),
    ],
    ids=["unknown-key", "signature", "skew", "denied", "throttled", "frozen", "other", "dns"],
)
def test_each_cause_reads_as_its_own_message(error, elapsed, says):
    assert says in _cause(error, elapsed)


def test_a_frozen_server_is_named_timed_out_from_the_requests_own_bound():
    said = _cause(GenericError("HTTP error: error sending request"), REMOTE_REQUEST_TIMEOUT_S)
    assert said.startswith("timed out")


def test_each_clouds_endpoint_comes_from_its_sdks_variables(tmp_path):
    assert _endpoint("s3", {"AWS_ENDPOINT_URL": "http://minio:9000"}) == "http://minio:9000"
    assert _endpoint("s3", {}) is None
    emulator = {"AZURE_STORAGE_USE_EMULATOR": "true"}
    assert _endpoint("az", emulator) == "http://127.0.0.1:10000"
    assert _endpoint("az", {"AZURE_STORAGE_ENDPOINT": "http://h:1/acct"}) == "http://h:1/acct"
    account = tmp_path / "account.json"
    account.write_text(json.dumps({"gcs_base_url": "http://127.0.0.1:4443"}))
    assert _endpoint("gs", {"GOOGLE_SERVICE_ACCOUNT": str(account)}) == "http://127.0.0.1:4443"
    assert _endpoint("gs", {"GOOGLE_BASE_URL": "http://g:1"}) == "http://g:1"
