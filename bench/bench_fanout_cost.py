"""What one frame costs the server per socket: Safeground's hub (live/bus.py, the path every layer
ends in: the audience checked per socket, the frame encoded once, written straight to each
transport, in turns of the loop) against the plain `websockets` broadcast, with nothing else in
the process (no Django request, no database, no Redis).

Both serve `--sockets` real loopback TCP connections, read by bench/viewers.py's cheap viewers
in a client process pinned to the last CPU, and send `--frames` frames of `--frame-bytes` at
`--rate` per second; the server's CPU (time.process_time of its process) over the frames, per
delivered frame, and the delay from the send to each viewer's receipt, p50/p99. Audiences: `all`
(every socket admitted), or `zones`: a zone event, the sockets a mix of control-room viewers
(admitted) and stewards of other zones (not sent), as in the surge.

    .venv/bin/python bench/bench_fanout_cost.py --sockets 2000 --frames 300
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \\
        .venv/bin/python bench/bench_fanout_cost.py --only hub --sockets 500 --frames 50

Last line: `fanout cost sockets=N hub_us=X plain_us=Y ratio=R`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import viewers

HELLO = json.dumps({"type": "hello", "fixture": 1, "seq": None, "data": {}})


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0, help="frames per second")
    parser.add_argument("--frame-bytes", type=int, default=1000)
    parser.add_argument("--audience", choices=("all", "zones"), default="all")
    parser.add_argument("--only", choices=("hub", "plain"), default="")
    parser.add_argument(
        "--turn", type=int, default=0, help="the hub's FAN_OUT_TURN (default: as shipped)"
    )
    parser.add_argument("--pause", type=float, default=-1, help="the hub's FAN_OUT_PAUSE, s")
    return parser.parse_args()


def frame_text(i: int, size: int) -> str:
    head = {"type": "log.entry", "fixture": 1, "seq": i + 1, "data": {"text": f"bench-{i}-"}}
    text = json.dumps(head)
    return text[:-2] + "x" * max(0, size - len(text)) + text[-2:]


class _Raw(asyncio.Protocol):
    """A server side of a socket for the hub: answers the upgrade (101) and a hello, then has
    a `send` whose transport the Subscriber writes to, as uvicorn's protocol does."""

    def __init__(self, ready: list[Any]) -> None:
        self.ready = ready
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.buf is None:
            return  # pongs and anything else the viewer sends
        self.buf += data
        if b"\r\n\r\n" in self.buf:
            from safeground.live.subscriber import encode_text_frame

            self.buf = None  # type: ignore[assignment]
            assert self.transport is not None
            self.transport.write(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\n\r\n" + encode_text_frame(HELLO)
            )
            self.ready.append(self)

    async def send(self, message: dict[str, Any]) -> None:  # closes only (Subscriber.abort)
        if self.transport is not None:
            self.transport.close()


async def serve_hub(args: argparse.Namespace, port_out: Any, go: Any) -> None:
    import django

    django.setup()
    from safeground.live import bus
    from safeground.live.bus import Hub

    if args.turn:
        bus.FAN_OUT_TURN = args.turn
    if args.pause >= 0:
        bus.FAN_OUT_PAUSE = args.pause
    from safeground.live.events import EVERYONE, Audience, Viewer
    from safeground.live.subscriber import Subscriber

    loop = asyncio.get_running_loop()
    ready: list[_Raw] = []
    server = await loop.create_server(lambda: _Raw(ready), "127.0.0.1", 0, backlog=4096)
    port_out.send(server.sockets[0].getsockname()[1])
    hub = Hub(redis_url="")
    control = Viewer(
        user_id=1, organisation_ids=frozenset({1}), roles=frozenset({"control"}), home_staff=True
    )
    audience = EVERYONE
    while len(ready) < args.sockets:
        await asyncio.sleep(0.05)
    for index, raw in enumerate(ready):
        viewer = control
        if args.audience == "zones" and index % 2:
            # half the sockets stewards posted elsewhere: the zone event is not theirs
            viewer = Viewer(
                user_id=10 + index,
                organisation_ids=frozenset({1}),
                roles=frozenset({"steward"}),
                home_staff=True,
                zone_ids=frozenset({2}),
            )
        sub = Subscriber(fixture_id=1, viewer=viewer, send=raw.send)
        sub.release(after_seq=0)
        # Joined by hand: Hub.subscribe would open the in-process relay, whose socket is named
        # for the database and could be another server's on a shared machine.
        hub._subscribers.setdefault(1, set()).add(sub)
    hub._loop = loop
    if args.audience == "zones":
        audience = Audience(zone_ids=frozenset({1}))
    frames = [frame_text(i, args.frame_bytes) for i in range(args.frames)]

    def send(i: int) -> None:
        hub.fan_out(1, frames[i], audience, i + 1)

    await drive(args, send, go)


