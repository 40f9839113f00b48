"""Live fan-out benchmark: N WebSocket clients on one match, entries POSTed at a steady rate.

Each run starts a real server as a subprocess (`safeground serve`: uvicorn, permessage-deflate
off) over a fresh database of its own with the demo loaded, logs in the demo loggist, opens N
sockets to the cup tie from separate client processes, then POSTs log entries to
`/api/fixtures/{id}/log` and measures the delay from just before each POST to its receipt at every
client. "lost" = not received within 5 s. The reference peer is a plain `websockets` broadcast
server (in this file) triggered over a local TCP socket, measured the same way.

Layers: `inprocess` (one process, no Redis), `plain` (the reference), `plain-stored` (the
reference storing each message, INSERT and COMMIT, before it sends it), `redis-2proc`
(`safeground serve --workers 2` through Redis, each worker with its own subscription and its own
sockets: the scale-out) and `redis-1proc`: one server process through Redis, the issue's measure,
whose line closes the output:
`live fanout clients=N layer=redis-1proc p50_ms=X p99_ms=Y lost=Z`.

    flock /tmp/bench.lock .venv/bin/python bench/bench_live.py    # every layer (~8 min)
    .venv/bin/python bench/bench_live.py --clients 500 --seconds 20 --layers redis-2proc
    .venv/bin/python bench/bench_live.py --postgres      # the server on PostgreSQL
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import itertools
import json
import multiprocessing
import os
import queue
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import viewers

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
LOST_AFTER_S = 5.0
MARK = re.compile(r"bench-(\d+)-")
DEMO_USER, DEMO_PASSWORD = "loggist", "matchday-demo"
PG_ADMIN_URL = "postgres://root@127.0.0.1:5432/postgres"
# Defaults for the bench's own PostgreSQL database and Redis; several people share a machine, so
# both can be moved (--pg-db, --redis-url, or these environment variables).
PG_BENCH_DB = os.environ.get("BENCH_LIVE_PG_DB", "safeground_bench")
REDIS_URL = os.environ.get("BENCH_LIVE_REDIS_URL", "redis://127.0.0.1:6379/0")
PUBLISHERS = 4  # concurrent POST connections
TARGET_RATIO = 1.2  # p99 against the plain server's, every layer (docs/design.md)
TARGET_POST_P99_MS = 50.0
# The measure last, so its line closes the output: 2,000 clients on one server process,
# through Redis.
LAYERS = (
    "reconnect-plain",
    "reconnect",
    "reconnect-redis",
    "plain",  # first of the fan-out layers: the others are compared with it (same run)
    "plain-stored",  # the same server, each message stored (INSERT, COMMIT) before it is sent
    "inprocess",
    "redis-2proc",
    "redis-1proc",
)
RECONNECT_LAYERS = ("reconnect-plain", "reconnect", "reconnect-redis")
PLAIN_LAYERS = ("plain", "plain-stored", "reconnect-plain")
WORKERS = {"redis-1proc": 1, "redis-2proc": 2}

# The embedded default database (SQLite, WAL, IMMEDIATE, lock timeout) at a path of our own:
# a sqlite:// DATABASE_URL would drop the WAL and the lock timeout that settings.base applies.
SQLITE_SETTINGS = """\
from pathlib import Path

from safeground.settings.dev import *  # noqa: F403
from safeground.settings.base import database_from_env

