"""One live socket's place in the hub (bus.py): its viewer, its bounded outbox, and the frames
written straight to its transport, each WebSocket frame encoded once per event."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from .events import Audience, Viewer

logger = logging.getLogger(__name__)

ASGISend = Callable[[dict[str, Any]], Awaitable[None]]

FRAME_QUEUE_LIMIT = 1_000  # frames waiting for one slow socket before it is closed
RAW_BUFFER_LIMIT = 1_000_000  # bytes unsent to one socket before it is closed (~1,000 frames)


def encode_text_frame(text: str) -> bytes:
    """A whole unmasked WebSocket text frame (RFC 6455 5.2), as a server sends it."""
    payload = text.encode()
    size = len(payload)
    if size < 126:
        header = bytes((0x81, size))
    elif size < 1 << 16:
        header = bytes((0x81, 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((0x81, 127)) + size.to_bytes(8, "big")
    return header + payload


def raw_transport(send: ASGISend) -> asyncio.WriteTransport | None:
    """The socket's transport behind uvicorn's ASGI `send`, when it can be reached.

    Writing a frame encoded once per event straight to each transport costs a fraction of an
    ASGI `send` per socket (measured: bench/bench_live.py, docs/adr/0002-live-fan-out.md); data
    frames need nothing from the protocol's state, and closes still go through `send`."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    needed = ("write", "is_closing", "get_write_buffer_size")
    if transport is None or not all(hasattr(transport, name) for name in needed):
        return None
    return transport


CLOSE_OVERLOADED = 1013  # "try again later": the client reconnects and catches up
CLOSE_SERVICE_RESTART = 1012  # the hub lost its Redis subscription: reconnect and catch up


class Subscriber:
    """One connected socket's place in the hub: its viewer and its bounded outbox.

    It joins the hub before it is admitted (viewer None), so nothing committed while its
    admission and catch-up are read falls in between; until `release()` it holds live frames
    back, with their audience while the viewer is unknown, so the handler can send the catch-up
    first. It is made, and every method runs, on the hub's event loop.
    """

    def __init__(
        self,
        *,
        fixture_id: int,
        viewer: Viewer | None,
        send: ASGISend,
        limit: int = FRAME_QUEUE_LIMIT,
    ) -> None:
        self.fixture_id = fixture_id
        self.viewer = viewer
        self.close_code: int | None = None
        self._send = send
        self._transport = raw_transport(send)
        self._limit = limit
        self._loop = asyncio.get_running_loop()
        # (frame, seq, its audience while the viewer is unknown; None once it has admitted them)
        self._held: list[tuple[str, int | None, Audience | None]] | None = []
        # Seqs up to `_caught` came in the catch-up; `_last` is the highest seq on the screen.
        # A log frame at or below `_last` is never written: a screen shows each seq once, in
        # order (issue 25).
        self._caught = -1
        self._last = -1
        self._pending: deque[str] = deque()
        self._writer: asyncio.Task[None] | None = None
        self._closer: asyncio.Task[None] | None = None

    def offer(
        self,
        frame: str,
        seq: int | None,
        encoded: bytes | None = None,
        audience: Audience | None = None,
    ) -> None:
        """A live frame for this socket: the audience has already admitted the viewer, or, if
        the viewer is not known yet, `audience` is kept with it until `release`."""
        if self._held is not None:
            if len(self._held) >= self._limit:
                self.abort(CLOSE_OVERLOADED)
            else:
                self._held.append((frame, seq, audience))
        elif seq is None or seq > self._last:
            if seq is not None:
                self._last = seq
            self.write(frame, encoded)
        elif seq > self._caught:
            # Overtaken by a later seq (published by another thread or process after it): the
            # screen shows only seqs above its last, so it would miss this one. It reconnects
            # and catches up by seq instead.
            self.abort(CLOSE_OVERLOADED)
        # else: the catch-up had it (committed before the read, published after): not twice

    def release(self, *, after_seq: int | None) -> None:
        """The viewer is set and the catch-up, up to `after_seq`, sent: send the held frames the
        viewer may see in seq order, skipping those the catch-up already covered."""
        assert self.viewer is not None
        held, self._held = self._held or [], None
        if after_seq is not None:
            self._caught = self._last = after_seq
        # Frames reach the hub out of seq order before its order of the match starts (bus._Order);
        # a frame without a seq keeps its place after the seq before it.
        place = self._last
        placed = []
        for index, (frame, seq, audience) in enumerate(held):
            place = place if seq is None else seq
            placed.append((place, index, frame, seq, audience))
        placed.sort()
        for _place, _index, frame, seq, audience in placed:
            if audience is None or audience.admits(self.viewer):
                self.offer(frame, seq)

    def write_all(self, frames: list[str]) -> None:
        """Several frames in order: in one write to an idle socket (a hello and its catch-up)."""
        transport = self._transport
        if self.close_code is not None or self._writer is not None or transport is None:
            for frame in frames:
                self.write(frame)
        elif not transport.is_closing():
            self.write(frames[-1], b"".join(encode_text_frame(frame) for frame in frames))

    def write(self, frame: str, encoded: bytes | None = None) -> None:
        """Send now if the socket is idle; otherwise queue behind the write in flight."""
        if self.close_code is not None:
            return
        transport = self._transport
        if self._writer is None and transport is not None and not transport.is_closing():
            if transport.get_write_buffer_size() > RAW_BUFFER_LIMIT:
                self.abort(CLOSE_OVERLOADED)
            else:
                transport.write(encoded or encode_text_frame(frame))
            return
        if self._writer is not None:
            if len(self._pending) >= self._limit:
                self.abort(CLOSE_OVERLOADED)
            else:
                self._pending.append(frame)
            return
        # An eager task runs the send at once; uvicorn's send only suspends when the transport
        # is paused (a slow reader), and only then does this socket get a task of its own.
        task = asyncio.Task(self._write(frame), loop=self._loop, eager_start=True)
        if not task.done():
            self._writer = task

    async def _write(self, frame: str) -> None:
        try:
            await self._send({"type": "websocket.send", "text": frame})
            while self._pending:
                await self._send({"type": "websocket.send", "text": self._pending.popleft()})
        except Exception:  # the client went away; the handler's receive loop sees the disconnect
            self._pending.clear()
            if self.close_code is None:
                self.close_code = 1006
        finally:
            self._writer = None

    def abort(self, code: int) -> None:
        """Stop sending and close the socket with `code`, so the client reconnects."""
        if self.close_code is not None:
            return
        self.close_code = code
        self._held = None
        self._pending.clear()
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None
        user = None if self.viewer is None else self.viewer.user_id
        logger.info("closing live socket of user %s: %s", user, code)
        self._closer = self._loop.create_task(self._close(code))

    async def _close(self, code: int) -> None:
        with contextlib.suppress(Exception):
            await self._send({"type": "websocket.close", "code": code})