async def serve_plain(args: argparse.Namespace, port_out: Any, go: Any) -> None:
    from websockets.asyncio.server import broadcast, serve

    connected: set[Any] = set()

    async def handler(ws: Any) -> None:
        await ws.send(HELLO)
        connected.add(ws)
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0, compression=None, backlog=4096) as server:
        port_out.send(server.sockets[0].getsockname()[1])
        while len(connected) < args.sockets:
            await asyncio.sleep(0.05)
        frames = [frame_text(i, args.frame_bytes) for i in range(args.frames)]
        # Only the sockets the zone event is for, as the hub's audience leaves half out.
        to = list(connected)
        if args.audience == "zones":
            to = to[::2]

        def send(i: int) -> None:
            broadcast(to, frames[i])

        await drive(args, send, go)


async def drive(args: argparse.Namespace, send: Any, go: Any) -> None:
    """Send the frames on the clock; report (the send times, the CPU seconds over them)."""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, go.recv)  # the viewers are all open
    sent: dict[int, float] = {}
    start = time.monotonic() + 0.1
    cpu = time.process_time()
    for i in range(args.frames):
        delay = start + i / args.rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        sent[i] = time.monotonic()
        send(i)
    await asyncio.sleep(1.0)  # the turns finish
    cpu = time.process_time() - cpu
    go.send((sent, cpu))
    await loop.run_in_executor(None, go.recv)  # done


def server_process(kind: str, args: argparse.Namespace, port_out: Any, go: Any) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "safeground.settings.test")
    import uvloop

    serve = serve_hub if kind == "hub" else serve_plain
    uvloop.run(serve(args, port_out, go))


def measure(kind: str, args: argparse.Namespace) -> dict[str, float]:
    ctx = multiprocessing.get_context("fork")
    port_parent, port_child = ctx.Pipe()
    go_parent, go_child = ctx.Pipe()
    server = ctx.Process(target=server_process, args=(kind, args, port_child, go_child))
    server.start()
    viewers.unpin(server.pid)  # type: ignore[arg-type]
    port = port_parent.recv()
    view_parent, view_child = ctx.Pipe()
    client = ctx.Process(
        target=viewers.client_process,
        args=(
            f"ws://127.0.0.1:{port}/",
            "http://127.0.0.1",
            "",
            args.sockets,
            view_child,
            viewers.client_cpus(),
        ),
    )
    client.start()
    connected = view_parent.recv()
    go_parent.send("go")
    sent, cpu = go_parent.recv()
    view_parent.send("stop")
    ids, times, duplicates, _closed, _len = view_parent.recv()
    go_parent.send("done")
    server.join(timeout=30)
    client.join(timeout=30)
    counted = viewers.count_viewers([(ids, times, duplicates, 0, 0)], sent, sockets=0)
    delays = sorted(counted.delays_s)
    delivered = max(1, len(delays))

    def pct(p: float) -> float:
        return 1000 * delays[min(len(delays) - 1, int(len(delays) * p))] if delays else -1

    print(
        f"  {kind}: sockets {connected}, delivered {len(delays)} frames"
        f" (duplicates {duplicates}), server CPU {1e6 * cpu / delivered:.2f} µs per delivered"
        f" frame, delay p50/p99 {pct(0.5):.1f}/{pct(0.99):.1f} ms;"
        f" load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return {"us": 1e6 * cpu / delivered, "p99": pct(0.99)}


def main() -> None:
    args = parse_args()
    viewers.pin_here(viewers.client_cpus())
    print(
        f"fan-out cost: {args.sockets} sockets, {args.frames} frames of {args.frame_bytes} B at"
        f" {args.rate:g}/s, audience {args.audience}; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    kinds = [args.only] if args.only else ["plain", "hub"]
    results = {kind: measure(kind, args) for kind in kinds}
    if len(results) == 2:
        print(
            f"fanout cost sockets={args.sockets} hub_us={results['hub']['us']:.2f}"
            f" plain_us={results['plain']['us']:.2f}"
            f" ratio={results['hub']['us'] / max(results['plain']['us'], 1e-9):.2f}"
        )


if __name__ == "__main__":
    main()
