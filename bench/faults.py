"""Two server processes under faults: the shared machinery of `bench/bench_faults.py` and
`tests/scaleout/` (issue 17, parts 1 and 2).

A `Cluster` is two `safeground serve` processes (separate OS processes, ports `port` and
`port + 1`) over one PostgreSQL database of its own (made, migrated, the demo loaded through the
CLI, dropped at the end) and one Redis, each reaching PostgreSQL through a TCP proxy in a process
of its own (`DbProxy`) that can cut every connection and refuse new ones, as a restart would,
without touching the shared server. A `OneServer` is the default install's single process
(`make run`: a SQLite file, no Redis) or one process on PostgreSQL, with the same interface, so the
same load and counts drive either (bench_network.py's `--sqlite`, bench_soak.py).

`run_faults` drives it as a reverse proxy and real clients would:

- scans at `scan_rate`/s (a device key, a fresh nonce each, a ticket of the match each) and log
  entries at `entry_rate`/s (the demo loggist's session, an idempotency key each), each request to
  the next process in turn; a refused connection goes to the other process at once (nginx's
  `proxy_next_upstream error`); a request that got no answer (reset, timeout) or a 5xx is sent
  again later with the SAME nonce or key, as the scanner's and the steward's outboxes do;
- WebSocket clients on both processes that behave as `static/safeground/live-1.js` does: a frame
  whose seq is not above the last one shown is not shown; on any close they reconnect, to their
  own process or else the other, with `?after=<last seq>`;
- mid-run one process is killed with SIGKILL and started again a few seconds later (a
  supervisor); later PostgreSQL is cut for `outage_s` through the proxy (or, with
  `restart_postgres`, the real server is restarted with pg_ctlcluster);
- at the end the retries are drained, then everything is counted from the database: every
  acknowledged scan (by nonce) and entry (by key) stored exactly once, none stored twice, every
  ticket's `inside` agreeing with its admissions (nothing half-written), every socket client
  shown every entry exactly once, and `safeground verify-log` passing for the match.

Nothing here is assumed: lost and duplicated are counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
LOGGIST, PASSWORD = "loggist", "matchday-demo"  # the demo's (safeground demo prints them)
TICKET_PREFIX = "FLT"
RECORD_KINDS = ("broadcast", "post", "photo")  # chained records: no log.entry frame (incidents)
SCAN_TIMEOUT_S = 5.0  # a turnstile gives up on an answer (the server's deadline is 2 s)
ENTRY_TIMEOUT_S = 10.0  # a phone gives up on an answer (the server waits 5 s for the database)
CONNECT_TIMEOUT_S = 2.0
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 8.0
UPLOAD_MAX = 500  # scans in one offline upload (the scanner's UPLOAD_MAX)
UPLOAD_EVERY_S = 2.0
SCANNERS = 100  # turnstiles the scans come from, in turn: each backs off on its own
JITTER = 0.5  # a wait told or chosen is stretched by up to half again, so clients spread out


def jittered(seconds: float) -> float:
    return seconds * (1 + random.random() * JITTER)


def asked_wait(answer: Answer | None) -> float | None:
    """The seconds a 503 or 429 asks for (Retry-After in seconds), if any."""
    said = answer.headers.get("retry-after", "") if answer is not None else ""
    return float(said) if said.isdigit() else None


# --- the database, the servers and the proxy ----------------------------------------------------


def pg_url_parts(url: str) -> dict[str, Any]:
    parts = urllib.parse.urlsplit(url)
    return {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or 5432,
        "user": urllib.parse.unquote(parts.username or "postgres"),
        "password": urllib.parse.unquote(parts.password or ""),
        "dbname": parts.path.lstrip("/"),
    }


def pg_url(parts: dict[str, Any], *, host: str | None = None, port: int | None = None) -> str:
    auth = urllib.parse.quote(parts["user"])
    if parts["password"]:
        auth += ":" + urllib.parse.quote(parts["password"])
    return f"postgres://{auth}@{host or parts['host']}:{port or parts['port']}/{parts['dbname']}"


def pg_connect(parts: dict[str, Any], dbname: str | None = None) -> Any:
    import psycopg

    return psycopg.connect(
        host=parts["host"],
        port=parts["port"],
        user=parts["user"],
        password=parts["password"] or None,
        dbname=dbname or parts["dbname"],
        autocommit=True,
        connect_timeout=10,
    )


def database_make(parts: dict[str, Any]) -> None:
    with pg_connect(parts, "postgres") as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{parts["dbname"]}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{parts["dbname"]}"')


def database_drop(parts: dict[str, Any]) -> None:
    with pg_connect(parts, "postgres") as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{parts["dbname"]}" WITH (FORCE)')


def port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process on port {port} exited with {process.returncode}")
        if port_open(port):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")


class DbProxy:
    """A TCP proxy to PostgreSQL in a process of its own (so the load's client, on this
    process's event loop, never slows it): `cut()` resets every connection and refuses new ones,
    as a restarting server does; `restore()` accepts again."""

    def __init__(self, port: int, upstream: tuple[str, int]) -> None:
        self.port = port
        self.process = subprocess.Popen(
            [PYTHON, __file__, "proxy", str(port), upstream[0], str(upstream[1])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._command("status")

    def _command(self, what: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(what.encode() + b"\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().decode().strip()
        if not answer:
            raise RuntimeError(f"the database proxy stopped ({self.process.poll()})")

    def cut(self) -> None:
        self._command("cut")

    def restore(self) -> None:
        self._command("open")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


def proxy_main(port: int, host: str, upstream_port: int) -> None:
    """The proxy process: commands `cut`, `open`, `status` on stdin, one answer line each."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        pairs: set[asyncio.StreamWriter] = set()
        server: asyncio.Server | None = None

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            with contextlib.suppress(Exception):
                writer.close()

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await asyncio.open_connection(host, upstream_port)
            except OSError:
                writer.transport.abort()
                return
            pairs.update((writer, up_writer))
            try:
                await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
            finally:
                pairs.discard(writer)
                pairs.discard(up_writer)

        async def listen() -> asyncio.Server:
            return await asyncio.start_server(accept, "127.0.0.1", port, reuse_address=True)

        server = await listen()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := (await reader.readline()).decode().strip():
            if line == "cut" and server is not None:
                server.close()  # new connections refused
                server = None
                for writer in list(pairs):  # every open one reset (RST), as a dying server's
                    writer.transport.abort()
                pairs.clear()
            elif line == "open" and server is None:
                server = await listen()
            sys.stdout.write(("cut" if server is None else "open") + "\n")
            sys.stdout.flush()

    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.run(main())
        return
    asyncio.run(main())


@dataclass
class Setup:
    """What the load needs, made by `setup_main` inside the served database."""

    fixture_id: int
    device_id: int
    device_key: str
    turnstile: str
    barcodes: list[str]
    block: str
    loggist_id: int


def setup_main(tickets: int, out: str) -> None:
    """Inside Django (the served database, demo loaded): the rerun cup tie kicking off in an
    hour, `tickets` valid tickets in the blocks of turnstile F03's gate, and a turnstile key."""
    import django

    django.setup()
    from datetime import date, timedelta

    from django.utils import timezone

    from safeground.accounts.models import Organisation, User
    from safeground.accounts.services import device_create
    from safeground.demo.season import HOME_ORG, rerun_find
    from safeground.entry.models import Ticket
    from safeground.entry.runtime.lookups import gate_ends
    from safeground.matches.models import Fixture
    from safeground.venues.models import Turnstile

    fixture = rerun_find()
    assert fixture is not None, "the demo's rerun of the cup tie is missing"
    kickoff = timezone.now() + timedelta(minutes=30)  # nearer than any other match there
    Fixture.objects.filter(pk=fixture.pk).update(kickoff=kickoff)
    turnstiles = Turnstile.objects.filter(gate__ground=fixture.ground).select_related("gate")
    turnstile = turnstiles.filter(code="F03").first() or turnstiles.first()
    assert turnstile is not None, "the demo ground has no turnstiles"
    blocks = list(turnstile.gate.blocks.all())
    ends = gate_ends(fixture.pk, turnstile.gate_id)
    end = Ticket.End.HOME if ends.home or not ends.away else Ticket.End.AWAY
    now = timezone.now()
    barcodes = [f"{TICKET_PREFIX}{i:09d}" for i in range(tickets)]
    Ticket.objects.bulk_create(
        (
            Ticket(
                fixture=fixture,
                barcode=barcode,
                holder_name=f"Faults Supporter {i}",
                holder_dob=date(1990, 1, 1),
                block=blocks[i % len(blocks)],
                row=str(1 + i // 1000 % 30),
                seat=str(1 + i % 1000),
                end=end,
                status=Ticket.Status.VALID,
                imported_at=now,
                updated_at=now,
            )
            for i, barcode in enumerate(barcodes)
        ),
        batch_size=5000,
    )
    device, key = device_create(
        organisation=Organisation.objects.get(name=HOME_ORG),
        name="faults turnstile",
        profile="turnstile",
    )
    setup = Setup(
        fixture_id=fixture.pk,
        device_id=device.pk,
        device_key=key,
        turnstile=turnstile.code,
        barcodes=barcodes,
        block=blocks[0].code,
        loggist_id=User.objects.get(username=LOGGIST).pk,
    )
    Path(out).write_text(json.dumps(setup.__dict__))


class Cluster:
    """Two server processes over a database of their own, each through the database proxy."""

    def __init__(
        self,
        *,
        database_url: str,
        redis_url: str,
        db_name: str,
        port: int,
        tickets: int,
        log: Any = print,
    ) -> None:
        self.pg = dict(pg_url_parts(database_url), dbname=db_name)
        self.redis_url = redis_url
        self.ports = (port, port + 1)
        self.proxy_port = port + 2
        self.tickets = tickets
        self.log = log
        self.workdir = Path(tempfile.mkdtemp(prefix="safeground-faults-"))
        self.servers: dict[int, subprocess.Popen[bytes]] = {}
        self.proxy: DbProxy | None = None
        self.setup: Setup | None = None
        self.direct = False  # the servers straight to PostgreSQL (no outage possible)

    @classmethod
    def from_args(cls, args: Any, *, tickets: int) -> Cluster:
        """A bench's cluster from its --database-url, --redis-url, --pg-db and --port, its
        progress printed as it goes."""
        return cls(
            database_url=args.database_url,
            redis_url=args.redis_url,
            db_name=args.pg_db,
            port=args.port,
            tickets=tickets,
            log=lambda line: print(line, flush=True),
        )

    def env(self, *, proxied: bool) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "REDIS_"))}
        url = pg_url(self.pg, host="127.0.0.1", port=self.proxy_port) if proxied else None
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "safeground.settings.dev",
                "DATABASE_URL": url or pg_url(self.pg),
                "REDIS_URL": self.redis_url,
                "DEBUG": "false",  # as served: no debug pages
                "SAFEGROUND_REQUIRE_2FA": "false",
                "SAFEGROUND_DEMO_TICKETS": "sample",  # the load brings its own tickets
                "SAFEGROUND_DEMO_HISTORY": "false",
                "AXES_FAILURE_LIMIT": "1000",
                "LOG_LEVEL": "ERROR",
                "SAFEGROUND_CHECKPOINT_DIR": str(self.workdir / "checkpoints"),
                "MEDIA_ROOT": str(self.workdir / "media"),
            }
        )
        return env

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return safeground_cli(self.env(proxied=False), *args)

    def prepare(self, *, template: bool = False) -> Setup:
        """Make the database, migrate it and load the demo through the CLI, then the load's
        tickets and device key. With `template`, the migrated demo is kept as a template
        database named for the code that made it (migrations and demo), and later runs copy
        it (a second instead of a minute: the test's budget)."""
        started = time.monotonic()
        made = template and self._from_template()
        if not made:
            database_make(self.pg)
            for command in (["migrate", "--no-input", "-v", "0"], ["demo"]):
                done = self.cli(*command)
                if done.returncode != 0:
                    raise RuntimeError(f"safeground {command[0]} failed: {done.stderr[-3000:]}")
            if template:
                self._keep_template()
        out = self.workdir / "setup.json"
        done = subprocess.run(
            [PYTHON, __file__, "setup", str(self.tickets), str(out)],
            env=self.env(proxied=False),
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the load's setup failed: {done.stderr[-3000:]}")
        self.setup = Setup(**json.loads(out.read_text()))
        self.log(f"  database {self.pg['dbname']} ready in {time.monotonic() - started:.0f} s")
        return self.setup

    def template_name(self) -> str:
        digest = hashlib.sha256()
        src = ROOT / "src" / "safeground"
        for path in sorted([*src.glob("*/migrations/*.py"), *src.glob("demo/**/*")]):
            if path.is_file():
                digest.update(path.relative_to(src).as_posix().encode() + path.read_bytes())
        return f"{self.pg['dbname'][:40]}_tpl_{digest.hexdigest()[:12]}"

    def _from_template(self) -> bool:
        name = self.template_name()
        with pg_connect(self.pg, "postgres") as admin:
            if not admin.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (name,)
            ).fetchone():
                return False
            admin.execute(f'DROP DATABASE IF EXISTS "{self.pg["dbname"]}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{self.pg["dbname"]}" TEMPLATE "{name}"')
        self.log(f"  database copied from the template {name}")
        return True

    def _keep_template(self) -> None:
        """The migrated demo as a template; older templates of this database are dropped."""
        name = self.template_name()
        prefix = name.rsplit("_tpl_", 1)[0] + "_tpl_"
        with pg_connect(self.pg, "postgres") as admin:
            old = admin.execute(
                "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", (prefix,)
            ).fetchall()
            for (stale,) in old:
                admin.execute(f'DROP DATABASE IF EXISTS "{stale}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.pg["dbname"]}"')

    def start(self) -> None:
        self.proxy = DbProxy(self.proxy_port, (self.pg["host"], self.pg["port"]))
        for port in self.ports:
            self.start_server(port)
        for port in self.ports:
            wait_for_port(port, self.servers[port])

    def start_server(self, port: int) -> subprocess.Popen[bytes]:
        log = (self.workdir / f"server-{port}.log").open("ab")
        process = subprocess.Popen(
            [PYTHON, "-m", "safeground.cli", "serve", f"--port={port}", "--workers=1"],
            env=self.env(proxied=not self.direct),
            cwd=ROOT,
            stdout=log,
            stderr=log,
        )
        self.servers[port] = process
        return process

    def kill(self, port: int) -> None:
        """SIGKILL: no shutdown, no goodbye to its sockets or its database connections."""
        process = self.servers[port]
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        for process in self.servers.values():
            if process.poll() is None:
                process.terminate()
        for process in self.servers.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.proxy is not None:
            self.proxy.stop()

    def outage_lines(self) -> list[str]:
        """What the servers logged of the database outage (safeground.outage), and how many
        lines they logged in all."""
        found = []
        for path in sorted(self.workdir.glob("server-*.log")):
            lines = path.read_text(errors="replace").splitlines()
            found += [f"{path.name}: {line}" for line in lines if line.startswith("database ")]
            kinds = Counter(line[:50] for line in lines if line and not line[0].isspace())
            common = ", ".join(f"{n}x {kind!r}" for kind, n in kinds.most_common(4))
            found.append(f"{path.name}: {len(lines)} lines in all; most: {common}")
        return found

    def server_errors(self) -> str:
        return server_errors(self.workdir)

    def database(self) -> Any:
        """A connection for the counts (psycopg's, `%s` placeholders), closed by `with`."""
        return pg_connect(self.pg)

    def close(self, *, drop: bool = True) -> None:
        self.stop()
        if drop:
            with contextlib.suppress(Exception):
                database_drop(self.pg)
        shutil.rmtree(self.workdir, ignore_errors=True)


