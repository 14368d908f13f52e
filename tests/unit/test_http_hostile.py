"""The HTTP target against a hostile endpoint (`bench/servers/faults.py`): every misbehaviour is an
infrastructure error naming the fault, bounded in time and memory, with the key scrubbed."""

from __future__ import annotations

import asyncio
import ssl
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpcore
import pytest
import trustme

from bench.servers.faults import FaultServer
from noisefloor.targets import CaseInput, Outcome, RawSample
from noisefloor.targets.http import HttpTarget
from noisefloor.targets.http_response import AttemptKind, classify
from noisefloor.targets.http_spec import HttpSpec

KEY = "sk-noisefloor-SECRET-5f1c0e7a9b"


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with FaultServer(drip_s=0.1) as running:
        yield running


def _sample(base_url: str, fault: str, **settings: Any) -> RawSample:
    """One sample of `fault`, without retries unless asked, with the test key sent."""
    spec = HttpSpec.model_validate(
        {"base_url": base_url, "model": "m", "max_retries": 0, **settings}
    )
    target = HttpTarget(spec, key="k", spec={"host": "h", "model": "m"}, api_key=KEY)
    target.backoff_base_s = 0.005

    async def go() -> RawSample:
        try:
            return await target.sample(CaseInput(case_id="c", input=f"[fault:{fault}]"), 0, 1)
        finally:
            await target.aclose()

    sample = asyncio.run(go())
    assert KEY not in sample.model_dump_json()
    assert KEY[: len(KEY) // 2] not in sample.model_dump_json(), "a piece of the key is there"
    return sample


def _infra(sample: RawSample, error: str) -> None:
    assert sample.outcome is Outcome.INFRA and not sample.outcome.is_target_error
    assert sample.error == error


# -- the body cap and the deadline -----------------------------------------------------------


@pytest.mark.parametrize("fault", ["huge", "huge_chunked"])
def test_a_huge_body_is_cut_at_the_cap_and_never_held_whole(
    server: FaultServer, fault: str
) -> None:
    tracemalloc.start()
    try:
        sample = _sample(server.base_url, fault, max_response_bytes=2_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    _infra(sample, "infra: response body over 2000000 bytes after 1 attempt")
    assert peak < 8_000_000, f"{peak} bytes allocated for a body cut at 2 MB"


def test_a_body_declared_over_the_cap_is_refused_before_a_byte_of_it_arrives(
    server: FaultServer,
) -> None:
    started = time.perf_counter()
    sample = _sample(server.base_url, "declared_huge", max_response_bytes=1000, timeout_s=5)
    assert time.perf_counter() - started < 2
    _infra(sample, "infra: response body over 1000 bytes after 1 attempt")


def test_the_default_cap_is_ten_megabytes() -> None:
    spec = HttpSpec.model_validate({"base_url": "http://127.0.0.1:1/v1", "model": "m"})
    assert spec.max_response_bytes == 10_000_000


def test_a_body_just_over_a_small_cap_is_refused(server: FaultServer) -> None:
    sample = _sample(server.base_url, "ok", max_response_bytes=50)
    _infra(sample, "infra: response body over 50 bytes after 1 attempt")
    assert sample.envelope is not None and sample.envelope["status"] == 200


def test_the_cap_is_retried_as_any_infrastructure_error(server: FaultServer) -> None:
    sample = _sample(server.base_url, "ok", max_response_bytes=50, max_retries=1)
    _infra(sample, "infra: response body over 50 bytes after 2 attempts")


def test_a_server_sending_a_byte_at_a_time_is_stopped_by_the_attempt_deadline(
    server: FaultServer,
) -> None:
    started = time.perf_counter()
    # each byte arrives well within the per-read timeout: only the whole-attempt deadline stops it
    sample = _sample(server.base_url, "drip", timeout_s=0.6)
    assert time.perf_counter() - started < 1.2
    _infra(sample, "infra: timeout (no answer within 0.6 s) after 1 attempt")


# -- bodies that are not a completion --------------------------------------------------------


def test_invalid_json_says_so_with_the_parser_s_reason(server: FaultServer) -> None:
    sample = _sample(server.base_url, "invalid_json")
    assert sample.error is not None
    assert sample.error.startswith("infra: invalid JSON in response: "), sample.error


def test_nan_is_invalid_json(server: FaultServer) -> None:
    sample = _sample(server.base_url, "nan")
    assert sample.error is not None and "invalid JSON in response" in sample.error


def test_an_html_page_names_its_content_type_and_quotes_no_piece_of_the_key(
    server: FaultServer,
) -> None:
    sample = _sample(server.base_url, "html")
    _infra(sample, "infra: HTTP 200 with a text/html body, not JSON after 1 attempt")
    assert sample.envelope is not None
    assert str(sample.envelope["raw"]).startswith("<html><head><title>502 Bad Gateway")


def test_an_error_object_with_status_200_is_infra_with_its_message(server: FaultServer) -> None:
    sample = _sample(server.base_url, "error_200")
    _infra(
        sample,
        "infra: HTTP 200 with an error object: upstream overloaded (Bearer [REDACTED])"
        " after 1 attempt",
    )


def test_an_empty_body_says_so(server: FaultServer) -> None:
    _infra(_sample(server.base_url, "empty"), "infra: HTTP 200 with an empty body after 1 attempt")


@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        ("no_choices", "HTTP 200 whose choices is empty"),
        ("choices_text", "HTTP 200 whose choices is not a list"),
        ("message_text", "HTTP 200 whose choices[0].message is not an object"),
        ("odd_types", "HTTP 200 whose choices[0].finish_reason is not a string"),
    ],
)
def test_a_completion_of_the_wrong_shape_names_the_field(
    server: FaultServer, fault: str, problem: str
) -> None:
    _infra(_sample(server.base_url, fault), f"infra: {problem} after 1 attempt")


