"""A match day without a restart (issue 40, item 3): one server process serves a whole match day,
compressed into `--minutes` (30), and its memory, open files and database connections are watched
for growth.

The day, in the ground's minutes: the gates open 90 minutes before kick-off, the match with its
half-time takes 105, the crowd leaves over the last 30 (225 in all, so 30 compressed minutes are
7.5 of the ground's). At the demo ground's real rates, time compressed:

- the crowd: the demo cup tie's (55,000 tickets, 93% come: demo/arrival.py), each scanned once at
  a time drawn from the arrival curve (most in the last half hour, a tail back to 90 minutes), by
  bench/faults.py's turnstiles (Retry-After honoured, offline decisions uploaded);
- `--reports` (150) steward reports: a quarter before kick-off, most during the match, a few
  after, each with its idempotency key (faults.Load's phones);
- a broadcast to every steward every 15 minutes, acknowledged from the steward's own session
  (bench_surge's);
- `--sockets` (500) live sockets on the match, in a process of their own, each closing and
  reconnecting with `?after=` on average every 30 of the ground's minutes (a phone losing its
  signal, a screen reloaded);
- the periodic jobs in the server, as the default install runs them (anchoring, overdue alerts,
  the league's publishing: safeground/background.py);
- a steady probe, the same at every minute of the day: 2 scans a second of tickets already
  inside (a decision and a stored scan, refused) and a read of the control room's log.

Every `--minutes`/6 (five compressed minutes at the default) a row: the server's RSS, its open
files, its threads, its database connections, and the p99 of the probe's scans and reads, the
crowd's scans and the reports over the rows' interval. Growth is measured from the first row
(after warm-up: migrations, caches and pools are made by then) to the last. Last line:

    soak minutes=30 rss_growth_pct=G open_files_growth_pct=F p99_end_over_start=R

Targets (docs/design.md): memory and open files within 10% of the first row, the probe's p99 at the
end within 1.2x its p99 at the start.

    flock /tmp/bench.lock .venv/bin/python bench/bench_soak.py            # SQLite, 30 minutes
    .venv/bin/python bench/bench_soak.py --minutes 3                      # a quick look
    .venv/bin/python bench/bench_soak.py --postgres --pg-db sg_me_soak --redis-url \\
        redis://127.0.0.1:6379/7
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import resource
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import bench_live, bench_surge, faults

GATES_OPEN, MATCH, LEAVING = 90.0, 105.0, 30.0  # the ground's minutes
DAY = GATES_OPEN + MATCH + LEAVING
CROWD = round(55_000 * 0.93)
PROBE_TICKETS = 20
PROBE_SCANS_PER_S = 2.0
PROBE_READS_PER_S = 1.0
BROADCAST_EVERY = 15.0  # the ground's minutes
RECONNECT_EVERY = 30.0  # the ground's minutes, on average, per socket
ROWS = 6


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="the day compressed (30)")
    parser.add_argument("--sockets", type=int, default=500)
    parser.add_argument("--reports", type=int, default=150)
    parser.add_argument(
        "--crowd",
        type=int,
        default=0,
        help=f"scans of the crowd (default {CROWD:,} for 30 minutes, in proportion for fewer:"
        " the same rates)",
    )
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL and Redis")
    parser.add_argument("--pg-db", default=os.environ.get("BENCH_SOAK_PG_DB", "sg_bench_soak"))
    parser.add_argument(
        "--redis-url", default=os.environ.get("BENCH_SOAK_REDIS_URL", "redis://127.0.0.1:6379/0")
    )
    parser.add_argument("--port", type=int, default=18750)
    parser.add_argument("--seed", type=int, default=2016)
    return parser.parse_args()


# --- the server and what it holds --------------------------------------------------------------


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (a server's worker processes)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


@dataclass
class Held:
    rss_mb: float
    open_files: int
    threads: int
    db_connections: int


def held_by(pid: int, *, sqlite_path: str, pg_url: str) -> Held:
    rss_kb = files = threads = sqlite_handles = 0
    for each in process_tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss_kb += int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads += int(line.split()[1])
            fds = os.listdir(f"/proc/{each}/fd")
            files += len(fds)
            if sqlite_path:
                for fd in fds:
                    with contextlib.suppress(OSError):
                        if os.readlink(f"/proc/{each}/fd/{fd}") == sqlite_path:
                            sqlite_handles += 1
    connections = sqlite_handles
    if pg_url:
        parts = faults.pg_url_parts(pg_url)
        with faults.pg_connect(parts, "postgres") as admin:
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (parts["dbname"],)
            ).fetchone()
            connections = int(row[0]) if row else 0
    return Held(round(rss_kb / 1024, 1), files, threads, connections)


# --- the live sockets, in a process of their own -------------------------------------------------


def sockets_process(
    url: str, origin: str, cookie: str, count: int, mean_life: float, pipe: Connection
) -> None:
    bench_live.raise_fd_limit()
    asyncio.run(_sockets(url, origin, cookie, count, mean_life, pipe))


async def _sockets(
    url: str, origin: str, cookie: str, count: int, mean_life: float, pipe: Connection
) -> None:
    from websockets.asyncio.client import connect

    state = {"connects": 0, "failed": 0, "frames": 0, "open": 0}
    hello_took: list[float] = []
    stop = asyncio.Event()
    gate = asyncio.Semaphore(50)

    async def one(index: int) -> None:
        seq = 0
        rng = random.Random(index)
        await asyncio.sleep(rng.random() * 5)  # not all at once
        while not stop.is_set():
            began = time.monotonic()
            try:
                async with gate:
                    ws = await connect(
                        f"{url}?after={seq}",
                        origin=origin,  # type: ignore[arg-type]
                        additional_headers={"Cookie": cookie},
                        compression=None,
                        ping_interval=None,
                        open_timeout=30,
                        max_queue=None,
                    )
            except Exception:
                state["failed"] += 1
                await asyncio.sleep(1 + rng.random())
                continue
            state["connects"] += 1
            state["open"] += 1
            life = rng.expovariate(1 / mean_life)
            try:
                async with asyncio.timeout(life):
                    async for message in ws:
                        frame = json.loads(message)
                        if frame.get("type") == "hello":
                            hello_took.append(time.monotonic() - began)
                            continue
                        state["frames"] += 1
                        if isinstance(frame.get("seq"), int):
                            seq = max(seq, frame["seq"])
                        if stop.is_set():
                            break
            except (TimeoutError, Exception):
                pass
            state["open"] -= 1
            with contextlib.suppress(Exception):
                await ws.close()

    tasks = [asyncio.create_task(one(i)) for i in range(count)]
    loop = asyncio.get_running_loop()
    while True:
        asked = await loop.run_in_executor(None, pipe.recv)
        took = sorted(hello_took)
        hello_took.clear()
        pipe.send(dict(state, hello_p99_ms=round(1000 * p99(took)) if took else -1))
        if asked == "stop":
            break
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


# --- the day's plan ------------------------------------------------------------------------------


@dataclass
class Plan:
    scans: list[float]  # seconds from the start, one per supporter
    reports: list[float]
    broadcasts: list[float]


def day_plan(seconds: float, crowd: int, reports: int, seed: int) -> Plan:
    rng = random.Random(seed)
    per_minute = seconds / DAY  # real seconds per minute of the ground's day

    def at(ground_minute: float) -> float:
        return ground_minute * per_minute

    # demo/arrival.py's curve, over 90 minutes: most in the last half hour before kick-off.
    scans = sorted(at(GATES_OPEN - GATES_OPEN * rng.betavariate(1.4, 2.6)) for _ in range(crowd))
    said = []
    for _ in range(reports):
        phase = rng.random()
        if phase < 0.25:
            said.append(at(rng.uniform(0, GATES_OPEN)))
        elif phase < 0.9:
            said.append(at(rng.uniform(GATES_OPEN, GATES_OPEN + MATCH)))
        else:
            said.append(at(rng.uniform(GATES_OPEN + MATCH, DAY)))
    broadcasts = [at(m) for m in range(int(BROADCAST_EVERY), int(DAY), int(BROADCAST_EVERY))]
    return Plan(scans, sorted(said), broadcasts)


# --- the load ----------------------------------------------------------------------------------


def p99(values: list[float]) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


@dataclass
class Probe:
    """The same requests at every minute of the day: (sent at, took, kind)."""

    samples: list[tuple[float, float, str]] = field(default_factory=list)


async def probe(load: faults.Load, barcodes: list[str], stop: float, out: Probe) -> None:
    upstream = faults.Upstream(load.cluster.ports[0])
    fixture = load.setup.fixture_id
    scan_headers = {"Content-Type": "application/json", "X-Device-Key": load.setup.device_key}
    step = 1.0 / (PROBE_SCANS_PER_S + PROBE_READS_PER_S)
    turn = 0
    while time.monotonic() < stop:
        began = time.monotonic()
        turn += 1
        if turn % 3 == 0:
            kind, method, path, body = "read", "GET", f"/api/fixtures/{fixture}/log?limit=50", b""
            headers = {"Cookie": load.cookie_header()}
        else:
            kind, method, path = "scan", "POST", "/api/entry/scan"
            body = json.dumps(
                {
                    "barcode": barcodes[turn % len(barcodes)],
                    "turnstile": load.setup.turnstile,
                    "scanned_at": datetime.now(UTC).isoformat(),
                    "nonce": str(uuid.uuid4()),
                }
            ).encode()
            headers = scan_headers
        with contextlib.suppress(faults.NoAnswer):
            answer = await upstream.request(method, path, headers, body, 10)
            if answer.status < 500:
                out.samples.append((began, time.monotonic() - began, kind))
        await asyncio.sleep(max(0.0, step - (time.monotonic() - began)))


async def offer(load: faults.Load, plan: Plan, t0: float) -> None:
    """The crowd's scans and the reports at their planned times, retries as they fall due."""
    stop = asyncio.Event()
    flusher = asyncio.create_task(load.flush_offline(stop))
    scans = reports = 0
    end = max(plan.scans[-1] if plan.scans else 0, plan.reports[-1] if plan.reports else 0)
    while (now := time.monotonic() - t0) <= end + 0.01:
        while scans < len(plan.scans) and plan.scans[scans] <= now:
            item = load.new_scan()
            scans += 1
            if item is not None:
                item.offered_at = now
                load.sent.append(item)
                load._spawn(load.send(item))
        while reports < len(plan.reports) and plan.reports[reports] <= now:
            item = load.new_entry(reports)
            reports += 1
            item.offered_at = now
            load.sent.append(item)
            load._spawn(load.send(item))
        while not load.retries.empty():
            load._spawn(load.send(load.retries.get_nowait()))
        await asyncio.sleep(0.01)
    stop.set()
    await flusher


