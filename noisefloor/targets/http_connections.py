"""The connections an HTTP target shares among its calls: made in the running event loop as calls
need them, handed back after each request, made again when they cannot carry another, closed.
"""

from __future__ import annotations

import asyncio
import ssl

import httpcore

from noisefloor.targets.http_backend import AsyncioBackend
from noisefloor.targets.http_env import ca_source, load_ssl_context, proxy_for

__all__ = ["Carrier", "Connections"]

#: What carries one request at a time: a connection of its own, or through a proxy, a pool of one
#: connection (the tunnel or the forwarding is the proxy pool's).
Carrier = httpcore.AsyncHTTPConnection | httpcore.AsyncHTTPProxy


def _reusable(carrier: Carrier) -> bool:
    """Whether a carrier that carried a request can carry the next: a connection that the server
    closed, that a cancelled request cut, or that never connected is made again (a proxy pool
    does that itself)."""
    if isinstance(carrier, httpcore.AsyncHTTPProxy):
        return True
    return carrier.is_available() and not carrier.has_expired()


async def _close_all(carriers: list[Carrier]) -> None:
    await asyncio.gather(*(carrier.aclose() for carrier in carriers))


async def _close_when_cancelled(carriers: list[Carrier]) -> None:
    """Wait until cancelled, then close the connections in `carriers`.

    A caller may end its event loop without calling `aclose`; `asyncio.run` cancels the tasks
    left when its coroutine returns, so this closes the loop's connections before the loop
    closes. Otherwise they would be freed later by the garbage collector, with a ResourceWarning.
    """
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        await _close_all(carriers)


class Connections:
    """The carriers of one target's requests, to its URL directly or through the environment's
    proxy; the proxy and CA bundle settings are checked on creation."""

    def __init__(self, url: str) -> None:
        """Check the environment's proxy and CA settings for `url`; connect to nothing yet.

        Raises:
            TargetConfigError: The proxy or CA bundle named by the environment cannot work.
        """
        self._url = url
        #: Every carrier made in the current loop, and those of them carrying no request now.
        self._carriers: list[Carrier] = []
        self._idle: list[Carrier] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closer: asyncio.Task[None] | None = None
        self.proxy = proxy_for(url)
        proxy_tls = self.proxy is not None and self.proxy.scheme == "https"
        self._tls = url.startswith("https:") or proxy_tls
        # checked now, loaded with the first connection: loading a CA bundle takes ~0.1 s
        self._ca = ca_source() if self._tls else None
        self._ssl: ssl.SSLContext | None = None
        self._backend = AsyncioBackend()

    async def take(self) -> Carrier:
        """A connection carrying no request, a new one when all are busy; made in the running loop.

        The connections so grow to the number of requests seen in flight at once, and a request
        never waits for a free one (the harness's own semaphore bounds concurrency). The caller
        hands the carrier back (`give_back`) when its request is done.

        Connections are httpcore's, used without its pool: the pool does work quadratic in its
        connection count on every request (encode/httpx#3215), and even a pool of one took 10%
        more CPU per request than its connection alone. What the pool does between requests is
        done here: a connection that cannot carry another request is closed and made again.
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # connections are bound to the loop they were made in; a new loop needs new ones,
            # and the old loop's were closed when it ended
            self._carriers, self._idle, self._loop = [], [], loop
            self._closer = loop.create_task(_close_when_cancelled(self._carriers))
        while self._idle:
            # the most recently used: its connection is the likeliest to be alive still
            used = self._idle.pop()
            if _reusable(used):
                return used
            self._carriers.remove(used)
            await used.aclose()
        if self._ssl is None and self._tls:
            # once per target, not once per connection
            self._ssl = load_ssl_context(self._ca)
        carrier: Carrier
        if self.proxy is None:
            carrier = httpcore.AsyncHTTPConnection(
                origin=httpcore.URL(self._url).origin,
                ssl_context=self._ssl,
                network_backend=self._backend,
            )
        else:
            # a CONNECT tunnel for https endpoints, absolute-form requests for http ones
            proxy = self.proxy
            carrier = httpcore.AsyncHTTPProxy(
                proxy_url=httpcore.URL(
                    scheme=proxy.scheme.encode(),
                    host=proxy.host.encode("idna"),
                    port=proxy.port,
                    target=b"/",
                ),
                proxy_auth=proxy.auth,
                ssl_context=self._ssl,
                proxy_ssl_context=self._ssl if proxy.scheme == "https" else None,
                max_connections=1,
                network_backend=self._backend,
            )
        self._carriers.append(carrier)
        return carrier

    def give_back(self, carrier: Carrier) -> None:
        """Hand back a carrier whose request is done (a cancelled one included)."""
        self._idle.append(carrier)

    async def aclose(self) -> None:
        """Close the shared connections."""
        carriers = list(self._carriers)
        self._carriers.clear()  # the list the closer holds: cancelled, it closes nothing
        if self._closer is not None:
            self._closer.cancel()
        self._loop, self._closer = None, None
        await _close_all(carriers)
