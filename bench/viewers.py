"""Cheap viewers for the fan-out benches: many WebSocket sockets in one asyncio process, each a
raw `asyncio.Protocol` that reads the server's frames and finds a report's mark with a bytes
search, never decoding the frame's JSON or text.

Why: with the `websockets` client (a task, a frame parser and a str decode per frame per socket)
2,000 viewers beside 2,000 on the reference took 87% of a core (issue 39 item 2), so the bench
measured its own clients as much as the server. Here a frame costs a header check and one
`bytes.find`; pings are answered so uvicorn keeps the sockets open.

The clients can be pinned to some CPUs (`os.sched_setaffinity`), so that the server has the
other core to itself; `machine_cpu` and `cpu_seconds` let a bench say whether it did.

What decides lost and doubled is `Tally` (per socket: a mark seen once, or a duplicate) and
`count_viewers` (marks expected against marks got); tests/test_bench_viewers.py checks both.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import resource
import time
import urllib.parse
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

MARK = b"bench-"  # a report's text carries "bench-<i>-" (bench_live.MARK)
OPEN_AT_ONCE = 50  # handshakes in flight per process
HANDSHAKE_TIMEOUT_S = 60.0


# --- what decides lost and doubled ------------------------------------------------------------


def mark_in(data: bytes | bytearray, start: int, end: int) -> int | None:
    """The number i of the first "bench-<i>-" within data[start:end], or None."""
    at = data.find(MARK, start, end)
    if at < 0:
        return None
    at += len(MARK)
    stop = at
    while stop < end and 48 <= data[stop] <= 57:
        stop += 1
    if stop == at or stop >= end or data[stop] != 45:  # digits, then "-"
        return None
    return int(data[at:stop])


@dataclass
class Tally:
    """Marks received by a process's sockets: each mark's first receipt per socket (id, time),
    and the repeats a socket got (a frame shown twice)."""

    ids: array[int] = field(default_factory=lambda: array("q"))
    times: array[float] = field(default_factory=lambda: array("d"))
    duplicates: int = 0
    closed: int = 0  # sockets closed by the server or the network before the stop
    frame_len: int = 0  # the largest marked frame's payload (the frame size the peer is sent)

    def got(self, seen: set[int], i: int, at: float) -> None:
        if i in seen:
            self.duplicates += 1
            return
        seen.add(i)
        self.ids.append(i)
        self.times.append(at)

    def result(self) -> tuple[array[int], array[float], int, int, int]:
        return self.ids, self.times, self.duplicates, self.closed, self.frame_len


@dataclass
class Counted:
    delays_s: list[float]
    missed: int  # (socket, mark) pairs expected and never received
    twice: int


def count_viewers(
    results: Iterable[tuple[Iterable[int], Iterable[float], int, int, int]],
    sent: dict[int, float],
    sockets: int,
    expected: Iterable[int] | None = None,
) -> Counted:
    """Delays from each mark's send time to its receipt, over every socket of `results`; a mark
    in `expected` (default: every mark sent) that fewer than `sockets` sockets got counts as
    missed once per missing socket. Receipts of marks not sent (another run's) are ignored."""
    delays: list[float] = []
    got: dict[int, int] = {}
    twice = 0
    for ids, times, duplicates, _closed, _len in results:
        twice += duplicates
        for i, at in zip(ids, times, strict=True):
            start = sent.get(i)
            if start is not None:
                delays.append(at - start)
                got[i] = got.get(i, 0) + 1
    wanted = set(sent) if expected is None else set(expected)
    missed = sum(max(0, sockets - got.get(i, 0)) for i in wanted)
    return Counted(delays, missed, twice)


# --- the viewers -----------------------------------------------------------------------------


class Viewer(asyncio.Protocol):
    """One socket: an HTTP upgrade, then server frames (unmasked) parsed header by header."""

    __slots__ = ("buf", "opened", "request", "seen", "stopping", "tally", "transport", "upgraded")

    def __init__(self, tally: Tally, request: bytes, opened: asyncio.Future[bool]) -> None:
        self.tally = tally
        self.request = request
        self.opened = opened  # True once the server's first frame (its hello) arrived
        self.buf = bytearray()
        self.seen: set[int] = set()
        self.upgraded = False
        self.stopping = False
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        at = time.monotonic()
        buf = self.buf
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buf.startswith(b"HTTP/1.1 101"):
                self._fail()
                return
            self.upgraded = True
            del buf[: end + 4]
        start = 0
        size = len(buf)
        while size - start >= 2:
            opcode = buf[start] & 0x0F
            length = buf[start + 1] & 0x7F
            head = 2
            if length == 126:
                head = 4
                if size - start < head:
                    break
                length = int.from_bytes(buf[start + 2 : start + 4], "big")
            elif length == 127:
                head = 10
                if size - start < head:
                    break
                length = int.from_bytes(buf[start + 2 : start + 10], "big")
            end = start + head + length
            if end > size:
                break
            if opcode == 1:  # text
                if not self.opened.done():
                    self.opened.set_result(True)  # the hello: subscribed
                else:
                    i = mark_in(buf, start + head, end)
                    if i is not None:
                        if length > self.tally.frame_len:
                            self.tally.frame_len = length
                        self.tally.got(self.seen, i, at)
            elif opcode == 9:  # ping: a masked pong with the same payload (a zero mask)
                payload = bytes(buf[start + head : end])
                assert self.transport is not None
                self.transport.write(bytes((0x8A, 0x80 | len(payload))) + b"\0\0\0\0" + payload)
            elif opcode == 8:  # close
                self._fail()
                return
            start = end
        if start:
            del buf[:start]

    def _fail(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_result(False)
        elif not self.stopping:
            self.tally.closed += 1


def upgrade_request(url: str, origin: str, cookie: str) -> tuple[str, int, bytes]:
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {parts.path or '/'}{'?' + parts.query if parts.query else ''} HTTP/1.1",
        f"Host: {host}:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        f"Origin: {origin}",
    ]
    if cookie:
        lines.append(f"Cookie: {cookie}")
    return host, port, ("\r\n".join(lines) + "\r\n\r\n").encode()


async def open_viewers(
    url: str, origin: str, cookie: str, count: int, tally: Tally
) -> list[Viewer]:
    """`count` sockets, each subscribed (its hello received); retried up to 5 times each."""
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(OPEN_AT_ONCE)

    async def one() -> Viewer | None:
        async with gate:
            for _attempt in range(5):
                host, port, request = upgrade_request(url, origin, cookie)
                opened: asyncio.Future[bool] = loop.create_future()
                viewer = Viewer(tally, request, opened)
                try:
                    await loop.create_connection(lambda v=viewer: v, host, port)  # type: ignore[misc]
                    if await asyncio.wait_for(opened, HANDSHAKE_TIMEOUT_S):
                        return viewer
                except (OSError, TimeoutError):
                    pass
                if viewer.transport is not None:
                    viewer.transport.abort()
                await asyncio.sleep(0.5)
            return None

    return [v for v in await asyncio.gather(*(one() for _ in range(count))) if v is not None]


def client_process(
    url: str,
    origin: str,
    cookie: str,
    count: int,
    pipe: Connection,
    cpus: set[int] | None = None,
) -> None:
    """`count` viewers on `url` (pinned to `cpus` if given); sends the number connected, waits
    for "stop", then sends Tally.result()."""
    if cpus:
        os.sched_setaffinity(0, cpus)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65_536 if hard == resource.RLIM_INFINITY else hard
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    try:
        import uvloop

        uvloop.run(_viewers(url, origin, cookie, count, pipe))
    except ImportError:  # pragma: no cover
        asyncio.run(_viewers(url, origin, cookie, count, pipe))


async def _viewers(url: str, origin: str, cookie: str, count: int, pipe: Connection) -> None:
    tally = Tally()
    viewers = await open_viewers(url, origin, cookie, count, tally)
    pipe.send(len(viewers))
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # "stop"
    closed_before_stop = tally.closed
    for viewer in viewers:
        viewer.stopping = True
        if viewer.transport is not None:
            viewer.transport.abort()
    tally.closed = closed_before_stop
    pipe.send(tally.result())


# --- whether the server had a core to itself --------------------------------------------------


def client_cpus() -> set[int] | None:
    """The CPUs the load generator is pinned to: the last one, leaving the others to the
    server; None (not pinned) on a one-CPU machine."""
    available = sorted(range(os.cpu_count() or 1))
    return {available[-1]} if len(available) >= 2 else None


def pin_here(cpus: set[int] | None) -> None:
    """Pin the calling thread (and the threads and processes it starts afterwards)."""
    if cpus:
        os.sched_setaffinity(0, cpus)


def unpin(pid: int) -> None:
    """A server started from a pinned thread gets every CPU back (before it starts workers)."""
    with contextlib.suppress(OSError):
        os.sched_setaffinity(pid, set(range(os.cpu_count() or 1)))


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(fields[:8]) - idle) / tick, sum(fields[:8]) / tick