def safeground_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`safeground <args>` against a bench's servers' database, its output captured."""
    return subprocess.run(
        [PYTHON, "-m", "safeground.cli", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def server_errors(workdir: Path) -> str:
    """Tracebacks the servers logged (their logs are kept in the work folder)."""
    found = []
    for path in sorted(workdir.glob("server-*.log")):
        text = path.read_text(errors="replace")
        if "Traceback" in text:
            first = text.index("Traceback")
            found.append(
                f"{path.name}: {text.count('Traceback')} tracebacks, {len(text.splitlines())}"
                f" lines; the first:\n{text[max(0, first - 300) : first + 3000]}"
            )
    return "\n".join(found)


class SqliteReads:
    """The counts' SQL, written for psycopg (`%s` placeholders, `%%` for a literal %), on a
    SQLite file: the same queries on both databases."""

    PLACEHOLDER = re.compile(r"%([s%])")

    def __init__(self, path: str) -> None:
        self.connection = sqlite3.connect(path, timeout=20)

    def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Cursor:
        sql = self.PLACEHOLDER.sub(lambda found: "?" if found[1] == "s" else "%", sql)
        return self.connection.execute(sql, params)

    def __enter__(self) -> SqliteReads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()


class OneServer:
    """One `safeground serve` process over a database of its own. By default as the default
    install (`make run`) runs: a SQLite file (WAL, bench_live's settings module), no Redis, the
    periodic jobs in the server; with `pg_db`, PostgreSQL (and Redis, with `redis_url`). It has
    Cluster's interface (ports, setup, cli, database, server_errors, close) for Load,
    LiveClients and count."""

    def __init__(
        self, *, port: int, pg_db: str = "", redis_url: str = "", prefix: str = "safeground-one-"
    ) -> None:
        from bench import bench_live  # not at the top: this file also runs as a script

        self.workdir = Path(tempfile.mkdtemp(prefix=prefix))
        self.ports = (port,)
        self.setup: Setup | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.sqlite_path = "" if pg_db else str(self.workdir / "bench.sqlite3")
        if pg_db:
            database = bench_live.postgres_database(pg_db)
            if database is None:
                raise SystemExit("PostgreSQL is not there")
            self.env = bench_live.server_env(database, redis_url=redis_url)
            self.pg_url = self.env["DATABASE_URL"]
        else:
            self.env = bench_live.server_env(bench_live.sqlite_database(self.workdir))
            self.pg_url = ""
        self.env.update(
            {
                "SAFEGROUND_DEMO_TICKETS": "sample",  # the load brings its own tickets
                "SAFEGROUND_DEMO_HISTORY": "false",
                "SAFEGROUND_PERIODIC_TASKS_IN_SERVER": "true",  # as the default install
                "LOG_LEVEL": "ERROR",
                "SAFEGROUND_CHECKPOINT_DIR": str(self.workdir / "checkpoints"),
                "MEDIA_ROOT": str(self.workdir / "media"),
            }
        )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return safeground_cli(self.env, *args)

    def prepare(self, tickets: int) -> Setup:
        """Migrate, load the demo (bench_live's), then the load's tickets and device key."""
        from bench import bench_live

        bench_live.prepare(bench_live.Database("", self.env))
        out = self.workdir / "setup.json"
        command = [PYTHON, __file__, "setup", str(tickets), str(out)]
        subprocess.run(command, env=self.env, cwd=ROOT, check=True)
        self.setup = Setup(**json.loads(out.read_text()))
        return self.setup

    def start(self) -> None:
        log = (self.workdir / f"server-{self.ports[0]}.log").open("ab")
        self.process = subprocess.Popen(
            [PYTHON, "-m", "safeground.cli", "serve", f"--port={self.ports[0]}", "--workers=1"],
            env=self.env,
            cwd=ROOT,
            stdout=log,
            stderr=log,
        )
        wait_for_port(self.ports[0], self.process)

    def database(self) -> Any:
        """A connection for the counts (`%s` placeholders on either database), closed by `with`."""
        if self.pg_url:
            import psycopg

            return psycopg.connect(self.pg_url, autocommit=True, connect_timeout=10)
        return SqliteReads(self.sqlite_path)

    def server_errors(self) -> str:
        return server_errors(self.workdir)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


@contextlib.contextmanager
def cluster(*, template: bool = False, **kwargs: Any) -> Iterator[Cluster]:
    made = Cluster(**kwargs)
    try:
        made.prepare(template=template)
        made.start()
        yield made
    finally:
        made.close()


# --- an HTTP client that behaves as a reverse proxy in front of the two processes -----------------


class NoAnswer(Exception):
    """The request may or may not have reached the server: the client must send it again."""


class Refused(NoAnswer):
    """Nothing listens on the port: the request was never sent."""


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    cookies: list[str] = field(default_factory=list)  # every Set-Cookie, in order

    def json(self) -> Any:
        return json.loads(self.body)


class Upstream:
    """Keep-alive connections to one server process."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes, timeout: float
    ) -> Answer:
        reader, writer = await self._connection()
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        head.append(f"Content-Length: {len(body)}")
        try:
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
            async with asyncio.timeout(timeout):
                answer = await _read_answer(reader)
        except (OSError, asyncio.IncompleteReadError, ValueError, TimeoutError) as error:
            writer.transport.abort()
            raise NoAnswer(f"{type(error).__name__}: {error}") from None
        if answer.headers.get("connection", "").lower() == "close":
            writer.close()
        else:
            self.idle.append((reader, writer, time.monotonic()))
        return answer

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while self.idle:
            reader, writer, since = self.idle.pop()
            # uvicorn closes a connection idle for 5 s (SAFEGROUND_KEEP_ALIVE_SECONDS): a request
            # on one it is closing would meet a reset it never saw. nginx keeps them shorter too.
            if time.monotonic() - since < 2.0 and not writer.transport.is_closing():
                return reader, writer
            writer.transport.abort()
        try:
            return await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.port), CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as error:
            raise Refused(f"{type(error).__name__}: {error}") from None

    def drop_all(self) -> None:
        for _, writer, _ in self.idle:
            writer.transport.abort()
        self.idle.clear()