DATABASES = {{"default": database_from_env(Path({path!r}))}}
"""


def main() -> None:
    args = parse_args()
    if args.serve_plain:
        serve_plain(args.port, args.trigger_port, args.store)
        return
    if args.append_rate:
        append_rate(args.entries)
        return
    if args.reconnect_setup:
        reconnect_setup(args.clients, args.entries)
        return
    if args.reconnect_write:
        reconnect_write()
        return
    if args.ports:
        global PORTS
        low, _, high = args.ports.partition("-")
        PORTS = range(int(low), int(high or low) + 1)
    raise_fd_limit()
    # The load generator (this process's POSTs, its client processes) on one CPU, the server
    # free to use the others: the server's figures, not the clients', are measured.
    viewers.pin_here(viewers.client_cpus())
    layers = [layer.strip() for layer in args.layers.split(",") if layer.strip()]
    layers.sort(key=lambda layer: LAYERS.index(layer))
    workdir = Path(tempfile.mkdtemp(prefix="safeground-bench-"))
    try:
        run_all(args, layers, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rate", type=float, default=10, help="entries POSTed per second")
    parser.add_argument("--layers", default=",".join(LAYERS), help=", ".join(LAYERS))
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="serve from PostgreSQL (the --pg-db database, made with psql; or DATABASE_URL)",
    )
    parser.add_argument(
        "--pg-db",
        default=PG_BENCH_DB,
        help="PostgreSQL database the bench makes and drops (default: %(default)s)",
    )
    parser.add_argument("--redis-url", default=REDIS_URL, help="default: %(default)s")
    parser.add_argument("--entries", type=int, default=400, help="entries per append-rate run")
    parser.add_argument("--no-append-rate", action="store_true")
    parser.add_argument(
        "--reconnect-log",
        type=int,
        default=300,
        help="entries in the match's log before a reconnect run (default: %(default)s)",
    )
    parser.add_argument(
        "--ports", default="", help="LO-HI: the servers listen only there (default: any free)"
    )
    # Internal modes (subprocesses of this script).
    parser.add_argument("--serve-plain", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--append-rate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reconnect-setup", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reconnect-write", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--trigger-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--store", default="", help=argparse.SUPPRESS)
    return parser.parse_args()


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65_536 if hard == resource.RLIM_INFINITY else hard
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


# --- databases --------------------------------------------------------------------------------


@dataclass
class Database:
    name: str  # sqlite or postgresql
    env: dict[str, str]
    sqlite_path: Path | None = None


def sqlite_database(workdir: Path) -> Database:
    settings_dir = workdir / "settings"
    settings_dir.mkdir(exist_ok=True)
    path = workdir / "bench.sqlite3"
    (settings_dir / "bench_settings.py").write_text(SQLITE_SETTINGS.format(path=str(path)))
    # Ahead of any PYTHONPATH given (a snapshot of the code under test, say), not instead of it.
    path = os.pathsep.join(p for p in (str(settings_dir), os.environ.get("PYTHONPATH")) if p)
    env = {"DJANGO_SETTINGS_MODULE": "bench_settings", "PYTHONPATH": path}
    return Database("sqlite", env, workdir / "bench.sqlite3")


def postgres_database(name: str) -> Database | None:
    """DATABASE_URL if given, else a fresh database `name` made with psql; None if no server."""
    env_url = os.environ.get("DATABASE_URL", "")
    if env_url.startswith(("postgres://", "postgresql://")):
        return Database("postgresql", {"DATABASE_URL": env_url})
    if shutil.which("psql") is None:
        return None
    for sql in (
        f"DROP DATABASE IF EXISTS {name} WITH (FORCE)",
        f"CREATE DATABASE {name}",
    ):
        done = subprocess.run(
            ["psql", PG_ADMIN_URL, "-q", "-c", sql], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            print(f"PostgreSQL not usable: {done.stderr.strip()}")
            return None
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    return Database("postgresql", {"DATABASE_URL": url})


def server_env(database: Database, *, redis_url: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "safeground.settings.dev",
            "SAFEGROUND_REQUIRE_2FA": "false",
            "DEBUG": "false",  # as served: no query log, no debug pages
            "LOG_LEVEL": "WARNING",
            "AXES_FAILURE_LIMIT": "1000",
        }
    )
    env.update(database.env)
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def prepare(database: Database) -> None:
    env = server_env(database)
    for command in (["migrate", "--no-input", "-v", "0"], ["demo"]):
        subprocess.run(
            [PYTHON, "-m", "safeground.cli", *command],
            env=env,
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )


# --- the runs ---------------------------------------------------------------------------------


@dataclass
class Result:
    layer: str
    clients: int
    connected: int
    latencies_ms: list[float]
    first_ms: list[float]  # per message: POST start to its first receipt (the append's share)
    spread_ms: list[float]  # per message: first to last receipt (the fan-out's share)
    expected: int
    received: int
    duplicates: int
    closed: int
    posts: int
    post_errors: int
    post_ms: list[float]
    server_cpu_s: float
    seconds: float
    frame_bytes: int
    connect_s: float
    load: float
    cpu: viewers.CpuShare

    @property
    def lost(self) -> int:
        return self.expected - len(self.latencies_ms)

    def summary(self) -> str:
        lat = sorted(self.latencies_ms)
        return (
            f"live fanout clients={self.clients} layer={self.layer} "
            f"p50_ms={percentile(lat, 50):.1f} p99_ms={percentile(lat, 99):.1f} lost={self.lost}"
        )

    def against(self, plain: Result, *, target: bool = True) -> str:
        """This layer beside a reference of the same run: plain (the targets' terms) or
        plain-stored (`target=False`: no target of its own, it shows what a commit adds)."""
        mine, peer = sorted(self.latencies_ms), sorted(plain.latencies_ms)
        posts = sorted(self.post_ms)
        ratio = percentile(mine, 99) / max(percentile(peer, 99), 1e-9)
        verdict = ""
        if target:
            met = ratio <= TARGET_RATIO and percentile(posts, 99) <= TARGET_POST_P99_MS
            judged = self.cpu.server_had_a_core and plain.cpu.server_had_a_core
            said = ("met" if met else "NOT met") if judged else "no verdict (no core to itself)"
            verdict = f"; target {TARGET_RATIO}x and POST p99 {TARGET_POST_P99_MS:.0f} ms: {said}"
        return (
            f"  {self.layer} against {plain.layer} (same run): p50 {percentile(mine, 50):.1f} vs"
            f" {percentile(peer, 50):.1f} ms, p99 {percentile(mine, 99):.1f} vs"
            f" {percentile(peer, 99):.1f} ms = {ratio:.2f}x {plain.layer};"
            f" POST p50/p99 {percentile(posts, 50):.1f}/{percentile(posts, 99):.1f} ms;"
            f" server CPU {self.us_per_frame():.1f} vs {plain.us_per_frame():.1f} µs per"
            f" delivered frame; lost {self.lost}, duplicates {self.duplicates}{verdict}"
        )

    def us_per_frame(self) -> float:
        return 1e6 * self.server_cpu_s / max(len(self.latencies_ms), 1)

    def detail(self) -> str:
        load = f", load average before the run {self.load:.1f}"
        lat = sorted(self.latencies_ms)
        delivered = max(len(lat), 1)
        posts = sorted(self.post_ms)
        return (
            f"  {self.layer}: connected={self.connected}/{self.clients} in {self.connect_s:.1f} s"
            f", messages={self.posts} (errors {self.post_errors})"
            f", max_ms={lat[-1] if lat else float('nan'):.1f}"
            f", duplicates={self.duplicates}, sockets closed={self.closed}"
            f", frame={self.frame_bytes} B"
            f", post p50/p99 {percentile(posts, 50):.1f}/{percentile(posts, 99):.1f} ms"
            f", first receipt p50/p99 {p50_p99(self.first_ms)} ms"
            f", first-to-last p50/p99 {p50_p99(self.spread_ms)} ms"
            f", server CPU {100 * self.server_cpu_s / self.seconds:.0f}%"
            f" ({1e6 * self.server_cpu_s / delivered:.1f} µs per delivered frame){load}\n"
            + self.cpu.line()
        )


def p50_p99(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{percentile(ordered, 50):.1f}/{percentile(ordered, 99):.1f}"


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values) + 0.5) - 1))
    return values[index]


def run_all(args: argparse.Namespace, layers: list[str], workdir: Path) -> None:
    sqlite = sqlite_database(workdir)
    postgres = postgres_database(args.pg_db) if args.postgres else None
    if args.postgres and postgres is None:
        sys.exit("--postgres: no PostgreSQL reachable (psql, or DATABASE_URL=postgres://...)")
    serving = postgres or sqlite
    prepare(serving)

    if not args.no_append_rate:
        for database in (sqlite, postgres or postgres_database(args.pg_db)):
            if database is None:
                print("append rate db=postgresql: skipped (no PostgreSQL reachable)")
                continue
            if database is not serving:
                prepare(database)
            print(measure_append_rate(database, args.entries), flush=True)

    frame_bytes = 0
    summaries: list[str] = []
    plain: Result | None = None
    stored: Result | None = None  # plain-stored, where it ran
    for layer in layers:
        if layer in RECONNECT_LAYERS:
            reconnected = run_reconnect(args, layer, serving)
            if reconnected is not None:
                print(reconnected.detail(), flush=True)
                print(reconnected.summary(), flush=True)
            continue
        if layer in WORKERS and not redis_available(args.redis_url):
            print(f"layer={layer} skipped: no Redis at {args.redis_url}")
            continue
        result = run_layer(args, layer, serving, frame_bytes=frame_bytes or 1000)
        frame_bytes = frame_bytes or result.frame_bytes
        print(result.detail(), flush=True)
        if layer == "plain":
            plain = result
        elif plain is not None:  # plain-stored is a reference too: no target of its own
            print(result.against(plain, target=layer != "plain-stored"), flush=True)
        if layer == "plain-stored":
            stored = result
        elif stored is not None:
            print(result.against(stored, target=False), flush=True)
        summaries.append(result.summary())
        print(result.summary(), flush=True)
    if not os.environ.get("DATABASE_URL"):  # the bench database, if this run made one
        drop = f"DROP DATABASE IF EXISTS {args.pg_db} WITH (FORCE)"
        subprocess.run(["psql", PG_ADMIN_URL, "-q", "-c", drop], capture_output=True, check=False)


def redis_available(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 6379), timeout=2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


PORTS: range | None = None  # --ports LO-HI: servers listen only there (a shared machine)


def free_port(*, besides: int = 0) -> int:
    """A port to listen on; with --ports, one of them (not `besides`, handed out already)."""
    for port in PORTS or (0,):
        if port and port == besides:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError(f"no free port in {PORTS}")


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise RuntimeError(f"server did not listen on port {port}")


def start_server(
    layer: str, database: Database, redis_url: str, port: int, trigger_port: int = 0
) -> subprocess.Popen[bytes]:
    if layer in PLAIN_LAYERS:
        command = [PYTHON, __file__, "--serve-plain", f"--port={port}"]
        command.append(f"--trigger-port={trigger_port}")
        if layer == "plain-stored":
            command.append(f"--store={store_of(database)}")
        env = dict(os.environ)
    else:
        command = [PYTHON, "-m", "safeground.cli", "serve", f"--port={port}"]
        command.append(f"--workers={WORKERS.get(layer, 1)}")
        via_redis = layer in WORKERS or layer == "reconnect-redis"
        env = server_env(database, redis_url=redis_url if via_redis else "")
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    viewers.unpin(process.pid)  # the load generator is pinned; the server is not
    return process


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def server(
    layer: str, database: Database, redis_url: str
) -> Iterator[tuple[int, subprocess.Popen[bytes], Any]]:
    """(port, process, publisher factory) for the layer's server, stopped afterwards."""
    port = free_port()
    triggered = layer in PLAIN_LAYERS and layer != "reconnect-plain"
    trigger_port = free_port(besides=port) if triggered else 0
    process = start_server(layer, database, redis_url, port, trigger_port)
    try:
        wait_for_port(port, process)
        if triggered:
            wait_for_port(trigger_port, process)
            yield port, process, lambda: TriggerPublisher(trigger_port)
        else:
            yield port, process, lambda: ApiPublisher(port)
    finally:
        stop_server(process)


def run_layer(args: argparse.Namespace, layer: str, database: Database, frame_bytes: int) -> Result:
    load = os.getloadavg()[0]
    with server(layer, database, args.redis_url) as (port, process, make_publisher):
        publisher = make_publisher()
        publisher.frame_bytes = frame_bytes
        fixture_id = publisher.fixture_id()
        url = f"ws://127.0.0.1:{port}/ws/fixtures/{fixture_id}/"
        origin = f"http://127.0.0.1:{port}"
        ctx = multiprocessing.get_context("fork")
        shares = split(args.clients, args.client_processes)
        pipes: list[Connection] = []
        children = []
        started = time.monotonic()
        for share in shares:
            parent_end, child_end = ctx.Pipe()
            child = ctx.Process(
                target=client_process,
                args=(url, origin, publisher.cookie, share, child_end),
                daemon=True,
            )
            child.start()
            pipes.append(parent_end)
            children.append(child)
        try:
            connected = sum(int(pipe.recv()) for pipe in pipes)
            connect_s = time.monotonic() - started
            time.sleep(1.0)  # let the connect burst settle

            meter = viewers.CpuMeter([process.pid], [os.getpid(), *(c.pid for c in children)])
            meter.start()
            total = int(args.seconds * args.rate)
            t0, post_ms, errors = publish_steadily(publisher, total, args.rate)
            time.sleep(LOST_AFTER_S)
            cpu = meter.stop()
            for pipe in pipes:
                pipe.send("stop")

            latencies: list[float] = []
            per_message: dict[int, list[float]] = {}
            received = duplicates = closed = seen_bytes = 0
            for pipe in pipes:
                ids, times, dups, lost_sockets, frame_len = pipe.recv()
                seen_bytes = max(seen_bytes, frame_len)
                duplicates += dups
                closed += lost_sockets
                received += len(ids)
                for i, t in zip(ids, times, strict=True):
                    sent = t0.get(i)
                    if sent is not None and t - sent <= LOST_AFTER_S:
                        latencies.append(1000 * (t - sent))
                        per_message.setdefault(i, []).append(1000 * (t - sent))
            for child in children:
                child.join(timeout=30)
        finally:
            for child in children:
                if child.is_alive():
                    child.terminate()
        return Result(
            layer=layer,
            clients=args.clients,
            connected=connected,
            latencies_ms=latencies,
            first_ms=[min(times) for times in per_message.values()],
            spread_ms=[max(times) - min(times) for times in per_message.values()],
            expected=args.clients * total,
            received=received,
            duplicates=duplicates,
            closed=closed,
            posts=total,
            post_errors=errors,
            post_ms=post_ms,
            server_cpu_s=cpu.server * cpu.seconds,
            seconds=cpu.seconds,
            cpu=cpu,
            frame_bytes=seen_bytes,
            connect_s=connect_s,
            load=load,
        )


def publish_steadily(publisher: Any, total: int, rate: float) -> tuple[dict[int, float], list, int]:
    """POST `total` messages at `rate` per second, on time even when some answers are slow.

    A few connections POST concurrently (like several loggists and stewards), so a slow answer
    does not lower the offered rate. t0 is taken just before each request is sent.
    """
    free: queue.Queue[Any] = queue.Queue()
    for connection in [publisher, *(publisher.another() for _ in range(PUBLISHERS - 1))]:
        free.put(connection)
    t0: dict[int, float] = {}
    post_ms: list[float] = []
    errors = 0

    def one(i: int) -> None:
        nonlocal errors
        connection = free.get()
        try:
            t0[i] = time.monotonic()
            ok = connection.publish(i)
            post_ms.append(1000 * (time.monotonic() - t0[i]))
            errors += not ok
        finally:
            free.put(connection)

    start = time.monotonic() + 0.2
    with ThreadPoolExecutor(PUBLISHERS) as pool:
        for i in range(total):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            pool.submit(one, i)
    return t0, post_ms, errors


def split(total: int, parts: int) -> list[int]:
    parts = max(1, min(parts, total))
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


# --- publishers: how a message is triggered (the real POST, or the reference's TCP line) --------


class ApiPublisher:
    """Logs in as the demo loggist and POSTs entries to the real log endpoint."""

    def __init__(self, port: int, *, like: ApiPublisher | None = None) -> None:
        self.port = port
        self.frame_bytes = 0
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.cookies: dict[str, str] = dict(like.cookies) if like else {}
        self._fixture_id: int | None = like._fixture_id if like else None
        if like is None:
            self._log_in()
        self.cookie = f"sessionid={self.cookies['sessionid']}"

    def another(self) -> ApiPublisher:
        """One more connection with the same login, to POST concurrently."""
        return ApiPublisher(self.port, like=self)

    def _request(self, method: str, path: str, body: bytes | None = None, **headers: str) -> Any:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
        except (ConnectionError, http.client.HTTPException):
            # uvicorn closes idle keep-alive connections after 5 s (while sockets connect).
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
        data = response.read()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response.status, data

    def _log_in(self) -> None:
        self._request("GET", "/login/")
        form = urllib.parse.urlencode(
            {
                "username": DEMO_USER,
                "password": DEMO_PASSWORD,
                "csrfmiddlewaretoken": self.cookies["csrftoken"],
            }
        ).encode()
        status, _ = self._request(
            "POST",
            "/login/",
            form,
            **{"Content-Type": "application/x-www-form-urlencoded"},
        )
        if status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"login as {DEMO_USER} failed ({status})")

    def fixture_id(self) -> int:
        if self._fixture_id is None:
            _status, data = self._request("GET", "/api/fixtures")
            fixtures = json.loads(data)
            self._fixture_id = int(next(f["id"] for f in fixtures if f["away_club"] == "Chelsea"))
        return self._fixture_id

    def publish(self, i: int) -> bool:
        body = {
            "category": "missile",
            "severity": 3,
            "text": f"bench-{i}- coin thrown from the away end towards the buffer",
            "block": "S-L1",
            "observed_at": datetime.now(UTC).isoformat(),
            "idempotency_key": str(uuid.uuid4()),
        }
        status, data = self._request(
            "POST",
            f"/api/fixtures/{self.fixture_id()}/log",
            json.dumps(body).encode(),
            **{"Content-Type": "application/json", "X-CSRFToken": self.cookies["csrftoken"]},
        )
        if status != 201 and i == 0:
            print(f"  POST answered {status}: {data[:300]!r}")
        return status == 201


