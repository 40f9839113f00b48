"""What the lean routes share: a few hot requests (a turnstile's scan, entry/runtime/asgi.py; a
phone's receipt, alerts/receipts.py) are answered before Django's request machinery, which costs
more than their work. Each reads its body here, bounded, and answers in the API's one JSON shape
(safeground.errors); what it does not take goes to the application behind it unchanged.
"""

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from safeground.errors import SafegroundError, TooLarge

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class OverTheLimit:
    """What body_read returns for a body past its limit."""


OVER_THE_LIMIT = OverTheLimit()


def is_post(scope: Scope, path: str) -> bool:
    return scope["type"] == "http" and scope["path"] == path and scope["method"] == "POST"


def declared_over(value: bytes, limit: int) -> bool:
    """Whether a Content-Length header's value says the body is past `limit` bytes: refused
    before it is read (a 50 MB body is not received at all)."""
    return value.isdigit() and int(value) > limit


async def body_read(receive: Receive, limit: int) -> bytes | OverTheLimit | None:
    """The body, or None when the client hung up; OVER_THE_LIMIT past `limit` bytes (a client
    that sends no Content-Length is cut off there too, so memory stays bounded)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return OVER_THE_LIMIT
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def replay(body: bytes) -> Receive:
    """The body already read, for the application the request is handed to."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def too_large(detail: str) -> tuple[int, bytes]:
    """The 413 for a body past the route's limit, `detail` saying the limit."""
    return error_answer(TooLarge("body", detail))


def error_answer(error: SafegroundError) -> tuple[int, bytes]:
    """A refusal as the API answers it: its status and its one JSON shape."""
    return error.status, json.dumps(error.to_json()).encode()


async def answer(
    send: Send, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """A JSON answer, whole."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