async def _read_answer(reader: asyncio.StreamReader) -> Answer:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
            if name.strip().lower() == "set-cookie":
                cookies.append(value.strip())
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = b""
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            body += (await reader.readexactly(size + 2))[:-2]
        await reader.readuntil(b"\r\n")
    else:
        length = int(headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
    return Answer(status, headers, body, cookies)


class ReverseProxy:
    """Round robin over the processes; a refused connection goes to the next one at once
    (nginx's `proxy_next_upstream error`); a request already sent is never sent again here (nginx
    does not pass a non-idempotent request on): its client retries, with its nonce or key."""

    def __init__(self, ports: tuple[int, ...]) -> None:
        self.upstreams = [Upstream(port) for port in ports]
        self._turn = 0

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes, timeout: float
    ) -> tuple[int, Answer]:
        self._turn += 1
        order = self.upstreams[self._turn % 2 :] + self.upstreams[: self._turn % 2]
        for upstream in order:
            try:
                return upstream.port, await upstream.request(method, path, headers, body, timeout)
            except Refused:
                upstream.drop_all()
                continue
        raise Refused("no process accepted the connection")


# --- the load: scans, log entries and their retries ----------------------------------------------


@dataclass
class Sent:
    """One request as its client sees it, across its attempts."""

    kind: str  # "scan" or "entry"
    key: str  # the nonce or the idempotency key
    body: bytes
    attempts: int = 0
    acked: Any = None  # the decision (scan) or seq (entry) of the success answer
    acked_at: float | None = None
    offline: bool = False  # a scan acknowledged through the scanner's offline upload
    offered_at: float = 0.0  # since the load began
    scanner: int = 0  # the scanner a scan comes from


