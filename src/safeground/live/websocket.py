"""The live socket of a fixture: a lean ASGI route, not a Channels consumer (docs/adr/0002).

Protocol (`/ws/fixtures/<id>/?after=<seq>`), server to client, every frame JSON
`{"type", "fixture", "seq", "data"}`:

1. `hello` (seq null, data.server_time) once the socket is accepted;
2. catch-up: the frames after `after` that the viewer may see (only when `after` is given);
3. live frames as they are committed, never one twice, none with seq <= the last catch-up seq;
4. `pong` (seq null, data.server_time) for each client `{"type": "ping"}`.

Refusals: a cross-site Origin is refused at the handshake (HTTP 403); otherwise the socket is
accepted and closed with 4401 (not logged in, or second factor missing), 4403 (may not view the
fixture) or 4404 (no such fixture). 1013 means "too far behind, reconnect"; 1012 "the server lost
its bus, reconnect"; both are followed by a reconnect with `after`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.http.cookie import parse_cookie
from django.http.request import split_domain_port, validate_host

from safeground import clock

from . import providers
from .admission import (
    CLOSE_FORBIDDEN,
    CLOSE_NO_FIXTURE,
    CLOSE_NOT_LOGGED_IN,
    Knock,
    admit_many,
    reads_begin,
    reads_end,
)
from .batches import batches_on_loop
from .bus import get_hub
from .catalogue import HELLO, PONG
from .events import Viewer, frame_json
from .providers import Caught
from .subscriber import CLOSE_OVERLOADED, Subscriber

logger = logging.getLogger(__name__)

ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[dict[str, Any]]], Callable[[dict[str, Any]], Any]],
    Awaitable[None],
]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

FIXTURE_SOCKET = re.compile(r"/ws/fixtures/(?P<fixture_id>[0-9]{1,18})/")
CLOSE_SERVER_ERROR = 1011
MAX_CLIENT_MESSAGE = 1_000  # characters; clients only ever send pings


def live_router(http_app: ASGIApp) -> ASGIApp:
    """Fixture sockets to the live handler; every other scope to the Django app."""

    async def router(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await http_app(scope, receive, send)
            return
        match = FIXTURE_SOCKET.fullmatch(scope["path"])
        if match is None:  # Django speaks no WebSocket: refuse unknown socket paths here
            await receive()
            await send({"type": "websocket.close", "code": CLOSE_NO_FIXTURE})
            return
        await fixture_socket(scope, receive, send, fixture_id=int(match["fixture_id"]))

    return router


async def fixture_socket(scope: dict[str, Any], receive: Receive, send: Send, *, fixture_id: int):
    if (await receive())["type"] != "websocket.connect":
        return
    headers = {name.decode("latin-1").lower(): value for name, value in scope["headers"]}
    origin = headers.get("origin")
    if not origin_allowed(None if origin is None else origin.decode("latin-1")):
        await send({"type": "websocket.close", "code": CLOSE_FORBIDDEN})  # HTTP 403 handshake
        return

    cookies = parse_cookie(headers.get("cookie", b"").decode("latin-1"))
    session_key = cookies.get(settings.SESSION_COOKIE_NAME)
    if not session_key:  # nobody to admit: refused before it joins the hub
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": CLOSE_NOT_LOGGED_IN})
        return
    after = after_seq(scope.get("query_string", b""))
    hub = get_hub()
    subscriber = Subscriber(fixture_id=fixture_id, viewer=None, send=send)
    try:
        await hub.subscribe(subscriber)  # before the reads: nothing committed falls in between
    except TimeoutError:
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": CLOSE_OVERLOADED})
        return
    try:
        knock = Knock(session_key, fixture_id, after)
        try:
            # Sockets that knock together (a reconnect storm) are read together: batches.py.
            answer = await batches_on_loop("admit", admit_and_catch_up).ask(knock)
        except Exception:
            logger.exception("live: admission or catch-up failed for fixture %s", fixture_id)
            answer = CLOSE_SERVER_ERROR
        if subscriber.close_code is not None:  # too much came while it waited: already closing
            return
        await send({"type": "websocket.accept"})
        if isinstance(answer, int):
            await send({"type": "websocket.close", "code": answer})
            return
        subscriber.viewer, caught = answer
        frames = [control_frame(HELLO, fixture_id)]
        last_seq = after
        for seq, frame in caught:
            frames.append(frame)
            if seq is not None and (last_seq is None or seq > last_seq):
                last_seq = seq
        subscriber.write_all(frames)  # the hello and the catch-up: one write to the socket
        subscriber.release(after_seq=last_seq)
        await _answer_pings(receive, subscriber, fixture_id)
    except OSError:  # uvicorn's ClientDisconnected: the client left during the catch-up
        return
    finally:
        hub.unsubscribe(subscriber)


def admit_and_catch_up(knocks: Sequence[Knock]) -> list[tuple[Viewer, list[Caught]] | int]:
    """Each knock's close code, or its Viewer and the frames it missed (those after its `after`
    it may see; none without `after`): one read for the sockets that knocked together."""
    reads_begin()
    try:
        answers = admit_many(knocks)
        wants = [
            (position, knock.fixture_id, answer, knock.after)
            for position, (knock, answer) in enumerate(zip(knocks, answers, strict=True))
            if not isinstance(answer, int) and knock.after is not None
        ]
        caught = catch_up_many(
            [(fixture_id, viewer, after) for _, fixture_id, viewer, after in wants]
        )
        frames: dict[int, list[Caught]] = {
            position: found for (position, *_), found in zip(wants, caught, strict=True)
        }
        return [
            answer if isinstance(answer, int) else (answer, frames.get(position, []))
            for position, answer in enumerate(answers)
        ]
    finally:
        reads_end()


async def _answer_pings(receive: Receive, subscriber: Subscriber, fixture_id: int) -> None:
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text and len(text) <= MAX_CLIENT_MESSAGE and _is_ping(text):
            # Through the subscriber, so a pong never overtakes or races a live frame.
            subscriber.write(control_frame(PONG, fixture_id))


def _is_ping(text: str) -> bool:
    try:
        message = json.loads(text)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("type") == "ping"


def _text(frame: str) -> dict[str, Any]:
    return {"type": "websocket.send", "text": frame}


def control_frame(type: str, fixture_id: int) -> str:
    return frame_json(
        fixture_id=fixture_id,
        type=type,
        seq=None,
        data={"server_time": clock.iso(datetime.now(UTC))},
    )


def after_seq(query_string: bytes) -> int | None:
    values = parse_qs(query_string.decode("latin-1")).get("after")
    if not values or not values[0].isdigit():
        return None
    return int(values[0])


def origin_allowed(origin: str | None) -> bool:
    """The page that opened the socket must be one of ours (no cross-site WebSocket hijacking)."""
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]
    if origin is None:  # browsers always send one; other clients must say where they come from
        return "*" in allowed_hosts
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https"):
        return False
    domain, _port = split_domain_port(parts.netloc)
    return bool(domain) and validate_host(domain, allowed_hosts)


def catch_up_many(wants: Sequence[tuple[int, Viewer, int]]) -> list[list[Caught]]:
    """For each (fixture id, viewer, after seq), the frames after that seq the viewer may see,
    from the apps registered with live; each fixture's asked once for all its sockets."""
    by_fixture: dict[int, list[int]] = {}
    for position, (fixture_id, _, _) in enumerate(wants):
        by_fixture.setdefault(fixture_id, []).append(position)
    found: list[list[Caught]] = [[] for _ in wants]
    for fixture_id, positions in by_fixture.items():
        asked = [(wants[p][1], wants[p][2]) for p in positions]
        answers = providers.catch_up(fixture_id=fixture_id, wants=asked)
        for position, frames in zip(positions, answers, strict=True):
            found[position] = frames
    return found