class TriggerPublisher:
    """The reference's trigger: one line over a local TCP socket, acknowledged after broadcast."""

    cookie = ""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.reader = self.sock.makefile("rb")
        self.frame_bytes = 1000

    def another(self) -> TriggerPublisher:
        twin = TriggerPublisher(self.port)
        twin.frame_bytes = self.frame_bytes
        return twin

    def fixture_id(self) -> int:
        return 1

    def publish(self, i: int) -> bool:
        head = {"type": "log.entry", "fixture": 1, "seq": i + 1, "data": {"text": f"bench-{i}-"}}
        frame = json.dumps(head)
        frame = frame[:-2] + "x" * max(0, self.frame_bytes - len(frame)) + frame[-2:]
        self.sock.sendall(frame.encode() + b"\n")
        return self.reader.readline() == b"ok\n"


# --- client processes -------------------------------------------------------------------------


def client_process(url: str, origin: str, cookie: str, count: int, pipe: Connection) -> None:
    """`count` cheap viewers on the fixture (bench/viewers.py), pinned as the bench's other
    clients; receipt times of marked frames go back over the pipe."""
    viewers.client_process(url, origin, cookie, count, pipe, viewers.client_cpus())


# --- reconnect storm: every socket back after a server restart --------------------------------


@dataclass(frozen=True)
class Backoff:
    """What the pages' live script under test does on a close (static/safeground/live-1.js,
    connectLive), read from that file: the first back-off and its cap, the jitter, what resets
    it. 4401/4403/4404 end the retries."""

    first_s: float
    cap_s: float
    full_jitter: bool  # a wait in [0, b]; else in [b/2, b]
    reset_on_hello: bool  # else reset when the socket opens

    def wait(self, backoff: float) -> float:
        import random

        if self.full_jitter:
            return random.random() * backoff
        return backoff / 2 + random.random() * (backoff / 2)

    def __str__(self) -> str:
        jitter = "[0, b]" if self.full_jitter else "[b/2, b]"
        reset = "hello" if self.reset_on_hello else "open"
        return (
            f"client back-off as live-1.js: first {self.first_s:g} s, doubling to"
            f" {self.cap_s:g} s, each wait uniform in {jitter}, reset on {reset}"
        )


