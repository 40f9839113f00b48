"""The process's hub: one subscription per server process, frames written straight to sockets.

In-process mode (REDIS_URL empty) a committed event reaches each hub's event loop with one
`call_soon_threadsafe` per event, never one per client. A process that serves no sockets (a
command run beside the server: `safeground replay`) hands its events to the serving process
through the relay, a Unix datagram socket named for the database that the server's hub listens
on (`relay_path`), so the embedded default shows them live without Redis.

Redis mode publishes the event to `safeground:<db>:fixture:<id>`; each process runs one pattern
subscription and fans out locally, and local delivery then goes only through Redis, so no socket
gets a frame twice.

Frames with a seq leave each hub in seq order (`_Order`). Events are published after commit by
whichever thread or process committed them, so two entries committed a moment apart can reach a
hub the other way round; a client shows only seqs above the last it showed, and reconnects with
`?after=<that seq>`, so an entry overtaken by the next would be missed for good. A hub therefore
holds a frame that arrives ahead of its turn; the gap is filled by the frame it waits for, or, if
that never comes (the publishing process died between its commit and its publish), after
GAP_WAIT_SECONDS from the database through the registered catch-up, once per viewer. A chained
record (a broadcast, a post, a photo) takes a seq without a log frame: its event names that seq
(`chain_seq`), so it never holds the log up.

The fan-out is the hot path of the live picture (STACK.md): no database, no thread hop and no
consumer dispatch per message per client. A write that completes at once (the usual case) costs no
task switch; a slow socket queues up to FRAME_QUEUE_LIMIT frames and is then closed with 1013 so
its client reconnects and catches up by seq. Nothing is dropped silently.

A socket's outbox and its frames are in subscriber.py; the Redis channels and the relay's wire
in transport.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import threading
from collections import deque

from django.conf import settings

from .events import EVERYONE, Audience, Event, Viewer
from .subscriber import CLOSE_OVERLOADED, CLOSE_SERVICE_RESTART, Subscriber, encode_text_frame
from .transport import (
    RELAY_MAX_BYTES,
    channel_prefix,
    redis_client,
    redis_message,
    relay_path,
    relay_send,
)

logger = logging.getLogger(__name__)

GAP_WAIT_SECONDS = 1.0  # a missing seq is read from the database after this (see _Order)
FAN_OUT_TURN = 200  # sockets written to in one turn of the loop (Hub._write_turn)
FAN_OUT_PAUSE = 0.001  # seconds the loop polls, without the GIL, between two turns
FAN_OUT_CATCH_UP = 4  # at most this many turns' sockets in one turn when frames queue up
READY_TIMEOUT = 5.0  # seconds a new socket waits for the Redis subscription


class _Order:
    """The seq order of one fixture's frames in a hub: the next seq to go out, the frames that
    arrived ahead of it, and the timer after which the gap is filled from the database."""

    __slots__ = ("filling", "first", "held", "next", "timer")

    def __init__(self, first: int) -> None:
        # The first frame a hub sees of a match starts its order: the sockets that were open
        # before it caught up from the database when they connected.
        self.first = first
        self.next = first
        self.held: dict[int, tuple[str, Audience, int | None]] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.filling = False

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class _Delivery:
    """One frame on its way to a list of sockets, a turn of the loop at a time."""

    __slots__ = ("audience", "encoded", "everyone", "frame", "next", "seq", "subs")

    def __init__(
        self, subs: list[Subscriber], frame: str, audience: Audience | None, seq: int | None
    ) -> None:
        self.subs = subs
        self.frame = frame
        self.encoded = encode_text_frame(frame)  # once for every socket
        self.audience = audience  # None: every socket here may see it (read for its viewer)
        self.everyone = audience is None or audience == EVERYONE
        self.seq = seq
        self.next = 0

    def write(self, budget: int) -> int:
        """Write to up to `budget` more sockets; the budget left (negative: not done)."""
        subs, start = self.subs, self.next
        end = min(len(subs), start + budget)
        frame, encoded, seq, audience = self.frame, self.encoded, self.seq, self.audience
        everyone = self.everyone
        for index in range(start, end):
            sub = subs[index]
            viewer = sub.viewer  # read now: a socket may have been admitted since it was queued
            if viewer is None:
                sub.offer(frame, seq, encoded, audience)
            elif everyone or audience.admits(viewer):  # type: ignore[union-attr]
                sub.offer(frame, seq, encoded)
        self.next = end
        return budget - (end - start) if end == len(subs) else -1


class Hub:
    """The sockets of one event loop (one server process), by fixture."""

    def __init__(self, *, redis_url: str | None = None) -> None:
        self.redis_url: str = settings.REDIS_URL if redis_url is None else redis_url
        self._subscribers: dict[int, set[Subscriber]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listener: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._relay: socket.socket | None = None
        self._relay_file: tuple[str, int] = ("", 0)
        self._orders: dict[int, _Order] = {}
        self._queued: deque[_Delivery] = deque()  # frames on their way, in the order sent
        self._writing = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self._loop

    def subscriber_count(self, fixture_id: int | None = None) -> int:
        if fixture_id is not None:
            return len(self._subscribers.get(fixture_id, ()))
        return sum(len(subs) for subs in self._subscribers.values())

    async def subscribe(self, subscriber: Subscriber) -> None:
        """Add a socket; in Redis mode, return once the process's subscription is live."""
        self._bind(asyncio.get_running_loop())
        self._subscribers.setdefault(subscriber.fixture_id, set()).add(subscriber)
        if self.redis_url:
            if self._listener is None:
                self._listener = asyncio.get_running_loop().create_task(self._listen())
            if not self._ready.is_set():
                try:
                    await asyncio.wait_for(self._ready.wait(), READY_TIMEOUT)
                except TimeoutError:
                    self.unsubscribe(subscriber)
                    raise

    def unsubscribe(self, subscriber: Subscriber) -> None:
        subs = self._subscribers.get(subscriber.fixture_id)
        if subs is not None:
            subs.discard(subscriber)
            if not subs:
                del self._subscribers[subscriber.fixture_id]
                self._forget_order(subscriber.fixture_id)

    def _forget_order(self, fixture_id: int) -> None:
        order = self._orders.pop(fixture_id, None)
        if order is not None:
            order.cancel()

    def fan_out(
        self,
        fixture_id: int,
        frame: str,
        audience: Audience,
        seq: int | None,
        chain_seq: int | None = None,
    ) -> None:
        """Write one frame to every socket of the fixture whose viewer the audience admits, in
        the order of the log's seqs (`seq`, or the `chain_seq` of a chained record's event)."""
        if not self._subscribers.get(fixture_id):
            self._forget_order(fixture_id)  # no socket here: new ones catch up from the database
            return
        place = seq if seq is not None else chain_seq
        if place is None:
            self._deliver(fixture_id, frame, audience, seq)
            return
        order = self._orders.get(fixture_id)
        if order is None:
            order = self._orders[fixture_id] = _Order(place)
        if place < order.first:
            # Published before the frame that started the order but arrived after it: each
            # socket sends it only if it has shown nothing after it (Subscriber.offer).
            self._deliver(fixture_id, frame, audience, seq)
            return
        if place < order.next or place in order.held:
            if seq is None:  # a chained record's event, late: the database filled no frame for it
                self._deliver(fixture_id, frame, audience, seq)
            return  # else a repeat: it went out in turn, or its gap was filled from the database
        order.held[place] = (frame, audience, seq)
        self._release(fixture_id, order)

    def _release(self, fixture_id: int, order: _Order) -> None:
        """Send the held frames that are next in turn; time the gap if one is left."""
        if order.filling:
            return
        while (item := order.held.pop(order.next, None)) is not None:
            order.next += 1
            self._deliver(fixture_id, *item)
        if not order.held:
            order.cancel()
        elif order.timer is None and self._loop is not None:
            order.timer = self._loop.call_later(GAP_WAIT_SECONDS, self._gap, fixture_id, order)

    def _gap(self, fixture_id: int, order: _Order) -> None:
        order.timer = None
        if self._orders.get(fixture_id) is order and order.held and self._loop is not None:
            order.filling = True
            self._loop.create_task(self._fill(fixture_id, order))

    async def _fill(self, fixture_id: int, order: _Order) -> None:
        """Frames that never came (their process died between commit and publish, or the bus
        dropped them) read from the database, for each viewer of the fixture's sockets."""
        from asgiref.sync import sync_to_async

        upto = min(order.held)
        subs = list(self._subscribers.get(fixture_id, ()))
        by_viewer: dict[Viewer, list[Subscriber]] = {}
        # A socket still being admitted has no viewer to read for, and its catch-up may have
        # read the log before the missing seq was committed: it is closed (1013) below, to
        # reconnect and catch up by seq, rather than risk missing it.
        being_admitted = [sub for sub in subs if sub.viewer is None]
        for sub in subs:
            if sub.viewer is not None:
                by_viewer.setdefault(sub.viewer, []).append(sub)
        try:
            frames = await sync_to_async(_frames_between, thread_sensitive=False)(
                fixture_id=fixture_id, viewers=list(by_viewer), after=order.next - 1, before=upto
            )
        except Exception:
            logger.exception(
                "live: seqs %s-%s of fixture %s not read", order.next, upto - 1, fixture_id
            )
            frames = None
        order.filling = False
        if self._orders.get(fixture_id) is not order:
            return
        if frames is None:  # the sockets reconnect and catch up themselves
            for sub in subs:
                sub.abort(CLOSE_OVERLOADED)
            self._forget_order(fixture_id)
            return
        logger.warning(
            "live: seqs %s-%s of fixture %s filled from the database",
            order.next,
            upto - 1,
            fixture_id,
        )
        for viewer, viewer_frames in zip(by_viewer, frames, strict=True):
            for frame_seq, frame in viewer_frames:
                self._write_later(by_viewer[viewer], frame, None, frame_seq)
        for sub in being_admitted:
            sub.abort(CLOSE_OVERLOADED)
        order.next = upto
        self._release(fixture_id, order)

    def _deliver(self, fixture_id: int, frame: str, audience: Audience, seq: int | None) -> None:
        subs = self._subscribers.get(fixture_id)
        if subs:
            self._write_later(list(subs), frame, audience, seq)

    def _write_later(
        self, subs: list[Subscriber], frame: str, audience: Audience | None, seq: int | None
    ) -> None:
        """Queue a frame for these sockets behind the frames queued before it (the order the
        hub sends them in) and write as much as one turn allows now."""
        self._queued.append(_Delivery(subs, frame, audience, seq))
        if not self._writing:
            self._writing = True
            self._write_turn()

    def _write_turn(self) -> None:
        """Write queued frames to at most FAN_OUT_TURN sockets, then give the loop back.

        An HTTP request's thread crosses to the loop to read its body and for each part of its
        answer (a2wsgi); one turn of the loop over 2,000 sockets kept every such crossing waiting
        for the whole fan-out. Between turns the loop also waits FAN_OUT_PAUSE in its poll, which
        holds no GIL: with the next turn due at once, the request's thread, woken by its
        crossing, found the GIL taken again and waited its switch interval each time (POST p50
        312 -> 42 ms: docs/adr/0012-fan-out-at-crisis-load.md).

        With frames queued behind the one being written, a turn takes one turn's sockets for
        each, up to FAN_OUT_CATCH_UP: a pause costs more than its millisecond on a busy machine
        (the process waits for a core), so with fixed turns 20 frames a second to 2,000 sockets
        fell seconds behind for good, where the plain broadcast kept up (bench_fanout_cost.py,
        ADR 0012's update of issue 39)."""
        queued = self._queued
        budget = FAN_OUT_TURN * min(len(queued), FAN_OUT_CATCH_UP)
        while queued and budget > 0:
            budget = queued[0].write(budget)
            if budget >= 0:
                queued.popleft()
        if queued and self._loop is not None and not self._loop.is_closed():
            self._loop.call_later(FAN_OUT_PAUSE, self._write_turn)
        else:
            queued.clear()
            self._writing = False

    def deliver_threadsafe(self, event: Event) -> bool:
        """Hand an event to the hub's loop from any thread: one callback per event."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return False
        try:
            loop.call_soon_threadsafe(
                self.fan_out,
                event.fixture_id,
                event.frame,
                event.audience,
                event.seq,
                event.chain_seq,
            )
        except RuntimeError:  # the loop closed meanwhile
            return False
        return True

    async def close(self) -> None:
        with _registry_lock:
            if self in _local_hubs:
                _local_hubs.remove(self)
        self._relay_close()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._loop is loop:
            return
        if self._loop is not None and not self._loop.is_closed():
            raise RuntimeError("a hub serves the sockets of one event loop")
        self._loop = loop
        if not self.redis_url:
            with _registry_lock:
                _local_hubs.append(self)
            self._relay_open(loop)

    def _relay_open(self, loop: asyncio.AbstractEventLoop) -> None:
        """Listen on the relay for events of processes that serve no sockets (no Redis)."""
        relay = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        path = "(none)"
        try:
            path = relay_path()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # a server that died left it; one server per database
            relay.bind(path)
            os.chmod(path, 0o600)  # only this user's processes may publish
            self._relay_file = (path, os.stat(path).st_ino)
        except OSError:
            relay.close()
            logger.warning("live: no relay at %s: other processes' events show on reload", path)
            return
        relay.setblocking(False)
        self._relay = relay
        loop.add_reader(relay.fileno(), self._on_relay, relay)

    def _on_relay(self, relay: socket.socket) -> None:
        while True:
            try:
                data = relay.recv(RELAY_MAX_BYTES)
            except (BlockingIOError, OSError):
                return
            with contextlib.suppress(ValueError, KeyError):
                header, frame = data.decode().split("\n", 1)
                wire = json.loads(header)
                self.fan_out(
                    wire["fixture"],
                    frame,
                    Audience.from_wire(wire),
                    wire.get("seq"),
                    wire.get("chain_seq"),
                )

    def _relay_close(self) -> None:
        relay, self._relay = self._relay, None
        if relay is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(relay.fileno())
        path, inode = self._relay_file
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == inode:  # still ours, not a newer server's
                os.unlink(path)
        relay.close()

    async def _listen(self) -> None:
        """The process's one Redis subscription; it reconnects with back-off if Redis goes."""
        import redis.asyncio as aioredis

        delay = 0.5
        while True:
            client = aioredis.Redis.from_url(self.redis_url)
            pubsub = client.pubsub()
            try:
                await pubsub.psubscribe(channel_prefix(self.redis_url) + "*")
                async for message in pubsub.listen():
                    if message["type"] == "pmessage":
                        self._on_redis_message(message["channel"], message["data"])
                    elif message["type"] == "psubscribe":
                        self._ready.set()
                        delay = 0.5
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("live: Redis subscription lost; retrying", exc_info=True)
            finally:
                was_ready = self._ready.is_set()
                self._ready.clear()
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                    await client.aclose()
            if was_ready:
                # Frames published while we were away would be lost: make every client reconnect
                # and catch up by seq instead.
                for subs in list(self._subscribers.values()):
                    for sub in list(subs):
                        sub.abort(CLOSE_SERVICE_RESTART)
                for fixture_id in list(self._orders):
                    self._forget_order(fixture_id)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)

    def _on_redis_message(self, channel: bytes, data: bytes) -> None:
        fixture_id = int(channel.rsplit(b":", 1)[1])
        if fixture_id not in self._subscribers:
            return
        header, frame = data.decode().split("\n", 1)
        wire = json.loads(header)
        audience = Audience.from_wire(wire)
        self.fan_out(fixture_id, frame, audience, wire.get("seq"), wire.get("chain_seq"))


