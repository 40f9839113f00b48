"""How `safeground serve` runs uvicorn: the server's own limits against slow or greedy clients.

uvicorn bounds the time between requests (keep-alive) and, with `limit_concurrency`, the
connections and tasks it holds (past it: 503), but not the time a client takes to send a
request's headers: a client sending one header byte now and then (slowloris) held a connection
for ever, and 500 of them stayed open. `HeaderTimeoutProtocol` closes a connection whose
request headers are not complete SAFEGROUND_HEADER_TIMEOUT_SECONDS after the connection opened
or its request began. Settings, with their defaults, in docs/deploy.md.
"""

import asyncio
import time
from typing import Any

from django.conf import settings
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from safeground.errors import ARRIVED


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, dropping a client that is slow to send its headers."""

    header_timeout: float = 10.0  # set by uvicorn_options from the settings
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # The moment the request began to arrive: deadlines count from here, not from when the
        # application got its turn on a busy loop (entry.runtime.asgi, errors.RequestChecks).
        self.scope[ARRIVED] = time.monotonic()  # type: ignore[literal-required]
        self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self._disarm_header_timer()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def uvicorn_options() -> dict[str, Any]:
    """The limits every served process runs with (uvicorn.run / uvicorn.Config keywords)."""
    HeaderTimeoutProtocol.header_timeout = settings.SAFEGROUND_HEADER_TIMEOUT_SECONDS
    return {
        "http": HeaderTimeoutProtocol,
        "timeout_keep_alive": settings.SAFEGROUND_KEEP_ALIVE_SECONDS,
        "limit_concurrency": settings.SAFEGROUND_MAX_CONNECTIONS,
        "h11_max_incomplete_event_size": 16 * 1024,  # headers' size (h11 only; httptools: 8 kB)
    }
