"""The lean route for phones' receipts: `POST /api/alerts/receipt` saying "delivered", answered
before Django's request machinery (a dozen middlewares and ninja's operation, ~10 ms of one
core each), as entry's lean route does for scans. A broadcast to 500 stewards brings 500
receipts within a second or two; through Django they queued behind each other for seconds.

Here the token is checked on the event loop (a MAC: no database), and the receipts that arrive
while one write is running are written together by the next (one thread keeps its connection):
a receipt is answered once it is stored. Anything else (acknowledged, a bad token, a body that
is not as expected, an unknown recipient, a database that is away) goes to the ninja route
(alerts.api.alert_receipt) unchanged, which answers as the API does; tests/alerts/ check both
answer alike.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import DatabaseError, connection
from django.utils import timezone

from .models import AlertRecipient
from .services import receipt_recipient_id

PATH = "/api/alerts/receipt"
MAX_BODY = 1024
DELIVERED = json.dumps({"state": "delivered"}).encode()

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _store(ids: list[int]) -> set[int]:
    """Mark these recipients delivered (those not yet); the ids that exist. The connection goes
    back after each write (to the pool on PostgreSQL): the thread holds none while idle."""
    try:
        found = set(AlertRecipient.objects.filter(pk__in=ids).values_list("pk", flat=True))
        AlertRecipient.objects.filter(pk__in=found, delivered_at__isnull=True).update(
            delivered_at=timezone.now()
        )
        return found
    finally:
        connection.close()


class Writer:
    """Receipts waiting for the next write, and the one write running."""

    def __init__(self) -> None:
        self.waiting: dict[int, list[asyncio.Future[bool]]] = {}
        self.running: asyncio.Task[None] | None = None
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="receipts")

    async def delivered(self, recipient_id: int) -> bool:
        """Whether it was stored (False: no such recipient, or the database failed)."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(recipient_id, []).append(future)
        if self.running is None:
            self.running = asyncio.create_task(self._write_all())
        return await future

    async def _write_all(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.waiting:
                batch, self.waiting = self.waiting, {}
                try:
                    found = await loop.run_in_executor(self.thread, _store, list(batch))
                except DatabaseError:
                    found = set()
                for recipient_id, futures in batch.items():
                    for future in futures:
                        if not future.done():
                            future.set_result(recipient_id in found)
        finally:
            self.running = None


async def _read_body(receive: Receive) -> bytes | None:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return b""  # not a receipt: the API refuses it
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    """The body already read, for the app the request is handed to."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def _delivered_to(scope: Scope, body: bytes) -> int | None:
    """The recipient id, if this is a well-formed "delivered" with a good token."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or parsed != {"state": "delivered"}:
        return None
    token = next((v for k, v in scope["headers"] if k == b"x-alert-token"), b"")
    return receipt_recipient_id(token.decode("latin-1"))


def receipts_router(app: ASGIApp) -> ASGIApp:
    writer = Writer()

    async def router(scope: Scope, receive: Receive, send: Send) -> None:
        if not (scope["type"] == "http" and scope["path"] == PATH and scope["method"] == "POST"):
            await app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return
        recipient_id = _delivered_to(scope, body)
        if recipient_id is None or not await writer.delivered(recipient_id):
            await app(scope, _replay(body), send)
            return
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(DELIVERED)),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": DELIVERED})

    return router
