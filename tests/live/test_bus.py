"""The hub: one callback per event, frames written in order, slow sockets closed, never stalled."""

import asyncio
import threading
import urllib.parse
from typing import Any

from safeground.live import bus
from safeground.live.bus import Hub
from safeground.live.events import EVERYONE, Audience, Event, Viewer, frame_json
from safeground.live.subscriber import CLOSE_OVERLOADED, Subscriber
from safeground.live.transport import channel_prefix

from .conftest import REDIS_URL, requires_redis

FIXTURE = 42
VIEWER = Viewer(
    user_id=1, organisation_ids=frozenset({1}), roles=frozenset({"safety_officer"}), home_staff=True
)


class FakeSocket:
    """An ASGI `send` that records frames; `stall()` makes it block like a paused transport."""

    def __init__(self) -> None:
        self.frames: list[str] = []
        self.closed_with: int | None = None
        self.writable = asyncio.Event()
        self.writable.set()

    async def send(self, message: dict[str, Any]) -> None:
        await self.writable.wait()
        if message["type"] == "websocket.close":
            self.closed_with = message["code"]
        else:
            self.frames.append(message["text"])


def event(seq: int | None, *, fixture_id: int = FIXTURE, audience: Audience = EVERYONE) -> Event:
    return Event(
        fixture_id=fixture_id,
        type="t",
        seq=seq,
        data={},
        audience=audience,
        frame=frame_json(fixture_id=fixture_id, type="t", data={}, seq=seq),
    )


async def connected(hub: Hub, viewer: Viewer = VIEWER, **kwargs: Any) -> FakeSocket:
    socket = FakeSocket()
    subscriber = Subscriber(fixture_id=FIXTURE, viewer=viewer, send=socket.send, **kwargs)
    await hub.subscribe(subscriber)
    subscriber.release(after_seq=None)
    return socket


def in_process(settings) -> None:
    settings.REDIS_URL = ""