@dataclass
class Attempt:
    kind: str
    sent_at: float
    took: float
    port: int | None
    status: int | None  # None: no answer
    retry_after: str | None


@dataclass
class Timeline:
    kill_at: float
    restart_at: float
    outage_at: float
    restore_at: float
    end_at: float


@dataclass
class Report:
    scans: dict[str, int] = field(default_factory=dict)
    by_phase: list[str] = field(default_factory=list)
    cpu: dict[str, str] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    sockets: dict[str, int] = field(default_factory=dict)
    outage: dict[str, float] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    phases: dict[str, str] = field(default_factory=dict)
    acked: int = 0
    lost: int = 0
    duplicated: int = 0
    half_written: int = 0
    chains_ok: bool = False
    verify_output: str = ""
    recovery_s: float = float("nan")
    held: int = 0  # scans decided offline while their scanner held off (no request)
    problems: list[str] = field(default_factory=list)

    def last_line(self) -> str:
        return (
            f"faults acked={self.acked} lost={self.lost} duplicated={self.duplicated}"
            f" chains_ok={'yes' if self.chains_ok else 'no'}"
        )

    def lines(self) -> list[str]:
        def kv(data: dict[str, Any]) -> str:
            return " ".join(f"{k}={v}" for k, v in data.items())

        return [
            f"  scans: {kv(self.scans)}",
            f"  entries: {kv(self.entries)}",
            f"  sockets: {kv(self.sockets)}",
            f"  answers: {kv(self.statuses)}",
            *(f"    {phase}: {answers}" for phase, answers in self.phases.items()),
            "  per phase (scans offered, 503s, share decided offline; answer p50/p99 ms):",
            *(f"    {line}" for line in self.by_phase),
            f"  cpu %: {kv(self.cpu)}",
            f"  outage: {kv(self.outage)}",
            f"  recovery_seconds={self.recovery_s:.2f} half_written={self.half_written}"
            f" scans_held_offline={self.held}",
            *(f"  PROBLEM: {problem}" for problem in self.problems),
        ]