def client_backoff() -> Backoff:
    roots = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    for root in [*roots, str(ROOT / "src")]:
        script = Path(root) / "safeground" / "static" / "safeground" / "live-1.js"
        if script.exists():
            text = script.read_text()
            break
    else:
        raise RuntimeError("live-1.js not found")

    def ms(name: str) -> float:
        found = re.search(name + r" = ([0-9_]+);", text)
        if found is None:
            raise RuntimeError(f"{name} not found in {script}")
        return int(found[1].replace("_", "")) / 1000

    return Backoff(
        first_s=ms("BACKOFF_FIRST_MS"),
        cap_s=ms("BACKOFF_MAX_MS"),
        full_jitter="const delay = Math.random() * backoff;" in text,
        reset_on_hello='if (frame.type === "hello") backoff = BACKOFF_FIRST_MS' in text,
    )


REFUSED = (4401, 4403, 4404)
RECONNECT_TIMEOUT_S = 120.0
# The users whose screens reconnect: most are stewards' phones (each its own user, posted to a
# zone of the match), then the control room and the police.
STEWARD_SHARE, CONTROL_SHARE = 0.85, 0.10


@dataclass
class ReconnectResult:
    layer: str
    db: str
    clients: int
    connected: int
    connect_s: float
    down_s: float  # kill -> server listening again
    done_s: list[float]  # per client: server listening -> hello and catch-up received
    attempts: int
    duplicates: int
    refused: int
    missed: int
    load: float
    backoff: Backoff

    def summary(self) -> str:
        done = len(self.done_s)
        seconds = max(self.done_s) if done == self.clients else float("inf")
        return (
            f"live reconnect clients={self.clients} seconds={seconds:.1f}"
            f" layer={self.layer} db={self.db}"
        )

    def detail(self) -> str:
        ordered = sorted(self.done_s)
        return (
            f"  reconnect {self.layer} ({self.db}): connected={self.connected}/{self.clients}"
            f" in {self.connect_s:.1f} s; killed, restarted, listening after {self.down_s:.1f} s;"
            f" back={len(ordered)}/{self.clients}, from listening p50/p99/max"
            f" {percentile(ordered, 50):.2f}/{percentile(ordered, 99):.2f}"
            f"/{ordered[-1] if ordered else float('nan'):.2f} s, attempts={self.attempts},"
            f" duplicates={self.duplicates}, refused={self.refused}, catch-up missing"
            f" {self.missed}; load average before {self.load:.1f}; {self.backoff}"
        )


