"""An impairing TCP proxy: a ground's network between its clients and the server (issue 40).

The kernel here has no netem and there is no toxiproxy binary, and PyPI's `toxic-proxy` has had
one release (2023), too little upkeep to carry our figures and a new dependency besides; this is
the small asyncio proxy we need instead (ADR 0023).
Every connection accepted on a listening port is joined to the upstream port, and each direction
is impaired on its own:

- latency: half the round trip each way, plus or minus half the jitter, never reordering bytes;
- a bandwidth cap per connection (each phone has its own share of the cell), in 1,460-byte
  pieces so that the cap holds at a packet's grain;
- stalls: no bytes in either direction from the stall's start to its end, then everything held
  at once (a cell that goes quiet; a long one is a blackout). New connections are accepted but
  nothing passes;
- resets: every open connection reset (RST) on both sides at once (the Wi-Fi dropping);
- half-open: connections that are accepted and then never answer, and are never closed.

Stalls and resets follow the profile's clock (from `start`), the same for every connection and
every listening port of one proxy, as one network's would; `stall()`, `reset_all()` and
`half_open()` do them on demand (tests). Run it in a thread of its own (`ImpairingProxy.start`),
or as a process of its own so that a load on the same box never slows it:

    .venv/bin/python bench/impair.py --profile crowded-4g --pair 18700:18600 --pair 18701:18601
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import random
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass

PIECE = 1460  # bytes in a TCP segment on Ethernet: the grain of the bandwidth cap


@dataclass(frozen=True)
class Profile:
    """A network, as the clients see it. Times in seconds from the proxy's start."""

    name: str
    rtt_ms: float = 0.0
    jitter_ms: float = 0.0  # the round trip varies by up to this either way
    kbit_s: float | None = None  # per connection, each direction; None: no cap
    stall_first_s: float | None = None  # the first stall's start; None: no stalls
    stall_s: float = 0.0
    stall_every_s: float | None = None  # None: one stall only
    reset_every_s: float | None = None  # every open connection reset, first at this time

    def stall_end(self, t: float) -> float | None:
        """If `t` falls in a stall, the time that stall ends."""
        if self.stall_first_s is None or t < self.stall_first_s:
            return None
        since = t - self.stall_first_s
        if self.stall_every_s is not None:
            since %= self.stall_every_s
        return t - since + self.stall_s if since < self.stall_s else None

    def one_way_s(self) -> float:
        jitter = (random.random() * 2 - 1) * self.jitter_ms
        return max(0.0, self.rtt_ms + jitter) / 2000


# The grounds' networks (issue 40). `blackout` is a stall of 60 s that starts 10 s in.
PROFILES = {
    profile.name: profile
    for profile in (
        Profile("loopback"),
        Profile("ground-wifi", rtt_ms=80, jitter_ms=40, kbit_s=2000),
        Profile(
            "crowded-4g",
            rtt_ms=300,
            jitter_ms=150,
            kbit_s=256,
            stall_first_s=30,
            stall_s=5,
            stall_every_s=30,
        ),
        Profile("dropping", reset_every_s=20),
        Profile("blackout", stall_first_s=10, stall_s=60),
    )
}


class _Pair:
    """One client's connection and its upstream connection."""

    def __init__(self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter | None):
        self.client = client
        self.upstream = upstream
        self.silenced = upstream is None  # half-open: nothing passes, nothing closes

    def reset(self) -> None:
        for writer in (self.client, self.upstream):
            if writer is None:
                continue
            sock = writer.get_extra_info("socket")
            with contextlib.suppress(OSError, AttributeError):  # linger 0: close sends RST
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()