class Load:
    def __init__(
        self, cluster: Cluster | OneServer, *, scan_rate: float, entry_rate: float
    ) -> None:
        assert cluster.setup is not None
        self.cluster = cluster
        self.setup = cluster.setup
        self.proxy = ReverseProxy(cluster.ports)
        self.scan_rate = scan_rate
        self.entry_rate = entry_rate
        self.sent: list[Sent] = []
        self.attempts: list[Attempt] = []
        self.retries: asyncio.Queue[Sent] = asyncio.Queue()
        self.offline: list[Sent] = []  # the scanner's queue of scans decided offline
        self.pending: set[asyncio.Task[None]] = set()
        self.cookies: dict[str, str] = {}
        self._barcodes = iter(self.setup.barcodes)
        self.t0 = time.monotonic()
        # As static/safeground/scanner-1.js: after a 503 or 429 a scanner decides offline for
        # Retry-After (jittered) without asking the server, and its queue waits as long.
        self.scanned = 0
        self.hold_until = [0.0] * SCANNERS
        self.upload_after = 0.0
        self.held = 0  # scans decided offline without a request, while their scanner held off
        self.scan_timeout = SCAN_TIMEOUT_S  # bench_network.py: the scanner page's own deadline

    # the loggist's session, through the login page as a phone's browser gets it
    async def log_in(self) -> None:
        upstream = Upstream(self.cluster.ports[0])
        answer = await upstream.request("GET", "/login/", {}, b"", 30)
        self._cookies_from(answer)
        form = urllib.parse.urlencode(
            {
                "username": LOGGIST,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.cookies["csrftoken"],
            }
        ).encode()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": self.cookie_header(),
        }
        answer = await upstream.request("POST", "/login/", headers, form, 30)
        self._cookies_from(answer)
        upstream.drop_all()
        if answer.status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"login as {LOGGIST} failed ({answer.status})")

    def _cookies_from(self, answer: Answer) -> None:
        for value in answer.cookies:  # logging in sets a new CSRF token beside the session
            cookie, _, _ = value.partition(";")
            key, _, val = cookie.partition("=")
            self.cookies[key.strip()] = val

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def new_scan(self) -> Sent | None:
        barcode = next(self._barcodes, None)
        if barcode is None:
            return None
        nonce = str(uuid.uuid4())
        self.scanned += 1
        body = json.dumps(
            {
                "barcode": barcode,
                "turnstile": self.setup.turnstile,
                "scanned_at": datetime.now(UTC).isoformat(),  # sent again unchanged
                "nonce": nonce,
            }
        ).encode()
        return Sent("scan", nonce, body, scanner=self.scanned % SCANNERS)

    def new_entry(self, i: int) -> Sent:
        key = f"faults-{uuid.uuid4()}"
        body = json.dumps(
            {
                "category": "missile",
                "severity": 2,
                "text": f"faults {i}: coin thrown towards the buffer",
                "block": self.setup.block,
                "idempotency_key": key,
            }
        ).encode()
        return Sent("entry", key, body)

    async def send(self, item: Sent) -> None:
        if item.kind == "scan" and time.monotonic() < self.hold_until[item.scanner]:
            self.held += 1  # its scanner is holding off: decided offline, no request
            self.offline.append(item)
            return
        item.attempts += 1
        if item.kind == "scan":
            path, timeout = "/api/entry/scan", self.scan_timeout
            headers = {"Content-Type": "application/json", "X-Device-Key": self.setup.device_key}
        else:
            path, timeout = f"/api/fixtures/{self.setup.fixture_id}/log", ENTRY_TIMEOUT_S
            headers = {
                "Content-Type": "application/json",
                "Cookie": self.cookie_header(),
                "X-CSRFToken": self.cookies["csrftoken"],
            }
        began = time.monotonic()
        port: int | None = None
        answer: Answer | None = None
        with contextlib.suppress(NoAnswer):
            port, answer = await self.proxy.request("POST", path, headers, item.body, timeout)
        took = time.monotonic() - began
        status = answer.status if answer else None
        retry_after = answer.headers.get("retry-after") if answer else None
        self.attempts.append(Attempt(item.kind, began - self.t0, took, port, status, retry_after))
        if answer is not None and status in (200, 201):
            data = answer.json()
            item.acked = data["decision"] if item.kind == "scan" else data["seq"]
            item.acked_at = time.monotonic() - self.t0
            return
        if answer is not None and status is not None and 400 <= status < 500:
            item.acked = None  # refused: an answer, not a success; never sent again
            return
        # No answer, a 503 or any 5xx: kept. A scanner decides the scan offline under the same
        # nonce, queues it for its next upload and holds off for Retry-After (or 2 s with no
        # answer), jittered (static/safeground/scanner-1.js); a phone's outbox sends the entry
        # again later with the same key, after Retry-After or a doubling back-off, jittered and
        # at most RETRY_MAX_S (outbox-1.js).
        told = asked_wait(answer)
        if item.kind == "scan":
            self.offline.append(item)
            hold = min(RETRY_MAX_S, told or RETRY_FIRST_S * 2)
            self.hold_until[item.scanner] = time.monotonic() + jittered(hold)
            return
        delay = min(RETRY_MAX_S, max(told or 0.0, RETRY_FIRST_S * 2 ** (item.attempts - 1)))
        self._later(item, jittered(delay))

    async def upload_offline(self) -> None:
        """The scanner's queue, in the order scanned, 500 at a time, each batch leaving the queue
        only when the server answered it (a lost answer: the same nonces again)."""
        while self.offline and time.monotonic() >= self.upload_after:
            batch = self.offline[:UPLOAD_MAX]
            scans = []
            for item in batch:
                item.attempts += 1
                scan = json.loads(item.body)
                scans.append(dict(scan, direction="in", decision="admit", reason=""))
            began = time.monotonic()
            port: int | None = None
            answer: Answer | None = None
            headers = {"Content-Type": "application/json", "X-Device-Key": self.setup.device_key}
            body = json.dumps({"scans": scans}).encode()
            with contextlib.suppress(NoAnswer):
                port, answer = await self.proxy.request(
                    "POST", "/api/entry/offline-scans", headers, body, ENTRY_TIMEOUT_S
                )
            status = answer.status if answer else None
            said = answer.headers.get("retry-after") if answer else None
            took = time.monotonic() - began
            self.attempts.append(Attempt("upload", began - self.t0, took, port, status, said))
            if answer is None or status != 200:
                # The server is struggling: the queue waits for the next flush, and at least
                # as long as it asked (jittered).
                told = asked_wait(answer)
                if told:
                    self.upload_after = time.monotonic() + jittered(min(RETRY_MAX_S, told))
                return
            for item, result in zip(batch, answer.json()["results"], strict=True):
                item.acked = result["decision"]
                item.acked_at = time.monotonic() - self.t0
                item.offline = True
            del self.offline[: len(batch)]

    async def flush_offline(self, stop: asyncio.Event) -> None:
        """The scanner flushes its queue every UPLOAD_EVERY_S while anything is queued."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), UPLOAD_EVERY_S)
            await self.upload_offline()

    def _later(self, item: Sent, delay: float) -> None:
        async def wait_then_queue() -> None:
            await asyncio.sleep(delay)
            self.retries.put_nowait(item)

        self._spawn(wait_then_queue())

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def offer(self, seconds: float) -> None:
        """Scans and entries at their rates for `seconds` (open loop), retries as they fall due."""
        start = time.monotonic()
        scans = entries = 0
        stop = asyncio.Event()
        flusher = asyncio.create_task(self.flush_offline(stop))
        while (now := time.monotonic()) - start < seconds:
            while scans < (now - start) * self.scan_rate:
                item = self.new_scan()
                if item is None:
                    break
                scans += 1
                item.offered_at = now - self.t0
                self.sent.append(item)
                self._spawn(self.send(item))
            while entries < (now - start) * self.entry_rate:
                item = self.new_entry(entries)
                entries += 1
                item.offered_at = now - self.t0
                self.sent.append(item)
                self._spawn(self.send(item))
            while not self.retries.empty():
                self._spawn(self.send(self.retries.get_nowait()))
            await asyncio.sleep(0.005)
        stop.set()
        await flusher

    async def drain(self, timeout: float) -> bool:
        """Send the retries until every request has a success answer (or a refusal)."""
        deadline = time.monotonic() + timeout
        last_upload = 0.0
        while time.monotonic() < deadline:
            while not self.retries.empty():
                self._spawn(self.send(self.retries.get_nowait()))
            if self.offline and time.monotonic() - last_upload > UPLOAD_EVERY_S:
                last_upload = time.monotonic()
                await self.upload_offline()
            if not self.pending and self.retries.empty() and not self.offline:
                return True
            await asyncio.sleep(0.05)
        return False


# --- live clients, as static/safeground/live-1.js behaves -----------------------------------------


class LiveClient:
    def __init__(self, ports: tuple[int, ...], home: int, fixture_id: int, cookie: str) -> None:
        self.ports = ports
        self.home = home
        self.fixture_id = fixture_id
        self.cookie = cookie
        self.last_seq = 0  # live-1.js: `seq`, and ?after=seq on every (re)connect
        self.shown: list[int] = []  # log.entry seqs handed to the page (onFrame), in order
        self.hidden_repeats = 0  # frames live-1.js hides because it showed that seq before
        self.hidden_late = 0  # frames live-1.js hides although it never showed that seq
        self.connects = 0
        self.counts_frames: list[dict[str, Any]] = []
        self.connected = asyncio.Event()
        self.stopping = False

    async def run(self) -> None:
        from websockets.asyncio.client import connect

        backoff = 0.25
        attempt = 0
        while not self.stopping:
            port = self.ports[(self.home + attempt) % len(self.ports)]
            url = f"ws://127.0.0.1:{port}/ws/fixtures/{self.fixture_id}/?after={self.last_seq}"
            try:
                async with connect(
                    url,
                    origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
                    additional_headers={"Cookie": self.cookie},
                    compression=None,
                    open_timeout=5,
                    ping_interval=5,
                    ping_timeout=10,
                    max_queue=None,
                ) as ws:
                    self.connects += 1
                    backoff = 0.25
                    async for message in ws:
                        self.receive(message)
            except asyncio.CancelledError:
                raise
            except Exception:  # refused, reset, closed with a code: reconnect, as live-1.js
                pass
            self.connected.clear()
            if self.stopping:
                return
            attempt += 1  # the next process in turn: a dead one refuses at once
            await asyncio.sleep(backoff / 2 + random.random() * backoff / 2)
            backoff = min(backoff * 2, 2.0)

    def receive(self, text: str | bytes) -> None:
        frame = json.loads(text)
        kind, seq = frame.get("type"), frame.get("seq")
        if kind == "hello":
            self.connected.set()
            return
        if kind == "entry.counts":
            self.counts_frames.append(frame["data"])
        if not isinstance(seq, int):
            return
        if seq <= self.last_seq:
            if kind == "log.entry":
                if seq in self.shown:
                    self.hidden_repeats += 1
                else:
                    self.hidden_late += 1
            return
        self.last_seq = seq
        if kind == "log.entry":
            self.shown.append(seq)


class LiveClients:
    def __init__(self, cluster: Cluster | OneServer, per_process: int, cookie: str) -> None:
        assert cluster.setup is not None
        self.clients = [
            LiveClient(cluster.ports, home, cluster.setup.fixture_id, cookie)
            for home in range(len(cluster.ports))
            for _ in range(per_process)
        ]
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self, timeout: float = 30) -> None:
        self.tasks = [asyncio.create_task(client.run()) for client in self.clients]
        async with asyncio.timeout(timeout):
            await asyncio.gather(*(client.connected.wait() for client in self.clients))

    async def settle(self, expected: set[int], timeout: float) -> None:
        """Wait until every client has shown every expected entry (or the time is up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(expected <= set(client.shown) for client in self.clients):
                return
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        for client in self.clients:
            client.stopping = True
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


# --- the run ------------------------------------------------------------------------------------


def timeline(seconds: float, outage_s: float) -> Timeline:
    """When the faults happen: a kill at a quarter of the run, the restart 3 s later, the
    database outage in the middle of what is left."""
    kill_at = seconds * 0.25
    # At 60% of the run, or earlier so that 10 s of load follow the database's return.
    outage_at = max(kill_at + 8.0, min(seconds * 0.6, seconds - outage_s - 10.0))
    return Timeline(
        kill_at=kill_at,
        restart_at=kill_at + 3.0,
        outage_at=outage_at,
        restore_at=outage_at + outage_s,
        end_at=seconds,
    )


def postgres_restart() -> None:
    """Restart the real PostgreSQL server (the lead's option: it carries everyone's tests)."""
    clusters = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=True)
    version = clusters.stdout.split()[0]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=True
    )