def test_one_loop_callback_per_event_whatever_the_number_of_sockets(settings) -> None:
    in_process(settings)

    async def scenario() -> None:
        hub = Hub()
        sockets = [await connected(hub) for _ in range(50)]
        loop = asyncio.get_running_loop()
        calls = 0
        original = loop.call_soon_threadsafe

        def counting(callback: Any, *args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += callback == hub.fan_out  # asyncio.to_thread uses it too
            return original(callback, *args, **kwargs)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        try:
            await asyncio.to_thread(bus.send, event(1))
            await asyncio.to_thread(bus.send, event(2))
            await asyncio.sleep(0.05)
        finally:
            del loop.call_soon_threadsafe
            await hub.close()
        assert calls == 2
        assert all(len(s.frames) == 2 for s in sockets)

    asyncio.run(scenario())


def test_other_fixtures_and_closed_hubs_get_nothing(settings) -> None:
    in_process(settings)

    async def scenario() -> Hub:
        hub = Hub()
        socket = await connected(hub)
        bus.send(event(1, fixture_id=FIXTURE + 1))
        await asyncio.sleep(0.05)
        assert socket.frames == []
        return hub

    hub = asyncio.run(scenario())
    assert hub.deliver_threadsafe(event(2)) is False  # its loop has gone: no error, no delivery
    bus.send(event(3))


def test_a_slow_socket_is_closed_with_1013_and_does_not_hold_up_the_others(settings) -> None:
    in_process(settings)

    async def scenario() -> None:
        hub = Hub()
        fast = await connected(hub)
        slow = await connected(hub, limit=5)
        slow.writable.clear()  # its transport is paused: writes wait
        for seq in range(1, 8):
            hub.fan_out(FIXTURE, event(seq).frame, Audience(), seq)
        await asyncio.sleep(0.01)
        assert len(fast.frames) == 7
        assert slow.frames == []
        slow.writable.set()
        await asyncio.sleep(0.01)
        assert slow.closed_with == CLOSE_OVERLOADED  # closed, not silently short of frames
        hub.fan_out(FIXTURE, event(8).frame, Audience(), 8)
        await asyncio.sleep(0.01)
        assert len(fast.frames) == 8
        assert len(slow.frames) < 8
        await hub.close()

    asyncio.run(scenario())


def test_a_socket_that_catches_up_up_gets_held_frames_after_its_catch_up_once() -> None:
    async def scenario() -> None:
        socket = FakeSocket()
        subscriber = Subscriber(fixture_id=FIXTURE, viewer=VIEWER, send=socket.send)
        for seq in (3, 4, None, 5):  # arrive while the catch-up query runs
            subscriber.offer(event(seq).frame, seq)
        assert socket.frames == []
        subscriber.release(after_seq=4)  # the catch-up went up to seq 4
        subscriber.offer(event(6).frame, 6)
        await asyncio.sleep(0)
        assert [f.count('"seq":') for f in socket.frames] == [1, 1, 1]
        assert [frame_seq(f) for f in socket.frames] == [None, 5, 6]

    asyncio.run(scenario())


def frame_seq(frame: str) -> int | None:
    import json

    seq = json.loads(frame)["seq"]
    return None if seq is None else int(seq)


def test_the_audience_filters_per_socket(settings) -> None:
    in_process(settings)
    police = Viewer(
        user_id=2, organisation_ids=frozenset({2}), roles=frozenset({"police"}), home_staff=False
    )

    async def scenario() -> None:
        hub = Hub()
        home, force = await connected(hub), await connected(hub, police)
        hub.fan_out(FIXTURE, event(1).frame, Audience(home_only=True), 1)
        hub.fan_out(FIXTURE, event(2).frame, Audience(), 2)
        assert [frame_seq(f) for f in home.frames] == [1, 2]
        assert [frame_seq(f) for f in force.frames] == [2]
        await hub.close()

    asyncio.run(scenario())


def test_a_socket_being_admitted_keeps_what_comes_meanwhile_for_the_viewer_it_turns_out_to_be(
    settings,
) -> None:
    """A socket joins the hub before its admission is read (viewer unknown): frames that come
    meanwhile wait with their audience; once it is admitted it gets those its viewer may see
    and the catch-up did not cover, in order."""
    in_process(settings)
    police = Viewer(
        user_id=2, organisation_ids=frozenset({2}), roles=frozenset({"police"}), home_staff=False
    )

    async def scenario() -> None:
        hub = Hub()
        socket = FakeSocket()
        being_admitted = Subscriber(fixture_id=FIXTURE, viewer=None, send=socket.send)
        await hub.subscribe(being_admitted)
        hub.fan_out(FIXTURE, event(1).frame, Audience(), 1)  # the catch-up will cover it
        hub.fan_out(FIXTURE, event(2).frame, Audience(home_only=True), 2)  # not for the police
        hub.fan_out(FIXTURE, event(3).frame, Audience(), 3)
        hub.fan_out(FIXTURE, event(4).frame, Audience(home_only=True, user_ids=frozenset({2})), 4)
        assert socket.frames == []
        being_admitted.viewer = police
        being_admitted.release(after_seq=1)
        await asyncio.sleep(0)
        assert [frame_seq(f) for f in socket.frames] == [3, 4]
        hub.fan_out(FIXTURE, event(5).frame, Audience(home_only=True), 5)
        hub.fan_out(FIXTURE, event(6).frame, Audience(), 6)
        assert [frame_seq(f) for f in socket.frames] == [3, 4, 6]
        await hub.close()

    asyncio.run(scenario())


@requires_redis
def test_two_hubs_each_get_a_frame_published_once_through_redis(settings) -> None:
    settings.REDIS_URL = REDIS_URL

    async def scenario() -> None:
        first, second = Hub(), Hub()
        a, b = await connected(first), await connected(second)
        await asyncio.to_thread(bus.send, event(1, audience=Audience(home_only=True)))
        await asyncio.to_thread(bus.send, event(2, fixture_id=FIXTURE + 1))
        for _ in range(100):
            if a.frames and b.frames:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)  # a second copy would have arrived by now
        assert a.frames == b.frames == [event(1).frame]
        await first.close()
        await second.close()

    asyncio.run(scenario())


@requires_redis
def test_in_redis_mode_local_hubs_are_reached_only_through_redis(settings) -> None:
    settings.REDIS_URL = REDIS_URL
    published = threading.Event()

    async def scenario() -> None:
        hub = Hub()
        socket = await connected(hub)
        assert hub not in bus._local_hubs
        await asyncio.to_thread(bus.send, event(1))
        published.set()
        for _ in range(100):
            if socket.frames:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)
        assert socket.frames == [event(1).frame]
        await hub.close()

    asyncio.run(scenario())
    assert published.is_set()


@requires_redis
def test_deployments_on_other_redis_database_numbers_never_hear_each_other(settings) -> None:
    # Redis pub/sub ignores the database number; the channel name must not.
    parts = urllib.parse.urlsplit(REDIS_URL)
    number = int(parts.path.strip("/") or 0)
    other_url = parts._replace(path=f"/{(number + 1) % 16}").geturl()

    async def scenario() -> None:
        settings.REDIS_URL = REDIS_URL
        hub = Hub()
        socket = await connected(hub)
        settings.REDIS_URL = other_url
        await asyncio.to_thread(bus.send, event(1))
        settings.REDIS_URL = REDIS_URL
        await asyncio.to_thread(bus.send, event(2))
        for _ in range(100):
            if socket.frames:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)  # the other deployment's frame would have arrived by now
        assert socket.frames == [event(2).frame]
        await hub.close()

    asyncio.run(scenario())


