"""The fast path: a frame encoded once per event and written straight to each socket's transport."""

import asyncio

import pytest
from websockets.frames import Frame, Opcode

from safeground.live.events import Viewer
from safeground.live.subscriber import RAW_BUFFER_LIMIT, Subscriber, encode_text_frame

VIEWER = Viewer(
    user_id=1, organisation_ids=frozenset({1}), roles=frozenset({"safety_officer"}), home_staff=True
)


@pytest.mark.parametrize("size", [0, 125, 126, 65_535, 65_536, 200_000])
def test_frames_are_encoded_as_the_websockets_library_encodes_them(size: int) -> None:
    text = "é" * (size // 2) + "x" * (size % 2)
    expected = Frame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=[])
    assert encode_text_frame(text) == expected


class Transport:
    def __init__(self, buffered: int = 0) -> None:
        self.written: list[bytes] = []
        self.buffered = buffered

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return self.buffered


class Protocol:
    """Stands in for uvicorn's protocol: the ASGI send is its bound method, as in uvicorn."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.sent: list[dict] = []

    async def asgi_send(self, message: dict) -> None:
        self.sent.append(message)


def test_live_frames_go_straight_to_the_transport_and_a_backlog_closes_the_socket() -> None:
    async def scenario() -> tuple[Protocol, Protocol, Subscriber]:
        quick, slow = Protocol(Transport()), Protocol(Transport(buffered=RAW_BUFFER_LIMIT + 1))
        for protocol in (quick, slow):
            sub = Subscriber(fixture_id=1, viewer=VIEWER, send=protocol.asgi_send)
            sub.release(after_seq=None)
            sub.offer('{"seq":1}', 1, encode_text_frame('{"seq":1}'))
        await asyncio.sleep(0)  # let the close go out
        return quick, slow, sub

    quick, slow, slow_sub = asyncio.run(scenario())
    assert quick.transport.written == [encode_text_frame('{"seq":1}')]
    assert quick.sent == []  # nothing through the per-socket ASGI send
    assert slow.transport.written == []
    assert slow_sub.close_code == 1013
    assert slow.sent == [{"type": "websocket.close", "code": 1013}]


@pytest.mark.django_db(transaction=True)
def test_every_served_socket_is_written_to_raw(match_day, session_of, open_socket) -> None:
    cup_tie = match_day.cup_tie
    """Under uvicorn as served (its `auto` WebSocket protocol is the one the test server runs),
    each socket's frames go straight to its transport, not through the ASGI send."""
    from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    from safeground.live import bus

    assert AutoWebSocketsProtocol is WebSocketsSansIOProtocol
    session = session_of("loggist")

    async def scenario() -> list[Subscriber]:
        async with open_socket(cup_tie.pk, session) as ws:
            await ws.recv()  # hello: subscribed
            hubs = list(bus._default_hubs.values())
            return [sub for hub in hubs for sub in hub._subscribers.get(cup_tie.pk, ())]

    subscribers = asyncio.run(scenario())
    assert subscribers and all(sub._transport is not None for sub in subscribers)