async def run_faults(
    cluster: Cluster,
    *,
    seconds: float,
    scan_rate: float = 200,
    entry_rate: float = 20,
    sockets_per_process: int = 10,
    outage_s: float = 3.0,
    restart_postgres: bool = False,
    kill: bool = True,
    outage: bool = True,
    drain_s: float = 30.0,
) -> Report:
    assert cluster.setup is not None and cluster.proxy is not None
    log = cluster.log
    load = Load(cluster, scan_rate=scan_rate, entry_rate=entry_rate)
    await load.log_in()
    live = LiveClients(cluster, sockets_per_process, load.cookie_header())
    await live.start()
    plan = timeline(seconds, outage_s)
    marks: dict[str, float] = {}
    victim = cluster.ports[0]

    async def faults() -> None:
        if kill:
            await asyncio.sleep(plan.kill_at - (time.monotonic() - load.t0))
            cluster.kill(victim)
            marks["kill"] = time.monotonic() - load.t0
            log(f"  {marks['kill']:.1f} s: process on port {victim} killed (SIGKILL)")
            await asyncio.sleep(plan.restart_at - (time.monotonic() - load.t0))
            cluster.start_server(victim)
            marks["restart"] = time.monotonic() - load.t0
            log(f"  {marks['restart']:.1f} s: process on port {victim} started again")
            while not await asyncio.to_thread(port_open, victim):
                await asyncio.sleep(0.05)
            marks["listening"] = time.monotonic() - load.t0
            log(f"  {marks['listening']:.1f} s: process on port {victim} listening")
        if outage:
            await asyncio.sleep(plan.outage_at - (time.monotonic() - load.t0))
            marks["outage"] = time.monotonic() - load.t0
            if restart_postgres:
                await asyncio.to_thread(postgres_restart)
                log(f"  {marks['outage']:.1f} s: PostgreSQL restarted (pg_ctlcluster)")
            else:
                await asyncio.to_thread(cluster.proxy.cut)  # type: ignore[union-attr]
                log(f"  {marks['outage']:.1f} s: PostgreSQL cut (every connection reset)")
                # The cut lasts as long as planned from when it began: a restart slowed by a
                # loaded machine pushes it later, and a cut of no time would test nothing.
                until = max(plan.restore_at, marks["outage"] + plan.restore_at - plan.outage_at)
                await asyncio.sleep(until - (time.monotonic() - load.t0))
                await asyncio.to_thread(cluster.proxy.restore)  # type: ignore[union-attr]
            marks["restore"] = time.monotonic() - load.t0
            log(f"  {marks['restore']:.1f} s: PostgreSQL back")

    load.t0 = time.monotonic()
    fault_task = asyncio.create_task(faults())
    cpu = CpuSampler(cluster)
    sampler = asyncio.create_task(cpu.run(load.t0))
    await load.offer(seconds)
    await fault_task
    # Load goes on until the database has been back as long as the plan gave it, so its return
    # is measured even when the faults came late.
    tail = marks.get("restore", 0.0) + plan.end_at - plan.restore_at - (time.monotonic() - load.t0)
    if outage and tail > 0:
        await load.offer(tail)
        plan = replace(plan, end_at=time.monotonic() - load.t0)
    sampler.cancel()
    drained = await load.drain(drain_s)
    report = Report()
    if not drained:
        report.problems.append(f"retries not drained within {drain_s:.0f} s")
    expected = await asyncio.to_thread(entries_expected, cluster)
    await live.settle(expected, timeout=15)
    await live.stop()
    count(report, cluster, load, live, expected, marks, plan)
    phase_report(report, load, marks, plan)
    report.held = load.held
    report.cpu = cpu.summary(phase_bounds(marks, plan))
    return report


