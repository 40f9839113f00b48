"""The lean route for turnstile scans: `POST /api/entry/scan` answered before Django's request
machinery (twelve middlewares, ninja's operation) that costs more than the decision itself.

`gates_router(app)` wraps any ASGI app, as live.websocket.live_router does for sockets: a scan is
read here, checked against the cached device key and its profile, and decided by the same
function the ninja route calls (entry.api.scan_answer → services.scan_decide) on a small pool of
threads that keep their database connection between scans; every other request goes to `app`.
The answers are the same as the ninja route's (tests/entry/test_asgi.py), and the route stays in
the OpenAPI schema through ninja. docs/adr/0005-turnstile-decisions.md has the measurements.

    safeground.asgi wraps the whole application with it; at a big ground serve two workers:
    uvicorn safeground.asgi:application --workers 2 --no-access-log
"""

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection

logger = logging.getLogger(__name__)

SCAN_PATH = "/api/entry/scan"
ROUTE = "entry_scan"
MAX_BODY = 4096  # a scan is ~200 bytes
THREADS = max(1, int(os.environ.get("SAFEGROUND_ENTRY_THREADS", "8")))

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_executor: ThreadPoolExecutor | None = None


def _json(status: int, payload: dict[str, Any]) -> tuple[int, bytes]:
    return status, json.dumps(payload).encode()


def scan_over_http(key: str | None, body: bytes) -> tuple[int, bytes]:
    """Auth as CachedDeviceKey does, then the scan; runs on a pool thread (it uses the database)."""
    from safeground.accounts.devices import PROFILES

    from . import lookups
    from .api import scan_answer

    # The pool thread keeps its connection from scan to scan (returning it to the pool and taking
    # it back costs more than the decision); one that failed is dropped, as Django would.
    try:
        device = lookups.device_for_key(key) if key else None
        if device is None:
            return _json(401, {"detail": "Unauthorized"})
        if ROUTE not in PROFILES.get(device.profile, frozenset()):
            return _json(403, {"detail": f"A {device.profile_label} device may not call {ROUTE}."})
        return scan_answer(device, body)
    except Exception:
        connection.close()
        logger.exception("scan failed")
        return _json(500, {"detail": "The scan could not be decided: scan again."})


async def _read_body(receive: Receive) -> bytes | None:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return b""
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def gates_router(app: ASGIApp) -> ASGIApp:
    async def router(scope: Scope, receive: Receive, send: Send) -> None:
        if not (
            scope["type"] == "http" and scope["path"] == SCAN_PATH and scope["method"] == "POST"
        ):
            await app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return
        key = None
        for name, value in scope["headers"]:
            if name == b"x-device-key":
                key = value.decode("latin-1")
        global _executor
        if _executor is None:
            _executor = ThreadPoolExecutor(THREADS, thread_name_prefix="scan")
        loop = asyncio.get_running_loop()
        status, answer = await loop.run_in_executor(_executor, scan_over_http, key, body)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(answer)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    return router
