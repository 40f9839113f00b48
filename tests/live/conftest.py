"""Live-socket tests: the real ASGI app under uvicorn in a thread, websockets as the client.

The client runs in `asyncio.run` inside the test; anything that touches the database (logging in,
publishing in a transaction) runs in the test's thread or a worker thread, never in the loop.
"""

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections, transaction
from websockets.asyncio.client import ClientConnection, connect

from safeground.live.catalogue import LOG_ENTRY
from safeground.live.events import EVERYONE, Audience, publish

REDIS_URL = os.environ.get("REDIS_URL", "")
requires_redis = pytest.mark.skipif(
    not REDIS_URL, reason="Redis mode needs REDIS_URL (e.g. redis://127.0.0.1:6379/0)"
)


@pytest.fixture(scope="session")
def live_server_ws(asgi_server: str) -> str:
    return f"ws://{asgi_server}"


@pytest.fixture
def session_of(client_for) -> Callable[[str], str]:
    """The sessionid cookie of one of the cast (tests/factories.py) logged in with the test
    Client."""

    def session(username: str) -> str:
        return str(client_for(username).cookies["sessionid"].value)

    return session


@pytest.fixture
def open_socket(live_server_ws) -> Callable[..., Any]:
    """An async context manager: a websockets client on a fixture's live socket."""

    def open_(
        fixture_id: int, session: str | None = None, *, after: int | None = None, origin: str = ""
    ) -> Any:
        url = f"{live_server_ws}/ws/fixtures/{fixture_id}/"
        if after is not None:
            url += f"?after={after}"
        headers = {"Cookie": f"sessionid={session}"} if session else {}
        return connect(
            url,
            origin=origin or live_server_ws.replace("ws://", "http://"),  # type: ignore[arg-type]
            additional_headers=headers,
            compression=None,
            open_timeout=5,
        )

    return open_


def log_entry_data(seq: int, text: str = "") -> dict[str, Any]:
    """A `log.entry` payload that fits the catalogue, for tests of the transport, not the log."""
    at = "2016-10-26T19:45:00+00:00"
    entry = {
        "id": seq,
        "seq": seq,
        "kind": "report",
        "concerns": None,
        "observed_at": at,
        "logged_at": at,
        "device_offset_s": None,
        "author": "Test Loggist",
        "author_role": "control_operator",
        "place": "",
        "place_names": {},
        "block": "",
        "category": "other",
        "category_name": "Other",
        "severity": 1,
        "text": text,
        "note": "",
        "status": "",
        "assignee": "",
        "escalated_to": "",
        "task": "",
        "links": [],
        "hash": "0" * 64,
    }
    incident = {
        key: entry[key]
        for key in ("id", "seq", "kind", "category", "category_name", "severity", "text")
    } | {
        "status": "open",
        "place": "",
        "place_names": {},
        "block": "",
        "zone_ids": [],
        "assignee": "",
        "assignee_username": "",
        "assignee_id": None,
        "escalated_to": "",
        "task": "",
        "links": [],
        "updated_seq": seq,
        "observed_at": at,
    }
    return {"entry": entry, "incident": incident}


def publish_committed(
    fixture_id: int,
    text: str = "",
    *,
    audience: Audience = EVERYONE,
    seq: int = 0,
) -> None:
    """Publish a `log.entry` in a committed transaction of this thread (call it via
    asyncio.to_thread)."""
    data = log_entry_data(seq, text)
    try:
        with transaction.atomic():
            publish(fixture_id=fixture_id, type=LOG_ENTRY, data=data, audience=audience, seq=seq)
    finally:
        connections.close_all()


async def next_frame(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), timeout)))


async def no_frame(ws: ClientConnection, wait: float = 0.3) -> None:
    try:
        message = await asyncio.wait_for(ws.recv(), wait)
    except TimeoutError:
        return
    raise AssertionError(f"unexpected frame {message!r}")
