"""Proxies and CA bundles from the environment: httpx's routing rules, then real requests through
a loopback proxy (bench/servers/proxy.py) to a loopback HTTPS server signed by a throwaway CA."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from bench.servers.llm import LlmServer
from bench.servers.proxy import ProxyServer
from noisefloor.errors import TargetConfigError
from noisefloor.targets import CaseInput, Outcome, RawSample
from noisefloor.targets.http import HttpTarget
from noisefloor.targets.http_env import Proxy, ca_source, proxy_for, proxy_secrets
from noisefloor.targets.http_spec import HttpSpec
from noisefloor.targets.source import Secret

PROXY = "http://proxy.corp:3128"

# -- which requests go through which proxy ---------------------------------------------------


@pytest.mark.parametrize(
    ("env", "url", "expected"),
    [
        ({}, "https://api.example.com/v1", None),
        ({"HTTPS_PROXY": PROXY}, "https://api.example.com/v1", PROXY),
        ({"HTTPS_PROXY": PROXY}, "http://api.example.com/v1", None),
        ({"HTTP_PROXY": PROXY}, "http://api.example.com/v1", PROXY),
        ({"HTTP_PROXY": PROXY}, "https://api.example.com/v1", None),
        ({"ALL_PROXY": PROXY}, "https://api.example.com/v1", PROXY),
        ({"all_proxy": PROXY}, "http://api.example.com/v1", PROXY),
        # the scheme's own proxy before ALL_PROXY; the lower-case variable before the upper-case
        ({"ALL_PROXY": "http://all:1", "HTTPS_PROXY": PROXY}, "https://a.example.com", PROXY),
        ({"HTTPS_PROXY": "http://upper:1", "https_proxy": PROXY}, "https://a.example.com", PROXY),
        # no scheme: an http proxy
        ({"HTTPS_PROXY": "proxy.corp:3128"}, "https://api.example.com/v1", PROXY),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "*"}, "https://api.example.com/v1", None),
        ({"HTTPS_PROXY": PROXY, "no_proxy": "a.org, *"}, "https://api.example.com/v1", None),
        # a domain bypasses itself and its subdomains, not a longer name
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "example.com"}, "https://api.example.com", None),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "example.com"}, "https://example.com", None),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "example.com"}, "https://myexample.com", PROXY),
        # a leading dot: the subdomains only
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": ".example.com"}, "https://api.example.com", None),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": ".example.com"}, "https://example.com", PROXY),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "EXAMPLE.com"}, "https://API.example.COM", None),
        # with a port: that port only
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "example.com:8443"}, "https://example.com:8443", None),
        ({"HTTPS_PROXY": PROXY, "NO_PROXY": "example.com:8443"}, "https://example.com", PROXY),
        # addresses and localhost: exactly themselves
        ({"HTTP_PROXY": PROXY, "NO_PROXY": "127.0.0.1"}, "http://127.0.0.1:8080/v1", None),
        ({"HTTP_PROXY": PROXY, "NO_PROXY": "127.0.0.1"}, "http://127.0.0.2:8080/v1", PROXY),
        ({"HTTP_PROXY": PROXY, "NO_PROXY": "::1"}, "http://[::1]:8080/v1", None),
        ({"HTTP_PROXY": PROXY, "NO_PROXY": "localhost"}, "http://localhost:8080/v1", None),
        ({"HTTP_PROXY": PROXY, "NO_PROXY": "localhost"}, "http://a.localhost:8080/v1", PROXY),
        # as in httpx, a CIDR range is not expanded: it names its first address
        ({"HTTP_PROXY": PROXY, "NO_PROXY": "10.0.0.0/8"}, "http://10.0.0.0/v1", None),
        ({"HTTP_PROXY": PROXY, "NO_PROXY": "10.0.0.0/8"}, "http://10.1.2.3/v1", PROXY),
        # a URL in NO_PROXY: that scheme only
        ({"ALL_PROXY": PROXY, "NO_PROXY": "http://example.com"}, "http://example.com", None),
        ({"ALL_PROXY": PROXY, "NO_PROXY": "http://example.com"}, "https://example.com", PROXY),
    ],
)
def test_the_proxy_is_chosen_as_httpx_chooses_it(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], url: str, expected: str | None
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    proxy = proxy_for(url)
    assert (proxy.shown if proxy is not None else None) == expected


def test_proxy_credentials_are_decoded_and_kept_out_of_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "https://me%40corp:p%3Ass@[::1]:8443")
    assert proxy_for("https://api.example.com") == Proxy("https", "::1", 8443, ("me@corp", "p:ss"))
    assert Proxy("https", "::1", 8443, ("me@corp", "p:ss")).shown == "https://[::1]:8443"
    assert set(proxy_secrets()) == {Secret("HTTPS_PROXY", v) for v in ("p%3Ass", "p:ss")}
    monkeypatch.setenv("HTTPS_PROXY", "http://tok3n-only@proxy.corp:3128")
    assert set(proxy_secrets()) == {Secret("HTTPS_PROXY", "tok3n-only")}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("socks5://me:pw@proxy.corp:1080", "proxy socks5://proxy.corp: only http:// and https://"),
        ("http://proxy.corp:port", "proxy http://proxy.corp: the port is not a number"),
    ],
)
def test_a_proxy_that_cannot_work_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    monkeypatch.setenv("https_proxy", value)
    with pytest.raises(TargetConfigError) as caught:
        _target("https://api.example.com/v1")
    assert caught.value.where == "HTTPS_PROXY" and caught.value.message.startswith(message)
    assert "pw" not in str(caught.value) and caught.value.hint


@pytest.mark.parametrize("name", ["SSL_CERT_FILE", "SSL_CERT_DIR"])
def test_a_ca_variable_naming_nothing_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    monkeypatch.setenv(name, str(tmp_path / "missing"))
    # an http endpoint needs no CA bundle: a stale variable does not stop it
    _target("http://127.0.0.1:9/v1")
    with pytest.raises(TargetConfigError, match=f"{name}=.*missing: no such") as caught:
        _target("https://api.example.com/v1")
    assert caught.value.where == name and caught.value.hint


def test_a_ca_file_that_does_not_load_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n", encoding="utf-8")
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    target = _target("https://127.0.0.1:9/v1")
    with pytest.raises(TargetConfigError, match="cannot load the CA certificates") as caught:
        _sample_all(target, ["hello"])
    assert caught.value.where == "SSL_CERT_FILE" and "PEM" in (caught.value.hint or "")


def test_ssl_cert_file_comes_before_ssl_cert_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("", encoding="utf-8")
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    assert ca_source() == ("SSL_CERT_DIR", str(tmp_path))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert ca_source() == ("SSL_CERT_FILE", str(bundle))


# -- real requests ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_server(ca: trustme.CA) -> Iterator[LlmServer]:
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(served)
    with LlmServer(tls=served) as running:
        yield running


@pytest.fixture
def ca_file(ca: trustme.CA, tmp_path: Path) -> str:
    path = tmp_path / "company-ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


def _target(base_url: str, **settings: Any) -> HttpTarget:
    spec = HttpSpec.model_validate({"base_url": base_url, "model": "m", **settings})
    target = HttpTarget(spec, key="k", spec={}, api_key=None)
    target.backoff_base_s = 0.005
    return target


def _sample_all(target: HttpTarget, texts: list[str]) -> list[RawSample]:
    async def go() -> list[RawSample]:
        try:
            calls = [
                target.sample(CaseInput(case_id=f"c{i}", input=text), 0, len(texts))
                for i, text in enumerate(texts)
            ]
            return list(await asyncio.gather(*calls))
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_a_company_ca_is_trusted_through_ssl_cert_file(
    monkeypatch: pytest.MonkeyPatch, tls_server: LlmServer, ca_file: str
) -> None:
    refused = _sample_all(_target(tls_server.base_url, max_retries=0), ["hello"])
    assert refused[0].outcome is Outcome.INFRA
    assert "CERTIFICATE_VERIFY_FAILED" in (refused[0].error or "")
    assert tls_server.requests == []

    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    samples = _sample_all(_target(tls_server.base_url), ["hello", "world"])
    assert [s.outcome for s in samples] == [Outcome.OK, Outcome.OK]
    assert len(tls_server.requests) == 2


def test_https_goes_through_a_connect_tunnel_unless_no_proxy_matches(
    monkeypatch: pytest.MonkeyPatch, tls_server: LlmServer, ca_file: str
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    with ProxyServer(credentials=("me@corp", "s3cr3t")) as proxy:
        user_info = proxy.url.replace("http://", "http://me%40corp:s3cr3t@")
        monkeypatch.setenv("HTTPS_PROXY", user_info)
        samples = _sample_all(_target(tls_server.base_url), [f"q{i}" for i in range(6)])
        assert all(s.outcome is Outcome.OK for s in samples), [s.error for s in samples]
        assert len(tls_server.requests) == 6
        port = tls_server.base_url.split(":")[2].split("/")[0]
        assert 1 <= proxy.tunnels <= 6 and proxy.targets == [f"127.0.0.1:{port}"] * proxy.tunnels
        assert proxy.forwarded == 0 and proxy.refused == 0

        monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
        tunnels = proxy.tunnels
        direct = _sample_all(_target(tls_server.base_url), ["direct"])
        assert direct[0].outcome is Outcome.OK and len(tls_server.requests) == 7
        assert proxy.tunnels == tunnels


def test_an_https_proxy_is_trusted_through_ssl_cert_file_too(
    monkeypatch: pytest.MonkeyPatch, tls_server: LlmServer, ca: trustme.CA, ca_file: str
) -> None:
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(served)
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    with ProxyServer(tls=served) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        samples = _sample_all(_target(tls_server.base_url), ["one", "two"])
        assert [s.outcome for s in samples] == [Outcome.OK, Outcome.OK]
        assert proxy.url.startswith("https://") and proxy.tunnels >= 1


def test_http_goes_to_the_proxy_in_absolute_form(monkeypatch: pytest.MonkeyPatch) -> None:
    with LlmServer() as server, ProxyServer() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        samples = _sample_all(_target(server.base_url), ["one", "two"])
        assert [s.outcome for s in samples] == [Outcome.OK, Outcome.OK]
        assert proxy.forwarded == 2 and proxy.tunnels == 0
        assert [r["path"] for r in server.requests] == ["/v1/chat/completions"] * 2


def test_a_proxy_refusing_the_credentials_is_infra_and_names_the_proxy_only(
    monkeypatch: pytest.MonkeyPatch, tls_server: LlmServer, ca_file: str
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    with ProxyServer(credentials=("me", "right-one")) as proxy:
        shown = proxy.url
        monkeypatch.setenv("HTTPS_PROXY", shown.replace("http://", "http://me:wrong-one@"))
        [sample] = _sample_all(_target(tls_server.base_url, max_retries=1), ["hello"])
    assert sample.outcome is Outcome.INFRA and proxy.refused == 2
    assert sample.error == (
        f"infra: ProxyError: 407 Proxy Authentication Required (through the proxy {shown})"
        " after 2 attempts"
    )
    assert "wrong-one" not in sample.model_dump_json()
    assert tls_server.requests == []