class ImpairingProxy:
    def __init__(
        self,
        profile: Profile | str,
        pairs: list[tuple[int, int]],
        *,
        host: str = "127.0.0.1",
        upstream_host: str = "127.0.0.1",
    ) -> None:
        """`pairs`: (listening port, upstream port); a listening port of 0 takes a free one."""
        self.profile = PROFILES[profile] if isinstance(profile, str) else profile
        self.wanted = pairs
        self.host = host
        self.upstream_host = upstream_host
        self.ports: list[int] = []  # the listening ports, in the order of `pairs`
        self.t0 = time.monotonic()
        self.resets = 0
        self._open: set[_Pair] = set()
        self._servers: list[asyncio.Server] = []
        self._stalled_until = 0.0  # a stall asked for by stall(), on the monotonic clock
        self._half_open = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # --- on the proxy's own loop ---------------------------------------------------------------

    async def serve(self) -> None:
        """Listen on every port; resets on the profile's schedule until cancelled."""
        self._loop = asyncio.get_running_loop()
        self.t0 = time.monotonic()
        for listen, upstream in self.wanted:
            server = await asyncio.start_server(
                lambda r, w, up=upstream: self._accept(r, w, up),
                self.host,
                listen,
                reuse_address=True,
            )
            self._servers.append(server)
            self.ports.append(server.sockets[0].getsockname()[1])
        every = self.profile.reset_every_s
        try:
            if every is None:
                await asyncio.Event().wait()  # until cancelled
            while every is not None:
                next_reset = self.t0 + every * (1 + int((time.monotonic() - self.t0) / every))
                await asyncio.sleep(max(0.0, next_reset - time.monotonic()))
                self._reset_all()
        finally:
            for server in self._servers:
                server.close()
            for pair in list(self._open):
                pair.reset()

    def _stall_end(self) -> float | None:
        """The monotonic time the stall now under way ends, if one is."""
        now = time.monotonic()
        ends = [self._stalled_until] if self._stalled_until > now else []
        scheduled = self.profile.stall_end(now - self.t0)
        if scheduled is not None:
            ends.append(self.t0 + scheduled)
        return max(ends) if ends else None

    def _reset_all(self) -> None:
        self.resets += 1
        for pair in list(self._open):
            pair.reset()
        self._open.clear()

    async def _accept(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, upstream_port: int
    ) -> None:
        if self._half_open:
            pair = _Pair(writer, None)
            self._open.add(pair)
            with contextlib.suppress(Exception):
                while await reader.read(65536):
                    pass  # swallowed: never forwarded, never answered
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.upstream_host, upstream_port)
        except OSError:
            _Pair(writer, None).reset()  # nothing listens upstream: the client is refused
            return
        pair = _Pair(writer, up_writer)
        self._open.add(pair)
        try:
            await asyncio.gather(
                self._direction(pair, reader, up_writer),
                self._direction(pair, up_reader, writer),
            )
        finally:
            self._open.discard(pair)
            if not pair.silenced:
                writer.close()
                up_writer.close()

    async def _direction(
        self, pair: _Pair, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Read as fast as the sender sends, give each piece the time it reaches the other
        end (the link's serialisation and latency), write it then, or after a stall."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        profile = self.profile

        async def read() -> None:
            link_free = last_due = 0.0
            with contextlib.suppress(Exception):
                while data := await reader.read(65536):
                    for at in range(0, len(data), PIECE):
                        piece = data[at : at + PIECE]
                        now = time.monotonic()
                        sent = now
                        if profile.kbit_s:
                            link_free = max(now, link_free) + len(piece) * 8 / (
                                profile.kbit_s * 1000
                            )
                            sent = link_free
                        last_due = max(last_due, sent + profile.one_way_s())  # never reordered
                        queue.put_nowait((last_due, piece))
            queue.put_nowait((max(last_due, time.monotonic() + profile.one_way_s()), b""))

        async def write() -> None:
            with contextlib.suppress(Exception):
                while True:
                    due, piece = await queue.get()
                    while (wait := due - time.monotonic()) > 0:
                        await asyncio.sleep(wait)
                    while (end := self._stall_end()) is not None:
                        await asyncio.sleep(end - time.monotonic())
                    if pair.silenced:
                        continue
                    if not piece:  # the sender closed its side: close ours after its bytes
                        if writer.can_write_eof():
                            writer.write_eof()
                        return
                    writer.write(piece)
                    await writer.drain()

        reading = asyncio.ensure_future(read())
        try:
            await write()
        finally:
            reading.cancel()

    # --- from any thread -------------------------------------------------------------------

    def start(self) -> ImpairingProxy:
        """Serve in a thread of its own; returns once every port listens."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            task = loop.create_task(self.serve())
            self._tasks.add(task)

            def listening() -> None:
                if len(self.ports) == len(self.wanted) or task.done():
                    ready.set()
                else:
                    loop.call_later(0.01, listening)

            loop.call_soon(listening)
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(task)
            left = asyncio.all_tasks(loop)  # the silent connections' pumps, waiting for ever
            for pending in left:
                pending.cancel()
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=run, name="impairing-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10) or len(self.ports) != len(self.wanted):
            raise RuntimeError("the impairing proxy did not start listening")
        return self

    def _call(self, function: object, *args: object) -> None:
        assert self._loop is not None, "the proxy is not serving"
        done = threading.Event()

        def run() -> None:
            try:
                function(*args)  # type: ignore[operator]
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(5)

    def stall(self, seconds: float) -> None:
        """No bytes either way for `seconds` from now, then everything held."""
        self._call(self._stall_now, seconds)

    def _stall_now(self, seconds: float) -> None:
        self._stalled_until = max(self._stalled_until, time.monotonic() + seconds)

    def reset_all(self) -> None:
        """Reset every open connection, both sides."""
        self._call(self._reset_all)

    def half_open(self, on: bool = True) -> None:
        """With `on`, every open connection and every new one goes silent and stays open; off,
        new connections pass again (the silent ones stay silent: they never answer)."""
        self._call(self._half_open_now, on)

    def _half_open_now(self, on: bool) -> None:
        self._half_open = on
        if on:
            for pair in self._open:
                pair.silenced = True

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            for task in self._tasks:
                self._loop.call_soon_threadsafe(task.cancel)
            self._thread.join(10)

    def __enter__(self) -> ImpairingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), required=True)
    parser.add_argument(
        "--pair", action="append", required=True, help="LISTEN:UPSTREAM ports (repeatable)"
    )
    parser.add_argument("--upstream-host", default="127.0.0.1")
    parser.add_argument(
        "--stall-first", type=float, help="override the profile's first stall (seconds from start)"
    )
    args = parser.parse_args()
    profile = PROFILES[args.profile]
    if args.stall_first is not None:
        profile = dataclasses.replace(profile, stall_first_s=args.stall_first)
    pairs = [tuple(int(port) for port in pair.split(":", 1)) for pair in args.pair]
    proxy = ImpairingProxy(profile, pairs, upstream_host=args.upstream_host)  # type: ignore[arg-type]

    async def run() -> None:
        serving = asyncio.ensure_future(proxy.serve())
        while len(proxy.ports) < len(pairs) and not serving.done():
            await asyncio.sleep(0.01)
        print("listening", *proxy.ports, flush=True)
        await serving

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main())