def cpu_seconds(*pids: int, descendants: bool = True) -> float:
    """CPU seconds of these processes (and all their descendants), from /proc."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
    family = set(pids)
    grew = descendants
    while grew:
        found = {p for p, fields in stats.items() if int(fields[1]) in family}
        grew = not found <= family
        family |= found
    ticks = sum(int(stats[p][11]) + int(stats[p][12]) for p in family if p in stats)
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass
class CpuShare:
    """CPU over a measured span, in cores: the server's, the load generator's, the rest of the
    machine's (other people's work), and whether the server had a core to itself (everything
    else took at most one of the machine's cores, the load average before at most 1.5)."""

    seconds: float
    server: float
    load_generator: float
    others: float
    cores: int
    load_before: float

    @property
    def server_had_a_core(self) -> bool:
        return self.cores >= 2 and self.load_generator + self.others <= 1.0

    def line(self) -> str:
        verdict = (
            "the server had a core to itself"
            if self.server_had_a_core
            else "the server did NOT have a core to itself: no verdict"
        )
        return (
            f"  CPU over {self.seconds:.0f} s, in cores of {self.cores}: server {self.server:.2f},"
            f" load generator {self.load_generator:.2f}, everything else {self.others:.2f};"
            f" load average before {self.load_before:.1f}, now {os.getloadavg()[0]:.1f}: {verdict}"
        )


class CpuMeter:
    """Measures a span: start(), then stop() gives the CpuShare."""

    def __init__(self, server_pids: list[int], generator_pids: list[int]) -> None:
        """Servers with their descendants (uvicorn's workers); the generator's processes
        without theirs (the bench's main process starts the servers)."""
        self.server_pids = server_pids
        self.generator_pids = generator_pids
        self.server_gone = 0.0  # CPU of a server process killed during the span

    def start(self) -> None:
        self.load_before = os.getloadavg()[0]
        self.wall = time.monotonic()
        self.machine = machine_cpu()[0]
        self.server = cpu_seconds(*self.server_pids)
        self.generator = cpu_seconds(*self.generator_pids, descendants=False)

    def server_killed(self, pid: int) -> None:
        """Just before a server process is killed: its CPU so far is kept."""
        self.server_gone += cpu_seconds(pid)
        self.server_pids = [p for p in self.server_pids if p != pid]

    def server_started(self, pid: int) -> None:
        self.server_pids.append(pid)

    def stop(self) -> CpuShare:
        seconds = max(1e-6, time.monotonic() - self.wall)
        server = cpu_seconds(*self.server_pids) + self.server_gone - self.server
        generator = cpu_seconds(*self.generator_pids, descendants=False) - self.generator
        machine = machine_cpu()[0] - self.machine
        return CpuShare(
            seconds=seconds,
            server=server / seconds,
            load_generator=generator / seconds,
            others=max(0.0, machine - server - generator) / seconds,
            cores=os.cpu_count() or 1,
            load_before=self.load_before,
        )
