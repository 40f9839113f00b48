"""The lean route for phones' receipts: `POST /api/alerts/receipt` saying "delivered", answered
before Django's request machinery (a dozen middlewares and ninja's operation, ~10 ms of one
core each), as entry's lean route does for scans. A broadcast to 500 stewards brings 500
receipts within a second or two; through Django they queued behind each other for seconds.

Here the token is checked on the event loop (a MAC: no database), and the receipts that arrive
while one write is running are written together by the next (the group commit's writer thread,
safeground.group_commit): a receipt is answered once it is stored. A body over MAX_BODY is no
receipt: 413, in the API's shape (safeground.lean_route). Anything else (acknowledged, a bad
token, a body that is not as expected, an unknown recipient, a database that is away) goes to the
ninja route (alerts.api.alert_receipt) unchanged, which answers as the API does; tests/alerts/
check both answer alike.
"""

from __future__ import annotations

import json

from django.db import DatabaseError
from django.utils import timezone
from django.utils.translation import gettext

from safeground.group_commit import OnThread, Policy
from safeground.lean_route import (
    ASGIApp,
    OverTheLimit,
    Receive,
    Scope,
    Send,
    answer,
    body_read,
    is_post,
    replay,
    too_large,
)

from .models import AlertRecipient
from .services import receipt_recipient_id

PATH = "/api/alerts/receipt"
MAX_BODY = 1024
DELIVERED = json.dumps({"state": "delivered"}).encode()
# A broadcast's stewards in one write; a phone's receipt sent twice waits for the next write.
POLICY: Policy[int] = Policy(limit=500, keys=lambda recipient_id: (recipient_id,))


def receipts_store(ids: list[int]) -> list[bool]:
    """Mark these recipients delivered (those not yet); whether each exists. On the writer
    thread, whose connection goes back whenever no receipt waits."""
    found = set(AlertRecipient.objects.filter(pk__in=ids).values_list("pk", flat=True))
    AlertRecipient.objects.filter(pk__in=found, delivered_at__isnull=True).update(
        delivered_at=timezone.now()
    )
    return [recipient_id in found for recipient_id in ids]


_receipts = OnThread(receipts_store, POLICY, name="alert-receipts")


async def delivered(recipient_id: int) -> bool:
    """Whether it was stored (False: no such recipient, or the database failed: the API's route
    then answers as it does)."""
    try:
        return await _receipts.ask_async(recipient_id)
    except DatabaseError:
        return False


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
    async def router(scope: Scope, receive: Receive, send: Send) -> None:
        if not is_post(scope, PATH):
            await app(scope, receive, send)
            return
        body = await body_read(receive, MAX_BODY)
        if body is None:
            return
        if isinstance(body, OverTheLimit):  # not a receipt
            detail = gettext("a receipt is at most %(limit)s bytes") % {"limit": MAX_BODY}
            await answer(send, *too_large(detail))
            return
        recipient_id = _delivered_to(scope, body)
        if recipient_id is None or not await delivered(recipient_id):
            await app(scope, replay(body), send)
            return
        await answer(send, 200, DELIVERED)

    return router