async def broadcasts_at(load: faults.Load, steward: dict[str, str], plan: Plan, t0: float) -> int:
    """A broadcast from the control room at each planned time, acknowledged by the steward's
    phone (retried as bench_surge's); the number acknowledged."""
    acked = 0
    proxy = faults.ReverseProxy(load.cluster.ports)
    fixture = load.setup.fixture_id
    for when in plan.broadcasts:
        await asyncio.sleep(max(0.0, t0 + when - time.monotonic()))
        headers = {
            "Content-Type": "application/json",
            "Cookie": load.cookie_header(),
            "X-CSRFToken": load.cookies["csrftoken"],
        }
        body = json.dumps({"script": "hold", "text": "Hold at the gates"}).encode()
        with contextlib.suppress(faults.NoAnswer):
            _, answer = await proxy.request(
                "POST", f"/api/fixtures/{fixture}/broadcasts", headers, body, 10
            )
            if answer.status != 201:
                continue
            sent = answer.json()["id"]
            ack = {"Cookie": steward["cookie"], "X-CSRFToken": steward["csrftoken"]}
            for _attempt in range(5):
                with contextlib.suppress(faults.NoAnswer):
                    _, answer = await proxy.request(
                        "POST", f"/api/fixtures/{fixture}/broadcasts/{sent}/ack", ack, b"", 10
                    )
                    if answer.status == 200:
                        acked += 1
                        break
                await asyncio.sleep(faults.jittered(1.0))
    return acked