def run_reconnect(
    args: argparse.Namespace, layer: str, database: Database
) -> ReconnectResult | None:
    """Connect N sockets (N users), kill -9 the server, write entries while it is down, start it
    again: seconds from its listening until every socket has its hello and the catch-up."""
    plain = layer == "reconnect-plain"
    if layer == "reconnect-redis" and not redis_available(args.redis_url):
        print(f"layer={layer} skipped: no Redis at {args.redis_url}")
        return None
    env = server_env(database, redis_url=args.redis_url if layer == "reconnect-redis" else "")
    if plain:
        users: list[tuple[str, str]] = [("", "") for _ in range(args.clients)]
        after, fixture_id = 0, 1
    else:
        setup = subprocess.run(
            [
                PYTHON,
                __file__,
                "--reconnect-setup",
                f"--clients={args.clients}",
                f"--entries={args.reconnect_log}",
            ],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if setup.returncode != 0:
            raise RuntimeError(f"reconnect setup failed: {setup.stderr[-3000:]}")
        made = json.loads(setup.stdout.strip().splitlines()[-1])
        users = [tuple(u) for u in made["users"]]  # type: ignore[misc]
        after, fixture_id = made["last_seq"], made["fixture"]
        writer = subprocess.Popen(
            [PYTHON, __file__, "--reconnect-write"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    backoff = client_backoff()
    load = os.getloadavg()[0]
    port = free_port()
    process = start_server(layer, database, args.redis_url, port)
    wait_for_port(port, process)
    url = f"ws://127.0.0.1:{port}/ws/fixtures/{fixture_id}/"
    origin = f"http://127.0.0.1:{port}"
    ctx = multiprocessing.get_context("fork")
    pipes: list[Connection] = []
    children = []
    started = time.monotonic()
    offset = 0
    for share in split(args.clients, args.client_processes):
        parent_end, child_end = ctx.Pipe()
        mine = users[offset : offset + share]
        offset += share
        child = ctx.Process(
            target=reconnect_client_process,
            args=(url, origin, mine, after, backoff, child_end),
            daemon=True,
        )
        child.start()
        pipes.append(parent_end)
        children.append(child)
    try:
        connected = sum(int(pipe.recv()) for pipe in pipes)
        connect_s = time.monotonic() - started
        time.sleep(1.0)
        killed = time.monotonic()
        process.kill()  # as a crash: no goodbye to the sockets
        process.wait()
        if not plain:
            # What happened while every screen was blind: the catch-up each socket must get.
            writer.stdin.write("write\n")  # type: ignore[union-attr]
            writer.stdin.flush()  # type: ignore[union-attr]
            line = writer.stdout.readline()  # type: ignore[union-attr]
            if not line.startswith("written"):
                raise RuntimeError(f"reconnect writer: {line!r}")
        process = start_server(layer, database, args.redis_url, port)
        wait_for_port(port, process, timeout=60)
        ready = time.monotonic()
        for pipe in pipes:
            pipe.send(("ready", ready))
        deadline = ready + RECONNECT_TIMEOUT_S
        done_s: list[float] = []
        attempts = duplicates = refused = missed = 0
        for pipe in pipes:
            if not pipe.poll(max(0.1, deadline - time.monotonic())):
                pipe.send(("stop", 0.0))
            times, tries, dups, refusals, missing = pipe.recv()
            done_s += [t - ready for t in times]
            attempts += tries
            duplicates += dups
            refused += refusals
            missed += missing
        return ReconnectResult(
            layer=layer.removeprefix("reconnect-") if layer != "reconnect" else "inprocess",
            db="none" if plain else database.name,
            clients=args.clients,
            connected=connected,
            connect_s=connect_s,
            down_s=ready - killed,
            done_s=done_s,
            attempts=attempts,
            duplicates=duplicates,
            refused=refused,
            missed=missed,
            load=load,
            backoff=backoff,
        )
    finally:
        for pipe in pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop", 0.0))
        for child in children:
            child.join(timeout=10)
            if child.is_alive():
                child.terminate()
        stop_server(process)
        if not plain:
            writer.kill()
            writer.wait()


def reconnect_client_process(
    url: str,
    origin: str,
    users: list[tuple[str, str]],
    after: int,
    policy: Backoff,
    pipe: Connection,
) -> None:
    raise_fd_limit()
    try:
        import uvloop

        run = uvloop.run
    except ImportError:  # pragma: no cover
        run = asyncio.run
    run(_reconnecting_clients(url, origin, users, after, policy, pipe))


async def _reconnecting_clients(
    url: str,
    origin: str,
    users: list[tuple[str, str]],
    after: int,
    policy: Backoff,
    pipe: Connection,
) -> None:
    """Each socket as the live script runs it: open with ?after=<last seq seen>, reconnect on a
    close with its back-off; done once, after the restart, it has had its hello and the frame
    that closes its catch-up (the last entry written while the server was down that it may see,
    marked `rc-final <key>`)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    loop = asyncio.get_running_loop()
    state = {"attempts": 0, "duplicates": 0, "refused": 0}
    done_at: list[float] = []
    all_done = asyncio.Event()
    first_open = asyncio.Semaphore(50)  # the first connect only, as in the fan-out runs
    opened = [asyncio.Event() for _ in users]

    async def one(index: int, cookie: str, final: str) -> None:
        seq, backoff, connections = after, policy.first_s, 0
        headers = {"Cookie": f"sessionid={cookie}"} if cookie else {}
        marker = f"rc-final [{final}]"
        while True:
            try:
                async with contextlib.AsyncExitStack() as stack:
                    if connections == 0:
                        await stack.enter_async_context(first_open)
                    else:
                        state["attempts"] += 1
                    ws = await connect(
                        f"{url}?after={seq}",
                        origin=origin,  # type: ignore[arg-type]
                        additional_headers=headers,
                        compression=None,
                        ping_interval=None,
                        open_timeout=60,
                        max_queue=None,
                    )
                if not policy.reset_on_hello:
                    backoff = policy.first_s
                connections += 1
                opened[index].set()
                hello = False
                async for message in ws:
                    frame = json.loads(message)
                    if frame.get("type") == "hello":
                        hello = True
                        if policy.reset_on_hello:
                            backoff = policy.first_s
                        if connections > 1 and not cookie:  # the plain peer: hello is all
                            break
                        continue
                    frame_seq = frame.get("seq")
                    if isinstance(frame_seq, int):
                        if frame_seq <= seq:
                            state["duplicates"] += 1
                            continue
                        seq = frame_seq
                    if connections > 1 and hello and marker in message:
                        break
                if connections > 1 and hello:  # back after the restart, caught up
                    done_at.append(time.monotonic())
                    if len(done_at) == len(users):
                        all_done.set()
                    await ws.close()
                    return
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code in REFUSED:
                    state["refused"] += 1
                    return
            except Exception:
                pass
            delay = policy.wait(backoff)
            backoff = min(backoff * 2, policy.cap_s)
            await asyncio.sleep(delay)

    tasks = [asyncio.create_task(one(i, cookie, final)) for i, (cookie, final) in enumerate(users)]
    await asyncio.wait(
        [asyncio.ensure_future(event.wait()) for event in opened], timeout=RECONNECT_TIMEOUT_S
    )
    pipe.send(sum(event.is_set() for event in opened))
    message, _ready = await loop.run_in_executor(None, pipe.recv)
    if message == "ready":
        stop = loop.run_in_executor(None, pipe.recv)
        await asyncio.wait(
            [asyncio.ensure_future(all_done.wait()), stop], return_when=asyncio.FIRST_COMPLETED
        )
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    missing = len(users) - len(done_at)
    pipe.send((done_at, state["attempts"], state["duplicates"], state["refused"], missing))


def reconnect_setup(clients: int, entries: int) -> None:
    """Users for the reconnect run, one per socket, each with a session: stewards posted to the
    cup tie's zones, the control room, the police; and a log of `entries` reports, a match well
    under way. Prints their session keys, the marker each waits for, and the cup tie's last seq,
    as JSON."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session
    from django.db.models import Max

    from safeground.accounts.models import Membership, Organisation, Role, User
    from safeground.incidents.models import LogEntry, StewardPost
    from safeground.matches.models import FixtureShare

    fixture = bench_fixture()
    home = fixture.ground.organisation_id
    police = FixtureShare.objects.get(fixture=fixture, purpose=FixtureShare.Purpose.POLICE)
    zones = list(fixture.zones.order_by("zone_id").values_list("zone_id", flat=True))
    backend = settings.AUTHENTICATION_BACKENDS[-1]
    User.objects.filter(username__startswith="rc-").delete()
    made = User.objects.bulk_create(
        User(username=f"rc-{i}", password="!bench", first_name="Bench", last_name=f"Screen {i}")
        for i in range(clients)
    )
    stewards = int(clients * STEWARD_SHARE)
    control = int(clients * CONTROL_SHARE)
    memberships, posts, users = [], [], []
    sessions = []
    for i, user in enumerate(made):
        if i < stewards:
            zone = zones[i % len(zones)]
            memberships.append(Membership(user=user, organisation_id=home, role=Role.STEWARD))
            posts.append(StewardPost(fixture=fixture, steward=user, zone_id=zone))
            final = f"zone-{zone}"
        elif i < stewards + control:
            memberships.append(
                Membership(user=user, organisation_id=home, role=Role.CONTROL_OPERATOR)
            )
            final = "all"
        else:
            memberships.append(
                Membership(
                    user=user, organisation_id=police.organisation_id, role=Role.POLICE_SPOTTER
                )
            )
            final = "all"
        store = SessionStore()
        key = store._get_new_session_key()
        data = {
            SESSION_KEY: str(user.pk),
            BACKEND_SESSION_KEY: backend,
            HASH_SESSION_KEY: user.get_session_auth_hash(),
        }
        sessions.append(
            Session(
                session_key=key,
                session_data=store.encode(data),
                expire_date=store.get_expiry_date(),
            )
        )
        users.append((key, final))
    Membership.objects.bulk_create(memberships)
    StewardPost.objects.bulk_create(posts)
    Session.objects.bulk_create(sessions)
    assert Organisation.objects.filter(pk=police.organisation_id).exists()
    from safeground.incidents.services import Place, log_entry_append

    author = User.objects.get(username=DEMO_USER)
    codes = list(fixture.zones.order_by("zone_id").values_list("zone__code", flat=True))
    for i in range(LogEntry.objects.filter(fixture=fixture).count(), entries):
        log_entry_append(
            fixture=fixture,
            author=author,
            category="other",
            text=f"rc earlier report {i}",
            place=Place(zone=codes[i % len(codes)]),
            severity=2,
            idempotency_key=str(uuid.uuid4()),
        )
    last_seq = LogEntry.objects.filter(fixture=fixture).aggregate(last=Max("seq"))["last"] or 0
    print(json.dumps({"users": users, "last_seq": last_seq, "fixture": fixture.pk}))


def reconnect_write() -> None:
    """Waits for a line on stdin (the server is down), then logs what every screen must catch
    up on: a report in each of the cup tie's zones, the last of each zone's marked `rc-final
    zone-<id>`, then one for the control room and the police, `rc-final all`."""
    import django

    django.setup()
    from safeground.accounts.models import User
    from safeground.incidents.services import Place, log_entry_append

    fixture = bench_fixture()
    author = User.objects.get(username=DEMO_USER)
    zones = list(fixture.zones.order_by("zone_id").values_list("zone_id", "zone__code"))
    sys.stdin.readline()
    last = None

    def append(text: str, place: Place) -> int:
        return log_entry_append(
            fixture=fixture,
            author=author,
            category="other",
            text=text,
            place=place,
            severity=2,
            idempotency_key=str(uuid.uuid4()),
        ).seq

    for round_ in range(2):
        for zone_id, code in zones:
            final = round_ == 1
            text = f"rc-final [zone-{zone_id}]" if final else f"rc while down, zone {code}"
            last = append(text, Place(zone=code))
    last = append("rc-final [all]", Place(outside="Green Street, outside the ground"))
    print(f"written {last}", flush=True)


# --- the reference: a plain websockets broadcast server -------------------------------------


def store_of(database: Database) -> str:
    """Where plain-stored keeps its messages: the database the layers serve from."""
    if database.name == "postgresql":
        return database.env["DATABASE_URL"]
    assert database.sqlite_path is not None
    return f"sqlite:{database.sqlite_path}"


def serve_plain(port: int, trigger_port: int, store: str = "") -> None:
    try:
        import uvloop

        uvloop.run(_serve_plain(port, trigger_port, store))
    except ImportError:  # pragma: no cover
        asyncio.run(_serve_plain(port, trigger_port, store))


async def _stored(store: str) -> Any:
    """plain-stored's write: each message INSERTed and COMMITted, durable, before it is sent
    (as Safeground publishes only after its commit), with nothing else a report does: no HTTP,
    no login, no chain. PostgreSQL on a connection of the trigger's own on the event loop;
    SQLite as the default install keeps it (WAL, synchronous=NORMAL), on a thread."""
    table = "CREATE TABLE IF NOT EXISTS bench_plain_stored (id {key}, body TEXT NOT NULL)"
    insert_sql = "INSERT INTO bench_plain_stored (body) VALUES (?)"
    if store.startswith("sqlite:"):
        import sqlite3

        db = sqlite3.connect(store.removeprefix("sqlite:"), check_same_thread=False)
        db.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        db.execute(table.format(key="INTEGER PRIMARY KEY"))
        lock = asyncio.Lock()

        def insert(body: str) -> None:
            with db:
                db.execute(insert_sql, (body,))

        async def write(body: str) -> None:
            async with lock:
                await asyncio.to_thread(insert, body)

        async def shared() -> Any:
            return write

        return shared

    import psycopg

    async with await psycopg.AsyncConnection.connect(store, autocommit=True) as setup:
        await setup.execute(table.format(key="BIGSERIAL PRIMARY KEY"))

    async def writer() -> Any:
        connection = await psycopg.AsyncConnection.connect(store)

        async def write(body: str) -> None:
            async with connection.transaction():
                await connection.execute(insert_sql.replace("?", "%s"), (body,))

        return write

    return writer


async def _serve_plain(port: int, trigger_port: int, store: str = "") -> None:
    from websockets.asyncio.server import broadcast, serve

    connected: set[Any] = set()
    hello = json.dumps({"type": "hello", "fixture": 1, "seq": None, "data": {}})

    async def handler(ws: Any) -> None:
        connected.add(ws)
        try:
            await ws.send(hello)
            await ws.wait_closed()
        finally:
            connected.discard(ws)

    writer_for = await _stored(store) if store else None

    async def trigger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        write = await writer_for() if writer_for is not None else None
        while line := await reader.readline():
            message = line.decode().rstrip("\n")
            if write is not None:
                await write(message)
            broadcast(connected, message)
            writer.write(b"ok\n")

    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(
            serve(handler, "127.0.0.1", port, compression=None, backlog=4096)
        )
        if trigger_port:  # the reconnect peer needs no trigger
            await stack.enter_async_context(
                await asyncio.start_server(trigger, "127.0.0.1", trigger_port)
            )
        await asyncio.get_running_loop().create_future()


def bench_fixture() -> Any:
    """The cup tie the fan-out's sockets watch: the first of the fixtures against Chelsea, as
    `GET /api/fixtures` lists them (the demo also has a rerun of it today)."""
    from safeground.matches.models import Fixture

    return (
        Fixture.objects.select_related("ground")
        .filter(away_club__name="Chelsea")
        .order_by("kickoff")
        .first()
    )


# --- append rate with the hash chain ----------------------------------------------------------


def measure_append_rate(database: Database, entries: int) -> str:
    done = subprocess.run(
        [PYTHON, __file__, "--append-rate", f"--entries={entries}"],
        env=server_env(database),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"append rate db={database.name}: failed\n{done.stderr.strip()[-2000:]}"
    return done.stdout.strip().replace("db=?", f"db={database.name}")


def append_rate(entries: int) -> None:
    """Entries/s through `log_entry_append` (lock, chain hash, insert, checkpoints, publish, and
    the flashpoint scoring on its thread, waited for before the clock stops) in one writer; then
    the queries one append runs and the process's CPU per append."""
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from safeground import background
    from safeground.accounts.models import User
    from safeground.incidents.services import Place, log_entry_append
    from safeground.matches.selectors import fixture_with_shares

    author = User.objects.get(username=DEMO_USER)
    fixture_id = bench_fixture().pk

    # A request's fixture is read afresh with its shares (matches.selectors), so nothing kept on
    # the object from the append before helps the next: each append gets a fresh one, read
    # before the clock starts (the request's read is not the append's).
    fresh = [fixture_with_shares(fixture_id) for _ in range(entries + 1)]

    def append(i: int) -> None:
        log_entry_append(
            fixture=fresh[i],
            author=author,
            category="missile",
            text=f"append-rate {i}",
            place=Place(block="S-L1"),
            severity=3,
            idempotency_key=str(uuid.uuid4()),
        )

    started, cpu = time.perf_counter(), time.process_time()
    marks: list[float] = []
    for i in range(entries):
        if i % 100 == 0:
            marks.append(time.perf_counter())
        append(i)
    background.settle(60)
    finished, cpu = time.perf_counter(), time.process_time() - cpu
    elapsed = finished - started
    steps = [*marks, finished]
    per_100 = ", ".join(f"{100 / (b - a):.0f}" for a, b in itertools.pairwise(steps))
    with CaptureQueriesContext(connection) as queries:
        append(entries)
    print(
        f"append rate db=? entries={entries} per_s={entries / elapsed:.0f}"
        f" queries_per_append={len(queries)}"
        f" cpu_ms_per_append={1000 * cpu / entries:.2f}"
        f" (one writer, hash chain, flashpoint scoring included; per 100 entries in turn:"
        f" {per_100}/s)"
    )


if __name__ == "__main__":
    main()
