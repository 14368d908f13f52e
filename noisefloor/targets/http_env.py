"""The HTTP target's network settings from the environment, read as httpx reads them.

Proxies: `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`; TLS trust: `SSL_CERT_FILE`, `SSL_CERT_DIR`.
"""

from __future__ import annotations

import ipaddress
import os
import re
import ssl
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit
from urllib.request import getproxies

from noisefloor.errors import TargetConfigError
from noisefloor.targets.source import Secret

__all__ = ["Proxy", "ca_source", "load_ssl_context", "proxy_for", "proxy_secrets"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HINT = "fix or unset the variable; `NO_PROXY=host` connects to that host directly"


@dataclass(frozen=True)
class Proxy:
    """A proxy to send requests through."""

    scheme: str
    host: str
    port: int | None
    auth: tuple[str, str] | None
    """User and password from the proxy URL: sent to the proxy, never recorded."""

    @property
    def shown(self) -> str:
        """The proxy URL without its credentials."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" + (f":{self.port}" if self.port is not None else "")


@dataclass(frozen=True)
class _Route:
    """One entry of the routing table: requests it matches use `proxy` (None: no proxy)."""

    scheme: str
    """Empty for any scheme."""
    host: str
    """Empty for any host; `*.example.com` for subdomains only; `*example.com` for the domain
    and its subdomains."""
    port: int | None
    proxy: str | None

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.host.startswith("*."):
            pattern = f".+\\.{re.escape(self.host[2:])}"
        elif self.host.startswith("*"):
            pattern = f"(.+\\.)?{re.escape(self.host[1:])}"
        else:
            pattern = re.escape(self.host) if self.host else ".*"
        return bool(re.fullmatch(pattern, host)) and (self.port is None or self.port == port)

    @property
    def priority(self) -> tuple[int, int, int]:
        """The most specific route first: with a port, then the longer host, then the scheme."""
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))


def _route(pattern: str, proxy: str | None) -> _Route:
    """A route from an httpx mount pattern such as `all://*example.com:8080`."""
    scheme, _, rest = pattern.partition("://")
    authority = rest.split("/", 1)[0].rpartition("@")[2]
    port: int | None = None
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        port_text = tail.removeprefix(":")
    else:
        host, _, port_text = authority.partition(":")
    if port_text.isdigit():
        port = int(port_text)
    return _Route("" if scheme == "all" else scheme.lower(), host.lower(), port, proxy)


def _is_ip(text: str, version: type[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> bool:
    try:
        version(text.split("/")[0])
    except ValueError:
        return False
    return True


def _routes() -> list[_Route]:
    """The routing table httpx builds from the environment (`get_environment_proxies`)."""
    info = getproxies()
    routes = []
    for scheme in ("http", "https", "all"):
        if info.get(scheme):
            url = info[scheme]
            routes.append(_route(f"{scheme}://", url if "://" in url else f"http://{url}"))
    for entry in (part.strip() for part in info.get("no", "").split(",")):
        if entry == "*":
            return []
        if not entry:
            continue
        # as curl: `.example.com` bypasses the subdomains, `example.com` the domain too; an
        # address bypasses only itself (a CIDR range counts as its first address, as in httpx)
        if "://" in entry:
            pattern = entry
        elif _is_ip(entry, ipaddress.IPv4Address) or entry.lower() == "localhost":
            pattern = f"all://{entry}"
        elif _is_ip(entry, ipaddress.IPv6Address):
            pattern = f"all://[{entry.split('/')[0]}]"
        else:
            pattern = f"all://*{entry}"
        routes.append(_route(pattern, None))
    return sorted(routes, key=lambda route: route.priority)


def proxy_for(url: str) -> Proxy | None:
    """The proxy the environment names for requests to `url`, or None to connect directly.

    Raises:
        TargetConfigError: The proxy URL is not an http(s) proxy httpcore can use.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port if parts.port != _DEFAULT_PORTS.get(scheme) else None
    chosen = next((r for r in _routes() if r.matches(scheme, host, port)), None)
    if chosen is None or chosen.proxy is None:
        return None
    proxy = urlsplit(chosen.proxy)
    shown = f"{proxy.scheme}://{proxy.hostname}" if proxy.hostname else "the proxy URL"
    where = f"{chosen.scheme.upper() or 'ALL'}_PROXY"
    if proxy.scheme.lower() not in ("http", "https"):
        raise TargetConfigError(
            f"proxy {shown}: only http:// and https:// proxies are supported",
            where=where,
            hint=_HINT,
        )
    try:
        proxy_port = proxy.port
    except ValueError:
        raise TargetConfigError(
            f"proxy {shown}: the port is not a number", where=where, hint=_HINT
        ) from None
    if not proxy.hostname:
        raise TargetConfigError("the proxy URL has no host", where=where, hint=_HINT)
    auth = None
    if proxy.username is not None or proxy.password is not None:
        auth = (unquote(proxy.username or ""), unquote(proxy.password or ""))
    return Proxy(proxy.scheme.lower(), proxy.hostname, proxy_port, auth)


def proxy_secrets() -> list[Secret]:
    """The credentials in the environment's proxy URLs, as written and decoded, each held by
    its proxy's variable (`HTTPS_PROXY`)."""
    secrets: list[Secret] = []
    for scheme, url in getproxies().items():
        parts = urlsplit(url if "://" in url else f"http://{url}")
        # without a password, the user name is the credential (a token)
        secret = parts.password if parts.password is not None else parts.username
        if secret:
            variable = f"{scheme.upper()}_PROXY"
            secrets += [Secret(variable, secret), Secret(variable, unquote(secret))]
    return secrets


def ca_source() -> tuple[str, str] | None:
    """The CA bundle named by the environment: `("SSL_CERT_FILE", path)`, `("SSL_CERT_DIR",
    path)`, or None for certifi's bundle.

    Raises:
        TargetConfigError: The variable names no such file or directory.
    """
    for name, exists in (("SSL_CERT_FILE", os.path.isfile), ("SSL_CERT_DIR", os.path.isdir)):
        path = os.environ.get(name)
        if path:
            if not exists(path):
                kind = "file" if name == "SSL_CERT_FILE" else "directory"
                raise TargetConfigError(
                    f"{name}={path}: no such {kind}",
                    where=name,
                    hint=f"point {name} at your CA bundle, or unset it to trust certifi's bundle",
                )
            return name, path
    return None


def load_ssl_context(source: tuple[str, str] | None) -> ssl.SSLContext:
    """A client TLS context trusting `source` (see `ca_source`), or certifi's bundle.

    Raises:
        TargetConfigError: The bundle cannot be loaded.
    """
    if source is None:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    name, path = source
    try:
        if name == "SSL_CERT_FILE":
            return ssl.create_default_context(cafile=path)
        return ssl.create_default_context(capath=path)
    except (OSError, ssl.SSLError) as exc:
        raise TargetConfigError(
            f"{name}={path}: cannot load the CA certificates: {exc}",
            where=name,
            hint="the file must hold PEM certificates (`-----BEGIN CERTIFICATE-----`)",
        ) from None