def test_the_redis_channel_carries_the_database_number() -> None:
    # Pub/sub ignores the number: without it, two installations on one Redis server would hear
    # each other's fixtures.
    assert channel_prefix("redis://127.0.0.1:6379/5") == "safeground:5:fixture:"
    assert channel_prefix("redis://127.0.0.1:6379/6") != channel_prefix("redis://127.0.0.1:6379/5")
    assert channel_prefix("redis://127.0.0.1:6379") == "safeground:0:fixture:"


# --- the log's order: frames published out of order, or never --------------------------------


def test_a_frame_that_overtakes_an_earlier_one_waits_for_it(settings) -> None:
    """Two entries committed a moment apart are published by two threads or processes and can
    arrive the other way round; a client shows only seqs above the last it showed, so the hub
    must not let #7 out before #6."""
    in_process(settings)

    async def scenario() -> None:
        hub = Hub()
        socket = await connected(hub)
        hub.fan_out(FIXTURE, event(5).frame, Audience(), 5)
        hub.fan_out(FIXTURE, event(7).frame, Audience(), 7)  # ahead of #6
        hub.fan_out(FIXTURE, event(None).frame, Audience(), None)  # no seq: not held
        await asyncio.sleep(0.01)
        assert [frame_seq(f) for f in socket.frames] == [5, None]
        hub.fan_out(FIXTURE, event(6).frame, Audience(), 6)
        await asyncio.sleep(0.01)
        assert [frame_seq(f) for f in socket.frames] == [5, None, 6, 7]
        await hub.close()

    asyncio.run(scenario())


def test_a_chained_records_seq_does_not_hold_the_log_up(settings) -> None:
    """A broadcast takes seq #6 in the chain but goes out as its own event without a seq: its
    chain_seq tells the hub #6 is done, so #7 goes out at once."""
    in_process(settings)

    async def scenario() -> None:
        hub = Hub()
        socket = await connected(hub)
        hub.fan_out(FIXTURE, event(5).frame, Audience(), 5)
        hub.fan_out(FIXTURE, event(7).frame, Audience(), 7)
        hub.fan_out(FIXTURE, event(None).frame, Audience(), None, 6)  # the broadcast
        await asyncio.sleep(0.01)
        assert [frame_seq(f) for f in socket.frames] == [5, None, 7]
        await hub.close()

    asyncio.run(scenario())


def test_a_frame_never_published_is_read_from_the_database(settings, monkeypatch) -> None:
    """A process killed between its commit and its publish leaves a hole: after GAP_WAIT_SECONDS
    the hub reads the missing frames through the catch-up, once per viewer, and goes on in
    order; a socket still being admitted is closed to reconnect, so it cannot miss the hole."""
    in_process(settings)
    monkeypatch.setattr(bus, "GAP_WAIT_SECONDS", 0.05)
    asked: list[tuple[Viewer, int]] = []

    def catch_up(*, fixture_id: int, wants: list[tuple[Viewer, int]]) -> list[list[Any]]:
        asked.extend(wants)
        return [[(seq, event(seq).frame) for seq in (6, 7, 8) if seq > after] for _, after in wants]

    from safeground.live import providers

    async def scenario() -> None:
        hub = Hub()
        first, second = await connected(hub), await connected(hub)
        admitting = FakeSocket()  # joined the hub, its admission still being read
        await hub.subscribe(Subscriber(fixture_id=FIXTURE, viewer=None, send=admitting.send))
        hub.fan_out(FIXTURE, event(5).frame, Audience(), 5)
        hub.fan_out(FIXTURE, event(7).frame, Audience(), 7)  # #6 never comes
        await asyncio.sleep(0.02)
        assert [frame_seq(f) for f in first.frames] == [5]
        await asyncio.sleep(0.3)
        for socket in (first, second):
            assert [frame_seq(f) for f in socket.frames] == [5, 6, 7]
        assert asked == [(VIEWER, 5)]  # one read for the two sockets of one viewer
        assert admitting.closed_with == 1013  # its catch-up may predate #6: it reconnects
        hub.fan_out(FIXTURE, event(8).frame, Audience(), 8)
        hub.fan_out(FIXTURE, event(6).frame, Audience(), 6)  # very late: shown already
        await asyncio.sleep(0.01)
        assert [frame_seq(f) for f in first.frames] == [5, 6, 7, 8]  # never twice (issue 25)
        await hub.close()

    with providers.catch_up_sources.replaced(catch_up):
        asyncio.run(scenario())


