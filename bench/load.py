"""Load generator for the entry benchmark: scans POSTed to an endpoint, each with a fresh barcode.

Runs in its own process, apart from the server it measures. Two measurements:

- `max`: closed loop. C connections send requests back to back for S seconds; reports requests/s,
  p50/p99 and errors. Engine `wrk` (Debian's wrk with a generated Lua script) when wrk is installed,
  else `python` (the asyncio client below).
- `rate`: open loop. Requests are scheduled by the clock at R/s for S seconds, whatever the server
  answers; the latency of each is measured from its scheduled time, so queueing counts (no
  coordinated omission). A request waits for a free connection from a pool of C when all are busy.
  Requests still unanswered `--grace` seconds after the last was due count as unfinished, and as
  slower than any answered one in the percentiles.

Every request takes the next barcode from `--barcodes` (one a line; each used at most once, the run
stops early if they run out). `--body` is the JSON body with `{barcode}`, `{nonce}` (a fresh UUID)
and `{now}` (ISO 8601 UTC) replaced; a response counts as a success when its JSON has `--ok`
(KEY=VALUE, e.g. `decision=admit` or `status=ok`), else as refused. Traffic goes to 127.0.0.1 only.

    python bench/load.py max  --url http://127.0.0.1:8000/api/entry/scan --barcodes codes.txt \\
        --body '{"barcode": "{barcode}", "nonce": "{nonce}"}' -H 'X-Device-Key: K' \\
        --ok decision=admit
    python bench/load.py rate --rate 500 ...
    python bench/load.py ceiling      # the generator against a trivial server on this machine

Prints a human line on stderr and one JSON object (the result) as the last line on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

MAX_SECONDS = 600  # every loop here is bounded: no run is longer than this
CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 30.0
CEILING_RATE = 4000.0  # the open-loop engine must keep time at this rate


@dataclass
class Result:
    mode: str
    engine: str
    seconds: float
    sent: int = 0
    ok: int = 0
    refused: int = 0
    refused_reasons: dict[str, int] = field(default_factory=dict)
    http_errors: dict[str, int] = field(default_factory=dict)
    socket_errors: int = 0
    unfinished: int = 0
    rps: float = 0.0  # answered requests per second
    ok_per_s: float = 0.0
    p50_ms: float = math.nan
    p99_ms: float = math.nan
    max_ms: float = math.nan
    offered_rps: float = 0.0
    client_cpu_s: float = 0.0
    barcodes_used: int = 0

    @property
    def errors(self) -> int:
        return sum(self.http_errors.values()) + self.socket_errors + self.unfinished

    def line(self) -> str:
        rate = f" offered={self.offered_rps:.0f}/s" if self.offered_rps else ""
        http = ",".join(f"{k}:{v}" for k, v in sorted(self.http_errors.items())) or "0"
        return (
            f"{self.mode}{rate} engine={self.engine} {self.seconds:.1f}s: {self.rps:.0f} req/s "
            f"(ok {self.ok_per_s:.0f}/s) p50={fmt_ms(self.p50_ms)} p99={fmt_ms(self.p99_ms)} "
            f"max={fmt_ms(self.max_ms)} ok={self.ok} refused={self.refused} http_errors={http} "
            f"socket_errors={self.socket_errors} unfinished={self.unfinished} "
            f"client_cpu={self.client_cpu_s:.1f}s"
        )


def fmt_ms(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.1f}ms"


def percentile(sorted_values: list[float], pct: float) -> float:
    if not sorted_values:
        return math.nan
    index = min(len(sorted_values) - 1, max(0, math.ceil(pct / 100 * len(sorted_values)) - 1))
    return sorted_values[index]


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# --- the request ------------------------------------------------------------------------------


@dataclass
class Target:
    host: str
    port: int
    path: str
    headers: list[tuple[str, str]]
    body: str
    ok_key: str
    ok_value: str

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Target:
        url = urllib.parse.urlsplit(args.url)
        host = url.hostname or ""
        if url.scheme != "http" or (not host.startswith("127.") and host != "localhost"):
            sys.exit(f"--url must be http:// on the loopback (127.0.0.0/8), not {args.url}")
        headers = []
        for header in args.header:
            name, _, value = header.partition(":")
            headers.append((name.strip(), value.strip()))
        ok_key, _, ok_value = args.ok.partition("=")
        return cls(host, url.port or 80, url.path or "/", headers, args.body, ok_key, ok_value)

    def request(self, barcode: str) -> bytes:
        body = (
            self.body.replace("{barcode}", barcode)
            .replace("{nonce}", str(uuid.uuid4()))
            .replace("{now}", datetime.now(UTC).isoformat(timespec="milliseconds"))
        ).encode()
        head = [
            f"POST {self.path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Content-Type: application/json",
            "Accept: application/json",
            f"Content-Length: {len(body)}",
        ]
        head.extend(f"{name}: {value}" for name, value in self.headers)
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body

    def outcome(self, body: bytes) -> str:
        """ "ok", or the refusal's reason (its JSON `reason`, else "other")."""
        try:
            data = json.loads(body)
        except ValueError:
            return "not-json"
        if not isinstance(data, dict):
            return "other"
        if str(data.get(self.ok_key)) == self.ok_value:
            return "ok"
        return str(data.get("reason") or "other")[:40]