# Hubs that receive in-process events (REDIS_URL empty); normally one, the server's.
_local_hubs: list[Hub] = []
_default_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}
_registry_lock = threading.Lock()


def get_hub() -> Hub:
    """The hub of the running event loop (one per server process), made on first use."""
    loop = asyncio.get_running_loop()
    with _registry_lock:
        hub = _default_hubs.get(loop)
        if hub is None:
            for old in [old for old in _default_hubs if old.is_closed()]:
                stale = _default_hubs.pop(old)
                if stale in _local_hubs:
                    _local_hubs.remove(stale)
                stale._relay_close()
            hub = _default_hubs[loop] = Hub()
    return hub


def heard(fixture_id: int) -> bool:
    """Whether an event of this fixture sent now could reach a socket: in Redis mode any
    process's may hold one; in-process, this process's hubs, or, from a process serving none,
    the server's through the relay."""
    if settings.REDIS_URL:
        return True
    with _registry_lock:
        hubs = list(_local_hubs)
    if not hubs:  # a command beside the server: its sockets may, through the relay
        try:
            return os.path.exists(relay_path())
        except OSError:
            return False
    return any(hub.subscriber_count(fixture_id) for hub in hubs)


def relays_close() -> None:
    """A server shutting down stops listening on the relay and removes its socket file."""
    with _registry_lock:
        hubs = list(_local_hubs)
    for hub in hubs:
        hub._relay_close()


def send(event: Event) -> None:
    """Deliver a committed event: to Redis when configured, else to this process's hubs, or,
    in a process serving no sockets, through the relay to the server's."""
    url: str = settings.REDIS_URL
    if url:
        redis_client(url).publish(channel_prefix(url) + str(event.fixture_id), redis_message(event))
        return
    with _registry_lock:
        hubs = list(_local_hubs)
    for hub in hubs:
        hub.deliver_threadsafe(event)
    if not hubs:
        relay_send(event)


def _frames_between(
    *, fixture_id: int, viewers: list[Viewer], after: int, before: int
) -> list[list[tuple[int, str]]]:
    """For each viewer, the (seq, frame) of the log after `after` and before `before` it may see
    (the registered catch-up: live never reads the log itself)."""
    from django.db import close_old_connections

    from . import providers

    close_old_connections()
    try:
        wants = [(viewer, after) for viewer in viewers]
        return [
            [(seq, frame) for seq, frame in frames if seq is not None and seq < before]
            for frames in providers.catch_up(fixture_id=fixture_id, wants=wants)
        ]
    finally:
        close_old_connections()