# -- the connection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        ("truncated", "peer closed connection without sending complete message body"),
        ("chunked_cut", "incomplete chunked read"),
        ("reset", "Connection reset by peer"),
        ("hang_up", "Server disconnected without sending a response"),
    ],
)
def test_a_cut_connection_is_infra_naming_the_cut(
    server: FaultServer, fault: str, problem: str
) -> None:
    sample = _sample(server.base_url, fault)
    assert sample.outcome is Outcome.INFRA and sample.error is not None
    assert sample.error.startswith("infra: ") and problem in sample.error, sample.error


@pytest.mark.parametrize("code", [302, 307])
def test_a_redirect_to_another_host_is_refused_without_a_retry(
    server: FaultServer, code: int
) -> None:
    sample = _sample(server.base_url, f"redirect_{code}", max_retries=3)
    where = f"http://localhost:{server.port}/v1/chat/completions"
    _infra(
        sample,
        f"config: redirect to another host refused ({code} to {where}):"
        " set base_url to where it points",
    )
    assert sample.attempts == 1


def test_https_to_a_plain_http_port_is_a_tls_error(server: FaultServer) -> None:
    sample = _sample(server.base_url.replace("http:", "https:"), "ok")
    assert sample.error is not None and sample.error.startswith("infra: ConnectError: ")
    assert "SSL" in sample.error, sample.error


def test_an_untrusted_certificate_is_a_tls_error() -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    trustme.CA().issue_cert("127.0.0.1").configure_cert(context)
    with FaultServer(tls=context) as tls:
        sample = _sample(tls.base_url, "ok")
    assert sample.error is not None and "CERTIFICATE_VERIFY_FAILED" in sample.error


# -- pure classification ---------------------------------------------------------------------


def _classify(status: int, content: bytes, **headers: str) -> Any:
    pairs = [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return classify(httpcore.Response(status, headers=pairs), content, 0.1, "http://h:1")


def test_valid_json_under_a_wrong_content_type_is_still_read() -> None:
    body = b'{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}'
    attempt = _classify(200, body, content_type="text/plain")
    assert attempt.kind is AttemptKind.DONE and attempt.text == "hi"


def test_a_redirect_on_the_same_host_is_not_followed_either() -> None:
    attempt = _classify(301, b"", location="/v2/chat/completions")
    assert attempt.kind is AttemptKind.CONFIG
    assert attempt.problem == (
        "redirect not followed (301 to /v2/chat/completions): set base_url to where it points"
    )


def test_a_served_model_that_is_not_a_string_is_not_recorded(server: FaultServer) -> None:
    sample = _sample(server.base_url, "odd_types")
    assert sample.envelope is not None and sample.envelope["served_model"] is None
    assert sample.envelope["raw"]["model"] == ["m"]