def read_barcodes(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


# --- a small HTTP/1.1 keep-alive client ------------------------------------------------------


class Connection:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def exchange(self, payload: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.wait_for(
                asyncio.open_connection(self.target.host, self.target.port), CONNECT_TIMEOUT_S
            )
            sock = self.writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        assert self.reader is not None
        self.writer.write(payload)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length, chunked, close = 0, False, False
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
            elif name == "connection" and value.strip().lower() == "close":
                close = True
        if chunked:
            body = b""
            for _ in range(100_000):
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
        else:
            body = await self.reader.readexactly(length) if length else b""
        if close:
            self.close()
        return status, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Tally:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.latencies: list[float] = []
        self.ok = self.refused = self.socket_errors = 0
        self.http_errors: dict[str, int] = {}
        self.reasons: dict[str, int] = {}

    async def one(self, connection: Connection, barcode: str, since: float) -> None:
        try:
            status, body = await asyncio.wait_for(
                connection.exchange(self.target.request(barcode)), REQUEST_TIMEOUT_S
            )
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
            connection.close()
            self.socket_errors += 1
            return
        self.latencies.append(time.perf_counter() - since)
        if status >= 500 or status in (401, 403, 404, 405, 429):
            self.http_errors[str(status)] = self.http_errors.get(str(status), 0) + 1
        elif (outcome := self.target.outcome(body)) == "ok":
            self.ok += 1
        else:
            self.refused += 1
            self.reasons[outcome] = self.reasons.get(outcome, 0) + 1

    def result(self, mode: str, seconds: float, sent: int, unfinished: int = 0) -> Result:
        answered = sorted(self.latencies)
        ranked = answered + [math.inf] * unfinished
        return Result(
            mode=mode,
            engine="python",
            seconds=seconds,
            sent=sent,
            ok=self.ok,
            refused=self.refused,
            refused_reasons=self.reasons,
            http_errors=self.http_errors,
            socket_errors=self.socket_errors,
            unfinished=unfinished,
            rps=len(answered) / seconds if seconds else 0.0,
            ok_per_s=self.ok / seconds if seconds else 0.0,
            p50_ms=1000 * percentile(ranked, 50),
            p99_ms=1000 * percentile(ranked, 99),
            max_ms=1000 * (ranked[-1] if ranked else math.nan),
            barcodes_used=sent,
        )


async def closed_loop(target: Target, barcodes: list[str], connections: int, seconds: float):
    tally = Tally(target)
    codes = iter(barcodes)
    sent = 0
    start = time.perf_counter()
    deadline = start + seconds

    async def worker() -> None:
        nonlocal sent
        connection = Connection(target)
        while time.perf_counter() < deadline:
            barcode = next(codes, None)
            if barcode is None:
                break
            sent += 1
            await tally.one(connection, barcode, time.perf_counter())
        connection.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    elapsed = time.perf_counter() - start
    if sent >= len(barcodes):
        print(f"load: barcodes ran out after {sent}", file=sys.stderr)
    return tally.result("max", elapsed, sent)


async def open_loop(
    target: Target, barcodes: list[str], connections: int, seconds: float, rate: float, grace: float
):
    tally = Tally(target)
    total = min(len(barcodes), int(rate * seconds))
    if total < int(rate * seconds):
        print(f"load: only {total} barcodes for {rate * seconds:.0f} requests", file=sys.stderr)
    due: asyncio.Queue[tuple[int, float]] = asyncio.Queue()
    sent = 0
    start = time.perf_counter()

    async def scheduler() -> None:
        for index in range(total):
            at = start + index / rate
            delay = at - time.perf_counter()
            if delay > 0.0005:
                await asyncio.sleep(delay)
            due.put_nowait((index, at))

    async def worker() -> None:
        nonlocal sent
        connection = Connection(target)
        try:
            while True:
                index, at = await due.get()
                sent += 1
                await tally.one(connection, barcodes[index], at)
        finally:
            connection.close()

    workers = [asyncio.create_task(worker()) for _ in range(connections)]
    await scheduler()
    end_of_schedule = time.perf_counter()
    stop = end_of_schedule + grace
    while time.perf_counter() < stop:
        answered = len(tally.latencies) + tally.socket_errors
        if answered >= total:
            break
        await asyncio.sleep(0.01)
    for task in workers:
        task.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    answered = len(tally.latencies) + tally.socket_errors
    result = tally.result("rate", end_of_schedule - start, total, unfinished=total - answered)
    result.offered_rps = rate
    return result


# --- wrk --------------------------------------------------------------------------------------

WRK_SCRIPT = r"""
-- generated by bench/load.py: a fresh barcode per request, split between wrk's threads
local threads = {}
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local codes = {}
local nextcode = 1
ok = 0
refused = 0
used = 0
span = 0

function init(args)
  -- Each thread its own seed: seeded alike (os.time() at the same second), wrk's threads would
  -- send the same nonces, and a scan sent again under a used nonce is a replay, not a scan.
  math.randomseed(SEED + tid * 7919)
  local all = {}
  for line in io.lines(BARCODES) do
    if #line > 0 then table.insert(all, line) end
  end
  for i = tid + 1, #all, NTHREADS do table.insert(codes, all[i]) end
end

local function uuid4()
  return string.format("%08x-%04x-4%03x-%04x-%012x", math.random(0, 0xffffffff),
    math.random(0, 0xffff), math.random(0, 0xfff), math.random(0x8000, 0xbfff),
    math.random(0, 0xffffffff) * 0x10000 + math.random(0, 0xffff))
end

function request()
  local code = codes[nextcode]
  if code == nil then code = "exhausted-" .. tid .. "-" .. nextcode end
  -- the highest line of the file this thread has taken: the caller skips past it afterwards
  span = tid + 1 + (nextcode - 1) * NTHREADS
  nextcode = nextcode + 1
  used = used + 1
  local body = BODY:gsub("{barcode}", code):gsub("{nonce}", uuid4())
    :gsub("{now}", os.date("!%Y-%m-%dT%H:%M:%SZ"))
  return wrk.format("POST", PATH, HEADERS, body)
end

function response(status, headers, body)
  if status < 300 and body ~= nil and string.find(body, OKPATTERN) then
    ok = ok + 1
  elseif status < 500 and status ~= 401 and status ~= 403 and status ~= 404 then
    refused = refused + 1
  end
end

function done(summary, latency, requests)
  local tok, tref, tused, tspan = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    tok = tok + t:get("ok")
    tref = tref + t:get("refused")
    tused = tused + t:get("used")
    tspan = math.max(tspan, t:get("span"))
  end
  io.write(string.format(
    'WRKRESULT {"requests": %d, "duration_us": %d, "connect": %d, "read": %d, "write": %d,' ..
    ' "status": %d, "timeout": %d, "ok": %d, "refused": %d, "used": %d, "p50_us": %d,' ..
    ' "p99_us": %d, "max_us": %d, "span": %d}\n',
    summary.requests, summary.duration, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.status, summary.errors.timeout, tok, tref, tused,
    latency:percentile(50), latency:percentile(99), latency.max, tspan))
end
"""


def lua_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def lua_pattern(text: str) -> str:
    return re.sub(r"([().%+\-*?\[\]^$])", r"%\1", text)


def wrk_closed_loop(
    target: Target, barcodes_file: Path, connections: int, seconds: float, threads: int
) -> Result:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    headers.update(dict(target.headers))
    ok_pattern = f'"{lua_pattern(target.ok_key)}"%s*:%s*"?{lua_pattern(target.ok_value)}"?'
    prelude = "\n".join(
        [
            f"BARCODES = {lua_string(str(barcodes_file))}",
            f"NTHREADS = {threads}",
            f"SEED = {secrets.randbelow(2**31)}",
            f"PATH = {lua_string(target.path)}",
            f"BODY = {lua_string(target.body)}",
            f"OKPATTERN = {lua_string(ok_pattern)}",
            "HEADERS = {"
            + ", ".join(f"[{lua_string(k)}] = {lua_string(v)}" for k, v in headers.items())
            + "}",
        ]
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(prelude + WRK_SCRIPT)
    try:
        command = [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            f"{REQUEST_TIMEOUT_S:.0f}s",
            "-s",
            script.name,
            f"http://{target.host}:{target.port}{target.path}",
        ]
        before = cpu_seconds()
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=seconds + 60, check=False
        )
        cpu = cpu_seconds() - before
    finally:
        os.unlink(script.name)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("WRKRESULT ")), None)
    if line is None:
        sys.exit(f"wrk failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-2000:]}")
    data = json.loads(line.removeprefix("WRKRESULT "))
    elapsed = data["duration_us"] / 1e6
    answered = data["requests"]
    status_errors = answered - data["ok"] - data["refused"]
    socket_errors = data["connect"] + data["read"] + data["write"] + data["timeout"]
    if data["span"] > sum(1 for _ in barcodes_file.open()):
        print("load: barcodes ran out (later requests were refused)", file=sys.stderr)
    return Result(
        mode="max",
        engine="wrk",
        seconds=elapsed,
        sent=data["used"],
        ok=data["ok"],
        refused=data["refused"],
        http_errors={"status": status_errors} if status_errors else {},
        socket_errors=socket_errors,
        rps=answered / elapsed,
        ok_per_s=data["ok"] / elapsed,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        max_ms=data["max_us"] / 1000,
        client_cpu_s=cpu,
        barcodes_used=data["span"],  # wrk's threads take alternate lines: skip past all taken
    )