@dataclass
class Row:
    minute: float
    ground: str
    held: Held
    probe_p99_ms: float  # scans and reads together: the verdict's
    probe_scan_p99_ms: float
    probe_read_p99_ms: float
    crowd_scans: int
    crowd_scan_p99_ms: float
    reports: int
    report_p99_ms: float
    sockets: dict[str, Any]


def ground_clock(minute: float, minutes: float) -> str:
    """The ground's time at a compressed minute: T-90 .. KO+135."""
    ground = minute * DAY / minutes - GATES_OPEN
    return f"KO{ground:+.0f}"


def interval_p99(values: list[tuple[float, float]], start: float, end: float) -> tuple[int, float]:
    within = [took for at, took in values if start <= at < end]
    return len(within), round(1000 * p99(within), 1) if within else float("nan")


async def run(args: argparse.Namespace, server: Server, setup: faults.Setup) -> list[Row]:
    minutes = args.minutes
    seconds = minutes * 60
    crowd = args.crowd or round(CROWD * minutes / 30)
    plan = day_plan(seconds, crowd, args.reports, args.seed)
    load = faults.Load(server, scan_rate=0, entry_rate=0)
    load._barcodes = iter(setup.barcodes[:crowd])
    probe_barcodes = setup.barcodes[crowd : crowd + PROBE_TICKETS]
    await load.log_in()
    steward = await bench_surge.steward_session(server.ports[0])
    # The probe's tickets inside before the day starts: each probe scan is then a refusal.
    for barcode in probe_barcodes:
        body = json.dumps(
            {
                "barcode": barcode,
                "turnstile": setup.turnstile,
                "scanned_at": datetime.now(UTC).isoformat(),
                "nonce": str(uuid.uuid4()),
            }
        ).encode()
        headers = {"Content-Type": "application/json", "X-Device-Key": setup.device_key}
        await faults.Upstream(server.ports[0]).request("POST", "/api/entry/scan", headers, body, 10)

    parent, child = multiprocessing.Pipe()
    url = f"ws://127.0.0.1:{server.ports[0]}/ws/fixtures/{setup.fixture_id}/"
    mean_life = RECONNECT_EVERY * seconds / DAY
    sockets = multiprocessing.Process(
        target=sockets_process,
        args=(url, f"http://127.0.0.1:{server.ports[0]}", load.cookie_header(), args.sockets,
              mean_life, child),
    )  # fmt: skip
    sockets.start()

    t0 = time.monotonic()
    load.t0 = t0
    stop = t0 + seconds
    probed = Probe()
    broadcasting = asyncio.create_task(broadcasts_at(load, steward, plan, t0))
    tasks = [
        asyncio.create_task(offer(load, plan, t0)),
        asyncio.create_task(probe(load, probe_barcodes, stop, probed)),
        broadcasting,
    ]
    rows: list[Row] = []
    every = seconds / ROWS
    for n in range(1, ROWS + 1):
        await asyncio.sleep(max(0.0, t0 + n * every - time.monotonic()))
        start, end = (n - 1) * every, n * every
        parent.send("sample")
        socket_state = await asyncio.to_thread(parent.recv)
        held = await asyncio.to_thread(
            held_by, server.pid, sqlite_path=server.sqlite_path, pg_url=server.pg_url
        )
        scans = [(a.sent_at, a.took) for a in load.attempts if a.kind == "scan" and a.status]
        entries = [(a.sent_at, a.took) for a in load.attempts if a.kind == "entry" and a.status]
        probe_scans = [(at - t0, took) for at, took, kind in probed.samples if kind == "scan"]
        probe_reads = [(at - t0, took) for at, took, kind in probed.samples if kind == "read"]
        crowd_n, crowd_p99 = interval_p99(scans, start, end)
        reports_n, reports_p99 = interval_p99(entries, start, end)
        row = Row(
            minute=round(end / 60, 1),
            ground=ground_clock(end / 60, minutes),
            held=held,
            probe_p99_ms=interval_p99(probe_scans + probe_reads, start, end)[1],
            probe_scan_p99_ms=interval_p99(probe_scans, start, end)[1],
            probe_read_p99_ms=interval_p99(probe_reads, start, end)[1],
            crowd_scans=crowd_n,
            crowd_scan_p99_ms=crowd_p99,
            reports=reports_n,
            report_p99_ms=reports_p99,
            sockets=socket_state,
        )
        rows.append(row)
        print_row(row)
    broadcasts_acked = broadcasting.result() if broadcasting.done() else -1
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    parent.send("stop")
    final = await asyncio.to_thread(parent.recv)
    sockets.join(timeout=30)
    drained = await load.drain(20)
    acked = sum(1 for item in load.sent if item.acked is not None)
    print(
        f"  sockets: connects={final['connects']} failed={final['failed']}"
        f" frames={final['frames']}; broadcasts acknowledged={broadcasts_acked}/"
        f"{len(plan.broadcasts)}; requests sent={len(load.sent)} answered={acked}"
        f" drained={'yes' if drained else 'no'}; load average {os.getloadavg()[0]:.2f}"
    )
    return rows


