"""The HTTP target against the loopback chat-completions stand-in in `bench/servers/llm.py`.

Backoff is shortened on every target so that retries cost milliseconds; the file runs in seconds.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import socket
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
import yaml

from bench.servers.llm import LlmServer
from bench.servers.loopback import LoopbackServer
from noisefloor import __version__
from noisefloor.errors import SuiteError, TargetConfigError
from noisefloor.suite.load import load_suite
from noisefloor.suite.targets import build_target
from noisefloor.targets import CaseInput, Outcome, RawSample, Target
from noisefloor.targets.http import HttpTarget
from noisefloor.targets.http_retry import backoff_delay, parse_retry_after
from noisefloor.targets.http_spec import HttpSpec
from tests.builders import write_suite

T = TypeVar("T")
KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as running:
        yield running


def _target(base_url: str, api_key: str | None = None, **settings: Any) -> HttpTarget:
    """A target for `base_url` with millisecond backoff; `settings` are HttpSpec fields."""
    spec = HttpSpec.model_validate({"base_url": base_url, "model": "test-model", **settings})
    target = HttpTarget(spec, key="k", spec={"host": "h", "model": spec.model}, api_key=api_key)
    target.backoff_base_s = 0.005
    return target


def _drive(target: Target, make: Callable[[], Awaitable[T]]) -> T:
    """Run `make()` on a fresh event loop, closing the target afterwards."""

    async def go() -> T:
        try:
            return await make()
        finally:
            await target.aclose()

    return asyncio.run(go())


def _many(target: Target, inputs: list[str], concurrency: int | None = None) -> list[RawSample]:
    """Sample every input at once, as the engine does with enough jobs."""
    jobs = concurrency or len(inputs)

    async def all_at_once() -> list[RawSample]:
        calls = [
            target.sample(CaseInput(case_id=f"c{i}", input=text), 0, jobs)
            for i, text in enumerate(inputs)
        ]
        return list(await asyncio.gather(*calls))

    return _drive(target, all_at_once)


def _one(target: Target, text: str, repeat: int = 0) -> RawSample:
    return _drive(target, lambda: target.sample(CaseInput(case_id="c1", input=text), repeat, 1))


# -- answers and the envelope ----------------------------------------------------------------


def test_a_system_message_changes_the_request_hash_not_the_prompt_hash(server: LlmServer) -> None:
    plain = _one(_target(server.base_url), "capital of France? Paris").envelope
    system = _one(_target(server.base_url, system="Be brief."), "capital of France? Paris").envelope
    assert plain is not None and system is not None
    assert plain["prompt_sha"] == system["prompt_sha"]
    assert plain["request_sha"] != system["request_sha"]


def test_answer_and_envelope(server: LlmServer) -> None:
    target = _target(server.base_url, temperature=0.0, seed=7, max_tokens=64)
    sample = _one(target, "capital of France? Paris")

    assert sample.outcome is Outcome.OK and sample.error is None
    assert sample.kind == "http" and sample.case_id == "c1" and sample.attempts == 1
    assert orjson.loads(sample.output.text) == {"answer": "Paris"}
    assert sample.started_at.endswith("Z") and 0 < sample.wall_s < 5
    env = sample.envelope
    assert env is not None
    messages = [{"role": "user", "content": "capital of France? Paris"}]
    assert env["request"] == {
        "model": "test-model",
        "messages": messages,
        "temperature": 0.0,
        "seed": 7,
        "max_tokens": 64,
    }
    # the prompt's hash is the prompt text's, as the quarantine-lane design hashes it; the
    # whole exchange's is request_sha
    canonical = orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)
    assert env["prompt_sha"] == hashlib.sha256(b"capital of France? Paris").hexdigest()
    assert env["request_sha"] == hashlib.sha256(canonical).hexdigest()
    assert env["output_sha"] == hashlib.sha256(sample.output.text.encode()).hexdigest()
    assert env["status"] == 200 and env["finish_reason"] == "stop"
    assert env["usage"]["total_tokens"] == env["usage"]["prompt_tokens"] + 2
    assert env["raw"]["choices"][0]["message"]["content"] == sample.output.text
    assert env["requested_model"] == env["served_model"] == "test-model"
    assert env["host"] == server.base_url.split("/")[2]
    assert env["harness_version"] == __version__
    assert env["retries"] == [] and "error_class" not in env
    assert env["latency_ms"] == pytest.approx(sample.wall_s * 1000, abs=0.01)
    orjson.dumps(sample.model_dump(mode="json"))  # the whole sample is JSON-able

    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"] == env["request"]
    assert "authorization" not in request["headers"]


def test_unset_settings_are_not_sent_and_extra_body_wins(server: LlmServer) -> None:
    extra = {"top_p": 0.5, "seed": 99, "stop": ["\n\n"]}
    target = _target(
        server.base_url + "/", response_format={"type": "json_object"}, extra_body=extra
    )
    assert _one(target, "hello").outcome is Outcome.OK
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"  # the trailing slash is not doubled
    assert request["body"] == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hello"}],
        "response_format": {"type": "json_object"},
        "top_p": 0.5,
        "seed": 99,
        "stop": ["\n\n"],
    }


@pytest.mark.parametrize(
    ("marker", "check"),
    [
        ("[fenced]", lambda text: text.startswith("```json\n") and '"answer"' in text),
        ("[pass:1/1]", lambda text: text == "PASS"),
        ("[pass:0/1]", lambda text: text == "FAIL"),
    ],
)
def test_scripted_contents(server: LlmServer, marker: str, check: Callable[[str], bool]) -> None:
    sample = _one(_target(server.base_url), f"{marker} give an answer")
    assert sample.outcome is Outcome.OK and check(sample.output.text)


def test_sampled_answers_vary_and_pass_ratio_is_exact(server: LlmServer) -> None:
    target = _target(server.base_url)
    varied = _many(target, ["[sample] where?"] * 8)
    assert len({s.output.text for s in varied}) > 1
    scripted = _many(target, ["[pass:2/3] grade me"] * 9)
    assert sorted(s.output.text for s in scripted).count("PASS") == 6


def test_templated_messages_with_system_prompt(server: LlmServer) -> None:
    template = [
        {"role": "system", "content": "Be terse. Case {{case_id}}."},
        {"role": "user", "content": [{"type": "text", "text": "{{input}} (try {{repeat}})"}]},
    ]
    sample = _one(_target(server.base_url, messages=template), "what is {{input}}?", repeat=3)
    assert sample.outcome is Outcome.OK
    assert server.requests[0]["body"]["messages"] == [
        {"role": "system", "content": "Be terse. Case c1."},
        # rendering is one pass: a placeholder inside the input stays as it is
        {"role": "user", "content": [{"type": "text", "text": "what is {{input}}? (try 3)"}]},
    ]


def test_system_setting_precedes_the_user_message(server: LlmServer) -> None:
    _one(_target(server.base_url, system="You answer in JSON."), "hi")
    assert server.requests[0]["body"]["messages"] == [
        {"role": "system", "content": "You answer in JSON."},
        {"role": "user", "content": "hi"},
    ]


@pytest.mark.parametrize(
    "settings",
    [
        {"messages": [{"role": "user", "content": "{{inptu}}"}]},
        {"messages": [{"role": "user", "content": "{input}}"}]},
        {"messages": []},
        {"system": "case {{case}}"},
        {"base_url": "127.0.0.1:8080/v1"},
    ],
)
def test_bad_configuration_is_rejected_at_construction(settings: dict[str, Any]) -> None:
    with pytest.raises(TargetConfigError):
        _target(settings.pop("base_url", "http://127.0.0.1:1/v1"), **settings)


def test_served_model_differing_from_requested_is_recorded() -> None:
    with LlmServer(served_model="test-model-2024-06-01") as server:
        sample = _one(_target(server.base_url), "hi")
    assert sample.envelope is not None
    assert sample.envelope["requested_model"] == "test-model"
    assert sample.envelope["served_model"] == "test-model-2024-06-01"


def test_tool_calls_are_empty_text_and_kept(server: LlmServer) -> None:
    target = _target(server.base_url, accept_finish=["stop", "tool_calls"])
    sample = _one(target, "[tools] weather Paris")
    assert sample.outcome is Outcome.OK and sample.output.text == ""
    assert sample.envelope is not None
    assert sample.envelope["tool_calls"][0]["function"]["name"] == "lookup"


@pytest.mark.parametrize(
    ("marker", "accept", "error"),
    [
        ("[finish:stop]", None, None),
        # a missing finish reason says nothing about the answer: the scorers judge it
        ("[finish:null]", None, None),
        ("[finish:absent]", None, None),
        ("[finish:null]", ["tool_calls"], None),
        ("[finish:absent]", ["tool_calls"], None),
        ("[tools]", None, "finish:tool_calls"),
        ("[tools]", ["stop", "tool_calls"], None),
        ("[finish:function_call]", None, "finish:function_call"),
        ("[finish:content_filter]", ["stop", "tool_calls"], "finish:content_filter"),
        ("[finish:stop]", ["tool_calls"], "finish:stop"),
    ],
)
def test_finish_reasons_other_than_the_accepted_fail_the_repeat(
    server: LlmServer, marker: str, accept: list[str] | None, error: str | None
) -> None:
    settings = {} if accept is None else {"accept_finish": accept}
    sample = _one(_target(server.base_url, **settings), f"{marker} weather Paris")
    assert sample.error == error
    assert sample.outcome is (Outcome.OK if error is None else Outcome.FINISH)
    assert sample.envelope is not None
    assert ("error_class" in sample.envelope) == (error is not None)


def test_length_is_a_finish_failure_with_the_text_kept(server: LlmServer) -> None:
    sample = _one(_target(server.base_url), "[length] a long answer please")
    assert sample.outcome is Outcome.FINISH and sample.outcome.is_target_error
    assert sample.error == "finish:length" and sample.attempts == 1
    assert sample.output.text and sample.envelope is not None
    assert sample.envelope["finish_reason"] == "length"
    assert sample.envelope["error_class"] == "finish"


def test_accepted_finish_reasons_are_part_of_the_version_and_the_comparable_spec(
    tmp_path: Path,
) -> None:
    def built(accept: list[str] | None) -> tuple[str, dict[str, Any]]:
        http: dict[str, Any] = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
        if accept is not None:
            http["accept_finish"] = accept
        suite = {
            "name": "s",
            "target": {"http": http},
            "cases": [{"id": "c", "input": "x", "scorers": ["json_valid"]}],
        }
        path = write_suite(tmp_path, suite)
        record = build_target(load_suite(path)).record
        return record.key, record.spec

    default_key, default_spec = built(None)
    assert built(["stop"]) == (default_key, default_spec)
    # runs of an older version, which fails no finish reason `stop` passes, stay comparable
    assert default_spec == {"host": "127.0.0.1:9", "model": "m"}
    agent_key, agent_spec = built(["stop", "tool_calls"])
    assert agent_key != default_key
    assert agent_spec == {**default_spec, "accept_finish": ["stop", "tool_calls"]}
    # the same set in another order is the same target
    assert built(["tool_calls", "stop", "stop"]) == (agent_key, agent_spec)


def test_an_empty_accept_finish_is_rejected(tmp_path: Path) -> None:
    http = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "accept_finish": []}
    suite = {
        "name": "s",
        "target": {"http": http},
        "cases": [{"id": "c", "input": "x", "scorers": ["json_valid"]}],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    with pytest.raises(SuiteError, match="accept_finish") as caught:
        load_suite(path)
    assert "suite.yaml:" in str(caught.value)


# -- infrastructure errors -------------------------------------------------------------------


@pytest.mark.parametrize(("marker", "status"), [("[429:2]", 429), ("[500:2]", 500)])
def test_transient_errors_are_retried(server: LlmServer, marker: str, status: int) -> None:
    sample = _one(_target(server.base_url), f"{marker} hello")
    assert sample.outcome is Outcome.OK and sample.attempts == 3
    assert len(server.requests) == 3
    assert sample.envelope is not None
    assert [r["status"] for r in sample.envelope["retries"]] == [status, status]
    assert sample.envelope["status"] == 200


def test_retry_after_is_honoured() -> None:
    with LlmServer(retry_after="0.3") as server:
        sample = _one(_target(server.base_url), "[429:1] hello")
        first, second = server.requests
    assert sample.outcome is Outcome.OK and sample.attempts == 2
    assert second["at"] - first["at"] >= 0.3
    assert sample.envelope is not None
    assert sample.envelope["retries"] == [{"status": 429, "waited_s": 0.3}]


def test_parse_retry_after() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(format_datetime(now + timedelta(seconds=7), usegmt=True), now) == 7.0
    assert parse_retry_after(format_datetime(now - timedelta(hours=1), usegmt=True), now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_backoff_is_full_jitter_below_a_capped_doubling_ceiling() -> None:
    for retry, ceiling in [(0, 0.5), (1, 1.0), (3, 4.0), (10, 30.0), (5000, 30.0)]:
        delays = [backoff_delay(retry) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling / 2


def test_exhausted_retries_are_infra_never_a_model_failure(server: LlmServer) -> None:
    sample = _one(_target(server.base_url, max_retries=2), "[500:99] hello")
    assert sample.outcome is Outcome.INFRA and not sample.outcome.is_target_error
    assert sample.error == "infra: HTTP 500 after 3 attempts"
    assert sample.attempts == 3 and len(server.requests) == 3
    assert sample.envelope is not None
    assert sample.envelope["error_class"] == "infra"
    assert sample.envelope["raw"] == {"error": {"message": "scripted failure", "code": 500}}


def test_malformed_body_is_retried_then_infra(server: LlmServer) -> None:
    sample = _one(_target(server.base_url, max_retries=2), "[malformed] hello")
    assert sample.outcome is Outcome.INFRA and sample.attempts == 3
    assert sample.error == "infra: HTTP 200 with a text/html body, not JSON after 3 attempts"
    assert sample.envelope is not None
    assert sample.envelope["raw"] == "<html>upstream hiccup</html>"
    assert sample.envelope["retries"][0]["status"] == 200


def test_connection_refused_is_infra() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sample = _one(_target(f"http://127.0.0.1:{port}/v1", max_retries=1), "hello")
    assert sample.outcome is Outcome.INFRA and sample.attempts == 2
    assert sample.error is not None and sample.error.startswith("infra: ConnectError")
    assert sample.envelope is not None and sample.envelope["status"] is None


def test_timeout_is_per_attempt_and_infra(server: LlmServer) -> None:
    started = time.perf_counter()
    sample = _one(_target(server.base_url, timeout_s=0.2, max_retries=1), "[slow:1] hello")
    assert time.perf_counter() - started < 0.9
    assert sample.outcome is Outcome.INFRA and sample.attempts == 2
    assert sample.error == "infra: timeout (no answer within 0.2 s) after 2 attempts"


def test_client_errors_are_configuration_problems_without_retry(server: LlmServer) -> None:
    sample = _one(_target(server.base_url), "[status:404] hello")
    assert sample.outcome is Outcome.INFRA and sample.attempts == 1
    assert sample.error is not None and sample.error.startswith("config: HTTP 404: scripted")
    assert sample.envelope is not None and sample.envelope["error_class"] == "config"
    assert len(server.requests) == 1


def test_the_run_wide_retry_budget_is_shared(server: LlmServer) -> None:
    target = _target(server.base_url, retry_budget=1)
    first = _one(target, "[500:1] one")
    second = _one(target, "[500:1] two")
    assert first.outcome is Outcome.OK and first.attempts == 2
    assert second.outcome is Outcome.INFRA and second.attempts == 1
    assert second.error == "infra: HTTP 500 after 1 attempt (the run's retry budget of 1 is spent)"
    assert target.retries_used == 1


def test_default_budget_lets_the_first_call_retry_in_full(server: LlmServer) -> None:
    sample = _one(_target(server.base_url, max_retries=4), "[500:4] hello")
    assert sample.outcome is Outcome.OK and sample.attempts == 5


# -- the key, concurrency, the shared pause --------------------------------------------------


def _suite_target(tmp_path: Path, base_url: str) -> Target:
    """The target built from a suite file, the key taken from the environment as in a run."""
    suite = {
        "name": "http-key",
        "target": {"http": {"base_url": base_url, "model": "m", "api_key_env": "NF_TEST_KEY"}},
        "cases": [{"id": "c1", "input": "hello", "scorers": ["json_valid"]}],
    }
    path = write_suite(tmp_path, suite)
    target = build_target(load_suite(path)).target
    assert isinstance(target, HttpTarget)
    target.backoff_base_s = 0.005
    return target


def test_api_key_is_sent_and_never_recorded(
    server: LlmServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NF_TEST_KEY", KEY)
    target = _suite_target(tmp_path, server.base_url)
    # the stand-in quotes the credential back in its error body, as some servers do
    samples = _many(target, ["hello", "[status:401] hello", "[500:9] hello"])
    assert [s.outcome for s in samples] == [Outcome.OK, Outcome.INFRA, Outcome.INFRA]
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in server.requests)
    for sample in samples:
        assert KEY not in sample.model_dump_json()
    assert samples[1].error is not None and samples[1].error.startswith("config: HTTP 401: ")
    assert "[REDACTED]" in samples[1].error


def test_concurrent_calls_overlap(server: LlmServer) -> None:
    target = _target(server.base_url)
    started = time.perf_counter()
    samples = _many(target, [f"[slow:0.2] question {i}" for i in range(20)])
    elapsed = time.perf_counter() - started
    assert all(s.outcome is Outcome.OK and s.concurrency == 20 for s in samples)
    assert elapsed < 1.5, f"20 calls of 0.2 s took {elapsed:.2f} s: they did not overlap"


def test_a_429_pauses_every_call() -> None:
    with LlmServer(retry_after="0.5") as server:
        target = _target(server.base_url)

        async def staggered() -> list[RawSample]:
            limited = asyncio.ensure_future(
                target.sample(CaseInput(case_id="a", input="[429:1] first"), 0, 2)
            )
            await asyncio.sleep(0.15)  # the 429 has arrived by now
            other = await target.sample(CaseInput(case_id="b", input="second"), 0, 2)
            return [await limited, other]

        limited, other = _drive(target, staggered)
        arrivals = {r["body"]["messages"][-1]["content"]: r["at"] for r in server.requests}
        first_at = server.requests[0]["at"]
    assert limited.outcome is Outcome.OK and other.outcome is Outcome.OK
    assert other.attempts == 1 and limited.attempts == 2
    # the second call never got a 429 itself, yet waited out the first call's pause
    assert arrivals["second"] - first_at >= 0.45
    assert other.envelope is not None and other.envelope["paused_s"] >= 0.25


# -- connections -----------------------------------------------------------------------------


def test_connections_of_a_loop_are_closed_when_it_ends_without_aclose(server: LlmServer) -> None:
    """A caller that runs the target on one event loop, then another, and never calls aclose:
    the kept-alive connections of each loop must not outlive it, to be freed later by the garbage
    collector with a ResourceWarning blamed on whatever runs then."""
    target = _target(server.base_url)

    async def one(text: str) -> RawSample:
        return await target.sample(CaseInput(case_id="c1", input=text), 0, 1)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first = asyncio.run(one("first"))
        second = asyncio.run(one("second"))
        gc.collect()
    assert first.outcome is Outcome.OK and second.outcome is Outcome.OK
    assert [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)] == []


class _Closing(ThreadingHTTPServer):
    daemon_threads = True
    connections = 0
    close_each = False


class _ClosingHandler(BaseHTTPRequestHandler):
    """Answers a completion; closes the connection after it (`close_each`), or once it has been
    idle for 0.1 s."""

    protocol_version = "HTTP/1.1"
    timeout = 0.1
    server: _Closing

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        choice = {"index": 0, "message": {"role": "assistant", "content": "ok"}}
        body = orjson.dumps({"choices": [{**choice, "finish_reason": "stop"}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if self.server.close_each:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _ClosingServer(LoopbackServer[_Closing]):
    def __init__(self, close_each: bool) -> None:
        super().__init__()
        self.close_each = close_each

    def make_server(self) -> _Closing:
        server = _Closing(("127.0.0.1", 0), _ClosingHandler)
        server.close_each = self.close_each
        return server

    @property
    def connections(self) -> int:
        assert self._server is not None
        return self._server.connections


@pytest.mark.parametrize(
    ("close_each", "idle_s", "connections"),
    [(False, 0.0, 1), (True, 0.0, 3), (False, 0.3, 3)],
    ids=["kept-alive", "connection-close", "closed-when-idle"],
)
def test_a_connection_is_reused_until_the_endpoint_closes_it(
    close_each: bool, idle_s: float, connections: int
) -> None:
    """Calls one after another share a kept-alive connection; after an endpoint closed it (after
    its answer, or once it idled 0.1 s) the next call opens a new one at its first attempt,
    neither failing nor retrying."""
    with _ClosingServer(close_each) as server:
        target = _target(server.base_url)

        async def three() -> list[RawSample]:
            samples = []
            for repeat in range(3):
                await asyncio.sleep(idle_s)
                samples.append(await target.sample(CaseInput(case_id="c1", input="hi"), repeat, 1))
            return samples

        samples = _drive(target, three)
        assert [(s.outcome, s.attempts) for s in samples] == [(Outcome.OK, 1)] * 3
        assert server.connections == connections


def test_output_sha_is_the_sha256_of_the_utf8_text() -> None:
    from noisefloor.targets.base import output_sha

    assert output_sha("café") == hashlib.sha256("café".encode()).hexdigest()