def test_a_frame_the_catch_up_had_that_comes_after_it_is_not_sent_again(settings) -> None:
    """Issue 25: #6 committed before the catch-up read it, but its publish came after the socket
    was released: the screen shows #6 once, from the catch-up."""
    in_process(settings)

    async def scenario() -> None:
        hub = Hub()
        socket = FakeSocket()
        subscriber = Subscriber(fixture_id=FIXTURE, viewer=None, send=socket.send)
        await hub.subscribe(subscriber)
        subscriber.viewer = VIEWER
        subscriber.release(after_seq=6)  # the catch-up went up to #6
        hub.fan_out(FIXTURE, event(6).frame, Audience(), 6)
        hub.fan_out(FIXTURE, event(7).frame, Audience(), 7)
        await asyncio.sleep(0.01)
        assert [frame_seq(f) for f in socket.frames] == [7]
        await hub.close()

    asyncio.run(scenario())


def test_frames_that_reach_a_new_order_out_of_turn_are_shown_in_order_or_the_socket_reconnects(
    settings,
) -> None:
    """Issue 25: two processes publish #6 and #7; #7 reaches the hub first and starts its order
    of the match. A socket still being admitted gets both, in order; one that has shown #7 would
    miss #6, so it is closed (1013) to catch up by seq; one whose catch-up had #6 shows it once."""
    in_process(settings)

    async def scenario() -> None:
        hub = Hub()
        shown_seven = await connected(hub)
        admitting = FakeSocket()
        being_admitted = Subscriber(fixture_id=FIXTURE, viewer=None, send=admitting.send)
        await hub.subscribe(being_admitted)
        caught_six = FakeSocket()
        caught = Subscriber(fixture_id=FIXTURE, viewer=VIEWER, send=caught_six.send)
        await hub.subscribe(caught)
        caught.release(after_seq=6)
        hub.fan_out(FIXTURE, event(7).frame, Audience(), 7)
        hub.fan_out(FIXTURE, event(6).frame, Audience(), 6)
        being_admitted.viewer = VIEWER
        being_admitted.release(after_seq=5)
        hub.fan_out(FIXTURE, event(8).frame, Audience(), 8)
        await asyncio.sleep(0.01)
        assert [frame_seq(f) for f in admitting.frames] == [6, 7, 8]
        assert [frame_seq(f) for f in caught_six.frames] == [7, 8]
        assert [frame_seq(f) for f in shown_seven.frames] == [7]
        assert shown_seven.closed_with == CLOSE_OVERLOADED
        await hub.close()

    asyncio.run(scenario())


def test_a_turn_takes_more_sockets_when_frames_queue_behind_it(settings, monkeypatch) -> None:
    """With frames waiting behind the one being written, a turn writes one turn's sockets for
    each of them (up to FAN_OUT_CATCH_UP): a hub that falls behind catches up instead of staying
    behind; every socket still gets every frame once, in order."""
    in_process(settings)
    monkeypatch.setattr(bus, "FAN_OUT_PAUSE", 0.05)  # one turn at a time, observably

    async def scenario() -> None:
        hub = Hub()
        sockets = [await connected(hub) for _ in range(bus.FAN_OUT_TURN * 3 + 7)]
        for seq in (1, 2, 3):
            hub.fan_out(FIXTURE, event(seq).frame, Audience(), seq)
        assert sum(len(s.frames) for s in sockets) == bus.FAN_OUT_TURN  # the first turn, now
        await asyncio.sleep(0.075)  # the second turn: three frames queued, three turns' worth
        assert sum(len(s.frames) for s in sockets) == bus.FAN_OUT_TURN * 4
        await asyncio.sleep(1.0)
        assert all([frame_seq(f) for f in s.frames] == [1, 2, 3] for s in sockets)
        await hub.close()

    asyncio.run(scenario())


def test_a_fan_out_gives_the_loop_back_between_turns_and_keeps_each_sockets_order(
    settings,
) -> None:
    """A frame for many sockets is written FAN_OUT_TURN sockets per turn of the loop, so an HTTP
    request's crossing to the loop waits for at most one turn, not for the whole fan-out; a
    second frame never overtakes the first at any socket."""
    in_process(settings)

    async def scenario() -> None:
        hub = Hub()
        sockets = [await connected(hub) for _ in range(bus.FAN_OUT_TURN * 3 + 7)]
        crossed: list[int] = []
        loop = asyncio.get_running_loop()
        hub.fan_out(FIXTURE, event(1).frame, Audience(), 1)
        loop.call_soon(lambda: crossed.append(sum(bool(s.frames) for s in sockets)))
        hub.fan_out(FIXTURE, event(2).frame, Audience(), 2)
        assert sum(bool(s.frames) for s in sockets) == bus.FAN_OUT_TURN  # the first turn, now
        await asyncio.sleep(0.1)
        assert crossed == [bus.FAN_OUT_TURN]  # the request's turn came before the next one
        assert all([frame_seq(f) for f in s.frames] == [1, 2] for s in sockets)
        await hub.close()

    asyncio.run(scenario())