HEADER = (
    f"  {'min':>5} {'ground':>7} {'rss_MB':>7} {'files':>6} {'thr':>4} {'db':>3}"
    f" {'probe_p99':>9} {'scan':>6} {'read':>6} {'scans':>6} {'scan_p99':>9}"
    f" {'reports':>7} {'rep_p99':>8} {'ws_open':>7} {'ws_conn':>7} {'hello_p99':>9}"
)


def print_row(row: Row) -> None:
    s = row.sockets
    print(
        f"  {row.minute:>5} {row.ground:>7} {row.held.rss_mb:>7} {row.held.open_files:>6}"
        f" {row.held.threads:>4} {row.held.db_connections:>3} {row.probe_p99_ms:>9}"
        f" {row.probe_scan_p99_ms:>6} {row.probe_read_p99_ms:>6} {row.crowd_scans:>6}"
        f" {row.crowd_scan_p99_ms:>9}"
        f" {row.reports:>7} {row.report_p99_ms:>8} {s['open']:>7} {s['connects']:>7}"
        f" {s['hello_p99_ms']:>9}",
        flush=True,
    )


class Server(faults.OneServer):
    """faults.OneServer (SQLite as the default install, or `--postgres`), with the demo steward's
    subscription for the broadcasts (bench_surge's setup)."""

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(
            port=args.port,
            pg_db=args.pg_db if args.postgres else "",
            redis_url=args.redis_url,
            prefix="safeground-soak-",
        )

    def prepare(self, tickets: int) -> faults.Setup:
        setup = super().prepare(tickets)
        surge = self.workdir / "surge.json"
        subprocess.run(
            [faults.PYTHON, bench_surge.__file__, "setup", str(setup.fixture_id), str(surge)],
            env=self.env,
            cwd=faults.ROOT,
            check=True,
        )
        return setup

    def errors(self) -> str:
        text = (self.workdir / f"server-{self.ports[0]}.log").read_text(errors="replace")
        return f"{text.count('Traceback')} tracebacks in the server's log"