class CpuSampler:
    """Each second, the CPU share of each server process (whichever runs on its port), the
    database proxy and this load generator (its own process: its WebSocket clients included)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.samples: list[tuple[float, dict[str, float]]] = []  # (time, name -> cpu seconds)

    @staticmethod
    def cpu_seconds(pid: int) -> float | None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def sample(self) -> dict[str, float]:
        found: dict[str, float] = {}
        pids = {f"server_{port}": p.pid for port, p in self.cluster.servers.items()}
        if self.cluster.proxy is not None:
            pids["db_proxy"] = self.cluster.proxy.process.pid
        pids["load"] = os.getpid()
        for name, pid in pids.items():
            seconds = self.cpu_seconds(pid)
            if seconds is not None:
                found[f"{name}:{pid}"] = seconds
        return found

    async def run(self, t0: float) -> None:
        while True:
            self.samples.append((time.monotonic() - t0, self.sample()))
            await asyncio.sleep(1.0)

    def summary(self, bounds: list[tuple[str, float, float]]) -> dict[str, str]:
        """Per process name, the mean CPU % of each phase (one process's pid changes when it is
        started again: each pid counts from its first sample)."""
        out: dict[str, str] = {}
        names = sorted({key.split(":")[0] for _, s in self.samples for key in s})
        for name in names:
            parts = []
            for phase, start, end in bounds:
                used = span = 0.0
                for (t1, a), (t2, b) in itertools.pairwise(self.samples):
                    if not (start <= t1 and t2 <= end):
                        continue
                    for key, value in b.items():
                        if key.split(":")[0] == name and key in a:
                            used += value - a[key]
                    span += t2 - t1
                if span:
                    parts.append(f"{phase}:{100 * used / span:.0f}")
            out[name] = ",".join(parts)
        return out


def phase_bounds(marks: dict[str, float], plan: Timeline) -> list[tuple[str, float, float]]:
    """The run's phases: before the kill, killed, the restart's first 5 s from listening, the
    rest until the database cut, the cut, after it (until the end of the load)."""
    points = [("before", 0.0)]
    if "kill" in marks:
        points.append(("killed", marks["kill"]))
    if "listening" in marks:
        points.append(("restart+5s", marks["restart"]))
        points.append(("after+5s", marks["listening"] + 5.0))
    if "outage" in marks:
        points.append(("db_cut", marks["outage"]))
        points.append(("db_back", marks["restore"]))
    ends = [start for _, start in points[1:]] + [plan.end_at]
    return [(name, start, end) for (name, start), end in zip(points, ends, strict=True)]


def phase_report(report: Report, load: Load, marks: dict[str, float], plan: Timeline) -> None:
    """Per phase: scans offered (by when they were offered), their 503s and answers that never
    came, the share of them decided offline, the p50/p99 of the success answers of scans and of
    log entries sent in the phase."""

    def pct(values: list[float], q: float) -> str:
        if not values:
            return "-"
        values.sort()
        return str(round(1000 * values[min(len(values) - 1, int(len(values) * q))]))

    for name, start, end in phase_bounds(marks, plan):
        scans = [i for i in load.sent if i.kind == "scan" and start <= i.offered_at < end]
        attempts = [a for a in load.attempts if start <= a.sent_at < end]
        offline = sum(1 for i in scans if i.offline)
        scan_ok = [a.took for a in attempts if a.kind == "scan" and a.status == 200]
        entry_ok = [a.took for a in attempts if a.kind == "entry" and a.status == 201]
        report.by_phase.append(
            f"{name} {start:.1f}-{end:.1f}s: scans={len(scans)}"
            f" scan_503={sum(1 for a in attempts if a.kind == 'scan' and a.status == 503)}"
            f" scan_none={sum(1 for a in attempts if a.kind == 'scan' and a.status is None)}"
            f" offline={100 * offline / max(1, len(scans)):.0f}%"
            f" scan_ms={pct(scan_ok, 0.5)}/{pct(scan_ok, 0.99)}"
            f" entry_503={sum(1 for a in attempts if a.kind == 'entry' and a.status == 503)}"
            f" entry_ms={pct(entry_ok, 0.5)}/{pct(entry_ok, 0.99)}"
        )


def entries_expected(cluster: Cluster | OneServer) -> set[int]:
    """The seqs of the match's log entries every control-room socket must show."""
    assert cluster.setup is not None
    kinds = ", ".join(["%s"] * len(RECORD_KINDS))
    with cluster.database() as db:
        rows = db.execute(
            f"SELECT seq FROM incidents_logentry WHERE fixture_id = %s AND kind NOT IN ({kinds})",
            (cluster.setup.fixture_id, *RECORD_KINDS),
        ).fetchall()
    return {seq for (seq,) in rows}