# --- the generator's own ceiling ----------------------------------------------------------------

TRIVIAL_BODY = b'{"decision": "admit", "reason": null, "message": "Welcome"}'
TRIVIAL_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(TRIVIAL_BODY)).encode()
    + b"\r\n\r\n"
    + TRIVIAL_BODY
)


class TrivialProtocol(asyncio.Protocol):
    """Answers every HTTP/1.1 request (headers + Content-Length body) with a fixed JSON body."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        replies = 0
        for _ in range(10_000):
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            head = self.buffer[:end].lower()
            at = head.find(b"content-length:")
            length = int(head[at + 15 :].split(b"\r\n", 1)[0]) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                break
            self.buffer = self.buffer[end + 4 + length :]
            replies += 1
        if replies:
            self.transport.write(TRIVIAL_RESPONSE * replies)  # type: ignore[attr-defined]


def serve_trivial(port: int, lifetime: float) -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            TrivialProtocol, "127.0.0.1", port, reuse_port=True, backlog=1024
        )
        async with server:
            await asyncio.sleep(lifetime)

    asyncio.run(run())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def ceiling(seconds: float, connections: int, engines: list[str]) -> list[Result]:
    """The generator against a trivial server (2 processes on one port): its own ceiling."""
    port = free_port()
    lifetime = len(engines) * 2 * (seconds + 5) + 30
    servers = [
        subprocess.Popen(
            [sys.executable, __file__, "serve-trivial", f"--port={port}", f"--lifetime={lifetime}"]
        )
        for _ in range(2)
    ]
    results = []
    try:
        wait_for_port(port)
        with tempfile.TemporaryDirectory() as tmp:
            codes = Path(tmp) / "codes.txt"
            codes.write_text("".join(f"TRIVIAL{i:09d}\n" for i in range(1_000_000)))
            target = Target(
                "127.0.0.1",
                port,
                "/api/entry/scan",
                [("X-Device-Key", "trivial")],
                '{"barcode": "{barcode}", "turnstile": "F03", "scanned_at": "{now}", '
                '"nonce": "{nonce}"}',
                "decision",
                "admit",
            )
            for engine in engines:
                if engine == "wrk":
                    result = wrk_closed_loop(target, codes, connections, seconds, threads=2)
                else:
                    before = cpu_seconds()
                    result = asyncio.run(
                        closed_loop(target, read_barcodes(codes), connections, seconds)
                    )
                    result.client_cpu_s = cpu_seconds() - before
                result.mode = "ceiling"
                results.append(result)
            # the open-loop scheduler keeping time at the highest rate the target names
            before = cpu_seconds()
            result = asyncio.run(
                open_loop(target, read_barcodes(codes), connections, seconds, CEILING_RATE, 5.0)
            )
            result.client_cpu_s = cpu_seconds() - before
            result.mode = "ceiling-rate"
            results.append(result)
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=10)
    return results


# --- command line -------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["max", "rate", "ceiling", "serve-trivial"])
    parser.add_argument("--url", default="http://127.0.0.1:8000/api/entry/scan")
    parser.add_argument("--barcodes", type=Path, help="file of barcodes, one a line")
    parser.add_argument("--body", default='{"barcode": "{barcode}", "nonce": "{nonce}"}')
    parser.add_argument("-H", "--header", action="append", default=[], help="NAME: VALUE")
    parser.add_argument("--ok", default="decision=admit", help="KEY=VALUE of a success")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rate", type=float, default=500.0, help="rate: requests/s offered")
    parser.add_argument("--grace", type=float, default=5.0, help="rate: wait for stragglers")
    parser.add_argument("--engine", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--lifetime", type=float, default=60.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.seconds = min(args.seconds, MAX_SECONDS)
    args.lifetime = min(args.lifetime, 2 * MAX_SECONDS)
    if args.engine == "auto":
        args.engine = "wrk" if shutil.which("wrk") else "python"
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.mode == "serve-trivial":
        serve_trivial(args.port, args.lifetime)
        return
    if args.mode == "ceiling":
        engines = ["wrk", "python"] if shutil.which("wrk") else ["python"]
        results = ceiling(args.seconds, args.connections, engines)
        for result in results:
            print(result.line(), file=sys.stderr)
        print(json.dumps([asdict(result) for result in results]))
        return
    if args.barcodes is None:
        sys.exit("--barcodes is required")
    target = Target.from_args(args)
    if args.mode == "max" and args.engine == "wrk":
        result = wrk_closed_loop(
            target, args.barcodes, args.connections, args.seconds, args.threads
        )
    else:
        barcodes = read_barcodes(args.barcodes)
        before = cpu_seconds()
        if args.mode == "max":
            result = asyncio.run(closed_loop(target, barcodes, args.connections, args.seconds))
        else:
            result = asyncio.run(
                open_loop(target, barcodes, args.connections, args.seconds, args.rate, args.grace)
            )
        result.client_cpu_s = cpu_seconds() - before
    print(result.line(), file=sys.stderr)
    print(json.dumps(asdict(result)))


if __name__ == "__main__":
    main()