def growth_pct(first: float, last: float) -> float:
    return round(100 * (last - first) / first, 1) if first else float("nan")


def main() -> None:
    args = parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    crowd = args.crowd or round(CROWD * args.minutes / 30)
    database = "postgresql+redis" if args.postgres else "sqlite"
    print(
        f"soak: a match day ({DAY:.0f} of the ground's minutes) in {args.minutes:g} minutes on"
        f" {database}: {crowd:,} scans, {args.reports} reports, a broadcast every"
        f" {BROADCAST_EVERY:.0f} min, {args.sockets} sockets reconnecting every"
        f" {RECONNECT_EVERY:.0f} min on average, the probe at"
        f" {PROBE_SCANS_PER_S + PROBE_READS_PER_S:.0f}/s; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    server = Server(args)
    try:
        began = time.monotonic()
        setup = server.prepare(crowd + PROBE_TICKETS)
        print(f"  database ready in {time.monotonic() - began:.0f} s", flush=True)
        server.start()
        start = held_by(server.pid, sqlite_path=server.sqlite_path, pg_url=server.pg_url)
        print(
            f"  at the start: rss {start.rss_mb} MB, {start.open_files} files,"
            f" {start.threads} threads, {start.db_connections} database connections"
        )
        print(HEADER, flush=True)
        rows = asyncio.run(run(args, server, setup))
        print(f"  {server.errors()}; load average {os.getloadavg()[0]:.2f}")
    finally:
        server.close()
    first, last = rows[0], rows[-1]
    # The crowd's arrival is the day's peak: what it leaves behind (caches filled, the log
    # longer) is apart from a leak, which keeps growing after it. From the row after the peak:
    peak = max(range(len(rows)), key=lambda n: rows[n].crowd_scans)
    after = rows[min(peak + 1, len(rows) - 1)]
    print(
        f"  after the arrival ({after.ground} to the end): rss"
        f" {growth_pct(after.held.rss_mb, last.held.rss_mb)}%, open files"
        f" {growth_pct(after.held.open_files, last.held.open_files)}%, threads"
        f" {after.held.threads} -> {last.held.threads}, database connections"
        f" {after.held.db_connections} -> {last.held.db_connections}"
    )
    ratio = last.probe_p99_ms / first.probe_p99_ms if first.probe_p99_ms else float("nan")
    print(
        f"soak minutes={args.minutes:g}"
        f" rss_growth_pct={growth_pct(first.held.rss_mb, last.held.rss_mb)}"
        f" open_files_growth_pct={growth_pct(first.held.open_files, last.held.open_files)}"
        f" p99_end_over_start={ratio:.2f}"
    )


if __name__ == "__main__":
    main()