def count(
    report: Report,
    cluster: Cluster | OneServer,
    load: Load,
    live: LiveClients,
    expected: set[int],
    marks: dict[str, float],
    plan: Timeline,
) -> None:
    """Everything counted from the database and the clients' own records."""
    setup = cluster.setup
    assert setup is not None
    with cluster.database() as db:
        stored_scans = {
            # PostgreSQL gives a UUID, SQLite its 32 hex digits: both as the client wrote it
            str(uuid.UUID(str(nonce))): (n, decision)
            for nonce, n, decision in db.execute(
                "SELECT nonce, count(*), min(decision) FROM entry_scan WHERE device_id = %s"
                " GROUP BY nonce",
                (setup.device_id,),
            ).fetchall()
        }
        stored_entries = {
            key: (n, seq)
            for key, n, seq in db.execute(
                "SELECT idempotency_key, count(*), min(seq) FROM incidents_logentry"
                " WHERE fixture_id = %s AND author_id = %s AND idempotency_key LIKE 'faults-%%'"
                " GROUP BY idempotency_key",
                (setup.fixture_id, setup.loggist_id),
            ).fetchall()
        }
        # Nothing half-written: a ticket is inside exactly when it has an admission, and no
        # ticket was admitted twice.
        (half,) = db.execute(
            "SELECT count(*) FROM entry_ticket t WHERE t.fixture_id = %s AND t.barcode LIKE %s"
            " AND (t.inside <> EXISTS (SELECT 1 FROM entry_scan s WHERE s.ticket_id = t.id"
            "      AND s.decision = 'admit')"
            "  OR (SELECT count(*) FROM entry_scan s WHERE s.ticket_id = t.id"
            "      AND s.decision = 'admit') > 1)",
            (setup.fixture_id, TICKET_PREFIX + "%"),
        ).fetchone()
    report.half_written = int(half)

    lost = duplicated = 0
    for kind, stored, tally in (
        ("scan", stored_scans, report.scans),
        ("entry", stored_entries, report.entries),
    ):
        items = [item for item in load.sent if item.kind == kind]
        acked = [item for item in items if item.acked is not None]
        retried = [item for item in items if item.attempts > 1]
        missing = [item for item in acked if item.key not in stored]
        twice = [key for key, (n, _) in stored.items() if n > 1]
        # The answer a client got is the record stored under its nonce or key.
        mismatched = [
            item for item in acked if item.key in stored and stored[item.key][1] != item.acked
        ]
        unanswered = [item for item in items if item.acked is None]
        tally.update(
            offered=len(items),
            acked=len(acked),
            retried=len(retried),
            retried_acked=sum(1 for item in retried if item.acked is not None),
            stored=sum(1 for item in items if item.key in stored),
            lost=len(missing),
            duplicated=len(twice),
            unanswered=len(unanswered),
            answer_differs=len(mismatched),
        )
        if kind == "scan":
            tally["acked_offline"] = sum(1 for item in acked if item.offline)
        lost += len(missing)
        duplicated += len(twice)
        report.acked += len(acked)
        if mismatched:
            report.problems.append(f"{len(mismatched)} {kind}s stored differently from answered")

    # Every socket client shows every entry exactly once.
    missed = sum(len(expected - set(client.shown)) for client in live.clients)
    shown_twice = sum(len(client.shown) - len(set(client.shown)) for client in live.clients)
    report.sockets = {
        "clients": len(live.clients),
        "entries": len(expected),
        "connects": sum(client.connects for client in live.clients),
        "reconnects": sum(client.connects - 1 for client in live.clients),
        "missed": missed,
        "shown_twice": shown_twice,
        "late_hidden": sum(client.hidden_late for client in live.clients),
        "repeats_hidden": sum(client.hidden_repeats for client in live.clients),
    }
    lost += missed
    duplicated += shown_twice
    report.lost, report.duplicated = lost, duplicated

    for kind, ok in (("scan", 200), ("entry", 201)):
        took = sorted(a.took for a in load.attempts if a.kind == kind and a.status == ok)
        if took:
            p50, p99 = took[len(took) // 2], took[min(len(took) - 1, int(len(took) * 0.99))]
            (report.scans if kind == "scan" else report.entries).update(
                p50_ms=round(1000 * p50), p99_ms=round(1000 * p99)
            )
    statuses = Counter(
        f"{a.kind}:{a.status if a.status is not None else 'none'}" for a in load.attempts
    )
    report.statuses = dict(sorted(statuses.items()))
    bounds = [("before", 0.0)] + [
        (name, marks[mark])
        for name, mark in (
            ("killed", "kill"),
            ("restarted", "restart"),
            ("outage", "outage"),
            ("after", "restore"),
        )
        if mark in marks
    ]
    bounds.append(("drain", plan.end_at))
    for (name, start), (_, end) in zip(bounds, [*bounds[1:], ("", float("inf"))], strict=True):
        phase = Counter(
            f"{a.kind}:{a.status if a.status is not None else 'none'}"
            for a in load.attempts
            if start <= a.sent_at < end
        )
        report.phases[f"{name}@{start:.1f}s"] = " ".join(
            f"{k}={v}" for k, v in sorted(phase.items())
        )
    outage_report(report, load, marks)

    done = cluster.cli("verify-log", "--match", str(setup.fixture_id))
    report.chains_ok = done.returncode == 0
    report.verify_output = (done.stdout + done.stderr).strip()[-2000:]
    if not report.chains_ok:
        report.problems.append(f"verify-log: {report.verify_output}")


def outage_report(report: Report, load: Load, marks: dict[str, float]) -> None:
    """During the outage: every answer a 503 with Retry-After in time (or a success), none a
    500; after it, how long until each process answers each kind with a success again."""
    if "outage" not in marks:
        return
    cut, back = marks["outage"], marks["restore"]
    during = [a for a in load.attempts if cut <= a.sent_at < back]
    unavailable = [a for a in during if a.status == 503]
    bad = [
        a
        for a in during
        if a.status is None
        or (a.status == 503 and not a.retry_after)
        or a.status not in (200, 201, 503)
    ]
    slow = [
        a
        for a in unavailable
        if a.took > (2.5 if a.kind == "scan" else 6.0)  # each one's deadline, and a little
    ]
    recovered: list[float] = []
    for port in sorted({a.port for a in load.attempts if a.port is not None}):
        for kind in ("scan", "entry"):
            first = min(
                (
                    a.sent_at + a.took
                    for a in load.attempts
                    if a.port == port
                    and a.kind == kind
                    and a.status in (200, 201)
                    and a.sent_at >= back
                ),
                default=None,
            )
            if first is not None:
                recovered.append(first - back)
                report.outage[f"back_{kind}_{port}_s"] = round(first - back, 2)
    report.recovery_s = max(recovered) if recovered else float("nan")
    report.outage |= {
        "seconds": round(back - cut, 1),
        "requests": len(during),
        "503": len(unavailable),
        "503_max_s": round(max((a.took for a in unavailable), default=0.0), 2),
        "scan_503_max_s": round(
            max((a.took for a in unavailable if a.kind == "scan"), default=0.0), 2
        ),
        "late": len(slow),
        "late_scans": sum(1 for a in slow if a.kind == "scan"),
        "bad_answers": len(bad),
    }
    if bad:
        report.problems.append(f"{len(bad)} answers during the outage were not 503/2xx")
    if slow:
        report.problems.append(f"{len(slow)} 503s came after their deadline")


def main() -> None:
    """Internal modes: `proxy PORT HOST UPSTREAM_PORT` and `setup TICKETS OUT`."""
    mode, *args = sys.argv[1:]
    if mode == "proxy":
        proxy_main(int(args[0]), args[1], int(args[2]))
    elif mode == "setup":
        setup_main(int(args[0]), args[1])
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
