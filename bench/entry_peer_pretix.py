"""pretix's check-in endpoint as the peer of the entry benchmark.

pretix (the open-source ticketing system) is installed from PyPI into a venv of its own under the
cache folder (`~/.cache/safeground-bench/pretix-venv`, or `$SAFEGROUND_BENCH_CACHE`), reused while
it holds the pinned version; nothing of it is committed. It is migrated and seeded once per
version (and ticket count) and kept as a ready database: a PostgreSQL template database
(`pretix_bench_tpl_<version>_<n>`) or an SQLite file in the cache folder. Each run clones it into
`pretix_bench_run_<pid>` (or a temp file), so every ticket starts unscanned.

The seed, made with Django's ORM inside pretix (bulk_create): an organizer `bench`, an event
`cuptie` (live), an admission item, a check-in list for all products, N paid orders with one
position each whose secrets (the barcodes) are `barcode(i)`, and an initialised device whose API
token is allowed to check in (a turnstile is a device in pretix too).

Served by gunicorn from the same venv: 2 workers, gthread, 4 threads (STACK.md's fair
configuration), on a free loopback port. pretix runs with its own defaults otherwise: no Redis,
no Celery (its tasks run eagerly). On SQLite it gets what Safeground's embedded default has: WAL,
IMMEDIATE transactions and a 30 s lock timeout, through a settings module wrapping pretix's own.

The endpoint: `POST /api/v1/organizers/bench/checkinrpc/redeem/`, header
`Authorization: Device <token>`, body `{"secret": ..., "lists": [id], "nonce": ...,
"datetime": ...}`
(pretix/api/views/checkin.py, CheckinRPCRedeemView); 201 `{"status": "ok", ...}` admits.

This file runs under two interpreters: the project's (the driver's side: venv, databases, server)
and the pretix venv's own for `seed`.

    .venv/bin/python bench/entry_peer_pretix.py prepare --backend postgresql --tickets 200000
    .venv/bin/python bench/entry_peer_pretix.py serve --backend sqlite --tickets 20000
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRETIX_VERSION = "2026.8.0"  # pretix 2026.8 pins Django 5.2 and supports Python 3.11-3.14
GUNICORN = "gunicorn==27.0.1"
CACHE = Path(os.environ.get("SAFEGROUND_BENCH_CACHE", "~/.cache/safeground-bench")).expanduser()
VENV = CACHE / "pretix-venv"
PG = {"host": "127.0.0.1", "port": "5432", "user": "postgres"}
PSQL = ["psql", "-h", PG["host"], "-p", PG["port"], "-U", PG["user"]]
PG_RUN_DB = f"pretix_bench_run_{os.getpid()}"  # one per run: runs never share a database
ORGANIZER, EVENT, LIST_NAME = "bench", "cuptie", "Turnstiles"
DEVICE_TOKEN = "safeground-bench-turnstile-token"  # loopback only, a throwaway database
BARCODE_SALT = "pretix-bench-"
WORKERS, THREADS = 2, 4

SETTINGS = """\
# Written by bench/entry_peer_pretix.py: pretix's settings, plus SQLite's lock handling.
from pretix.settings import *  # noqa: F401,F403
from pretix.settings import DATABASES

for _alias in DATABASES.values():
    if _alias["ENGINE"].endswith("sqlite3"):
        _alias["OPTIONS"] = {
            **_alias.get("OPTIONS", {}),
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        }
"""


def barcode(index: int) -> str:
    """The secret of ticket `index`: 32 hex characters, as random-looking as pretix's own (the
    seed computes the same in SQL)."""
    return hashlib.md5(f"{BARCODE_SALT}{index}".encode()).hexdigest()


def log(message: str) -> None:
    print(f"pretix: {message}", file=sys.stderr, flush=True)


# --- the venv ---------------------------------------------------------------------------------


def find_python() -> str:
    """A Python that pretix supports (3.11-3.14), preferring 3.12: PATH first, then pyenv's."""
    names = ["python3.12", "python3.13", "python3.11"]
    candidates = [shutil.which(name) for name in names]
    pyenv = Path(os.environ.get("PYENV_ROOT", "~/.pyenv")).expanduser() / "versions"
    for name in names:
        candidates += sorted(str(p / "bin/python") for p in pyenv.glob(name[6:] + ".*"))
    for candidate in candidates:
        if not candidate:
            continue
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(
                [candidate, "-c", "import sys, venv; print(sys.version_info[:2] >= (3, 11))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if done.returncode == 0 and done.stdout.strip() == "True":
                return candidate
    sys.exit("pretix: no Python 3.11-3.13 found (PATH or pyenv) for pretix's venv")


def installed_version(python: Path) -> str | None:
    if not python.exists():
        return None
    done = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('pretix'))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def pip_install(python: Path) -> list[str]:
    return [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]


def ensure_venv() -> Path:
    """pretix's own venv in the cache folder, with the pinned pretix and gunicorn."""
    python = VENV / "bin" / "python"
    if installed_version(python) == PRETIX_VERSION and (VENV / "bin" / "gunicorn").exists():
        return python
    if not python.exists():
        VENV.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([find_python(), "-m", "venv", str(VENV)], check=True, timeout=300)
    log(f"installing pretix {PRETIX_VERSION} into {VENV} (about 2 minutes, once)")
    subprocess.run(
        [*pip_install(python), f"pretix=={PRETIX_VERSION}", GUNICORN],
        check=True,
        timeout=1200,
    )
    return python


# --- configuration and databases ----------------------------------------------------------------


def pg_name(kind: str, tickets: int | None = None) -> str:
    version = PRETIX_VERSION.replace(".", "_")
    return f"pretix_bench_{kind}_{version}" + (f"_{tickets}" if tickets is not None else "")


def psql(sql: str, database: str = "postgres") -> str:
    done = subprocess.run(
        [*PSQL, "-d", database, "-v", "ON_ERROR_STOP=1", "-Atqc", sql],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"psql: {done.stderr.strip()}")
    return done.stdout.strip()


def pg_exists(name: str) -> bool:
    return psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'") == "1"


def pg_clone(template: str, name: str) -> None:
    psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    psql(f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY")


def postgres_available() -> bool:
    try:
        psql("SELECT 1")
    except (RuntimeError, OSError, subprocess.SubprocessError):
        return False
    return True


@dataclass
class Config:
    backend: str  # postgresql or sqlite
    database: str  # a database name or an SQLite file
    workdir: Path

    def env(self) -> dict[str, str]:
        """pretix's environment: its config file and our settings module on the path."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        data = self.workdir / "data"
        data.mkdir(exist_ok=True)
        if self.backend == "postgresql":
            database = (
                f"backend=postgresql\nname={self.database}\nuser={PG['user']}\n"
                f"host={PG['host']}\nport={PG['port']}\n"
            )
        else:
            database = f"backend=sqlite3\nname={self.database}\n"
        (self.workdir / "pretix.cfg").write_text(
            "[pretix]\ninstance_name=pretix bench\nurl=http://127.0.0.1\n"
            f"datadir={data}\n\n[database]\n{database}\n"
            "[django]\ndebug=off\nsecret=safeground-bench-not-secret\n"
        )
        (self.workdir / "pretix_bench_settings.py").write_text(SETTINGS)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PRETIX_", "PY"))
        }
        env.update(
            PRETIX_CONFIG_FILE=str(self.workdir / "pretix.cfg"),
            DJANGO_SETTINGS_MODULE="pretix_bench_settings",
            PYTHONPATH=str(self.workdir),
            PYTHONUNBUFFERED="1",
        )
        return env


def run_pretix(python: Path, config: Config, *args: str, timeout: float = 900) -> None:
    subprocess.run(
        [str(python), *args], env=config.env(), cwd=config.workdir, check=True, timeout=timeout
    )


def migrate_and_seed(python: Path, config: Config, tickets: int, migrated: bool) -> None:
    if not migrated:
        log(f"migrating a fresh {config.backend} database (4-5 minutes, once per version)")
        started = time.monotonic()
        run_pretix(python, config, "-m", "pretix", "migrate", "--no-input", "-v", "0")
        log(f"migrated in {time.monotonic() - started:.0f} s")
    started = time.monotonic()
    run_pretix(python, config, __file__, "seed", f"--tickets={tickets}")
    log(f"seeded {tickets} tickets in {time.monotonic() - started:.0f} s")


def ensure_postgres_template(python: Path, tickets: int, workdir: Path) -> str:
    """The migrated and seeded template database for this version and ticket count."""
    template = pg_name("tpl", tickets)
    if pg_exists(template):
        return template
    migrated = pg_name("mig")
    if not pg_exists(migrated):
        building = migrated + "_building"
        psql(f"DROP DATABASE IF EXISTS {building} WITH (FORCE)")
        psql(f"CREATE DATABASE {building}")
        config = Config("postgresql", building, workdir / "migrate")
        log(f"migrating a fresh PostgreSQL database {building} (4-5 minutes, once per version)")
        started = time.monotonic()
        run_pretix(python, config, "-m", "pretix", "migrate", "--no-input", "-v", "0")
        log(f"migrated in {time.monotonic() - started:.0f} s")
        psql(f"ALTER DATABASE {building} RENAME TO {migrated}")
    building = template + "_building"
    pg_clone(migrated, building)
    migrate_and_seed(python, Config("postgresql", building, workdir / "seed"), tickets, True)
    psql(f"ALTER DATABASE {building} RENAME TO {template}")
    return template


def ensure_sqlite_file(python: Path, tickets: int, workdir: Path) -> Path:
    """The migrated and seeded SQLite file for this version and ticket count, in the cache."""
    seeded = CACHE / f"pretix-{PRETIX_VERSION}-{tickets}.sqlite3"
    if seeded.exists():
        return seeded
    migrated = CACHE / f"pretix-{PRETIX_VERSION}-migrated.sqlite3"
    if not migrated.exists():
        building = workdir / "migrating.sqlite3"
        config = Config("sqlite", str(building), workdir / "migrate")
        log("migrating a fresh SQLite database (a few minutes, once per version)")
        started = time.monotonic()
        run_pretix(python, config, "-m", "pretix", "migrate", "--no-input", "-v", "0")
        log(f"migrated in {time.monotonic() - started:.0f} s")
        sqlite_checkpoint(building)
        shutil.move(building, migrated)
    building = workdir / "seeding.sqlite3"
    shutil.copyfile(migrated, building)
    migrate_and_seed(python, Config("sqlite", str(building), workdir / "seed"), tickets, True)
    sqlite_checkpoint(building)
    shutil.move(building, seeded)
    return seeded


def sqlite_checkpoint(path: Path) -> None:
    """Fold the WAL into the file, so that a copy of the file alone is the whole database."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# --- the seed (runs inside pretix's venv) -----------------------------------------------------


def insert_rows(prototype: Any, varying: dict[str, str], prefix: str, source: str) -> None:
    """INSERT ... SELECT of many rows like `prototype`, set-based (a 200,000-ticket seed takes
    seconds, where the ORM's bulk_create took minutes): every column takes the prototype's value,
    but the `varying` ones, which are SQL expressions over `source`."""
    from django.db import connection

    model = type(prototype)
    columns, expressions, params = [], [], []
    for field in model._meta.concrete_fields:
        if field.primary_key:
            continue
        columns.append(connection.ops.quote_name(field.column))
        if field.column in varying:
            expressions.append(varying[field.column])
        else:
            value = field.get_db_prep_save(field.pre_save(prototype, add=True), connection)
            expressions.append("%s")
            params.append(value)
    missing = set(varying) - {field.column for field in model._meta.concrete_fields}
    assert not missing, f"no such columns in {model._meta.db_table}: {missing}"
    sql = (
        f"{prefix} INSERT INTO {connection.ops.quote_name(model._meta.db_table)} "
        f"({', '.join(columns)}) SELECT {', '.join(expressions)} {source}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def seed(tickets: int) -> None:
    import django

    django.setup()
    from datetime import timedelta
    from decimal import Decimal

    from django.conf import settings
    from django.db import connection, transaction
    from django.utils.timezone import now
    from django_scopes import scopes_disabled
    from pretix.base.models import (
        CheckinList,
        Device,
        Event,
        Item,
        Order,
        OrderPosition,
        Organizer,
    )

    started = time.monotonic()
    with scopes_disabled(), transaction.atomic():
        organizer = Organizer.objects.filter(slug=ORGANIZER).first()
        if organizer is None:
            organizer = Organizer.objects.create(name="Bench FC", slug=ORGANIZER)
        organizer.create_default_sales_channels()
        channel = organizer.sales_channels.get(identifier="web")
        event = Event.objects.create(
            organizer=organizer,
            name="Bench FC v Rivals (cup)",
            slug=EVENT,
            date_from=now() + timedelta(hours=2),
            currency="GBP",
            live=True,
            plugins=settings.PRETIX_PLUGINS_DEFAULT,
        )
        item = Item.objects.create(
            event=event, name="Admission", default_price=Decimal("30.00"), admission=True
        )
        CheckinList.objects.create(event=event, name=LIST_NAME, all_products=True)
        Device.objects.create(
            organizer=organizer,
            name="Turnstile F03",
            all_events=True,
            initialized=now(),
            api_token=DEVICE_TOKEN,
            hardware_brand="Safeground",
            hardware_model="bench",
            software_brand="bench/load.py",
            software_version="1",
        )
        moment = now()
        order = Order(
            code="PROTO",
            status=Order.STATUS_PAID,
            organizer=organizer,
            event=event,
            email="fan@example.org",
            locale="en",
            datetime=moment,
            expires=moment + timedelta(days=30),
            total=Decimal("30.00"),
            sales_channel=channel,
            secret="proto",
        )
        position = OrderPosition(
            organizer=organizer,
            item=item,
            positionid=1,
            price=Decimal("30.00"),
            tax_rate=Decimal("0.00"),
            tax_value=Decimal("0.00"),
            attendee_name_parts={"_scheme": "full", "full_name": "Supporter"},
            attendee_name_cached="Supporter",
            secret="proto",
            pseudonymization_id="PROTO",
            web_secret="proto",
        )
        if connection.vendor == "sqlite":
            connection.ensure_connection()
            connection.connection.create_function(
                "md5", 1, lambda text: hashlib.md5(text.encode()).hexdigest(), deterministic=True
            )
        number = "CAST(s.i AS text)"
        insert_rows(
            order,
            {
                "code": f"'B' || {number}",
                "email": f"'fan' || {number} || '@example.org'",
                "secret": f"substr(md5('order-' || {number}), 1, 16)",
            },
            "WITH RECURSIVE s(i) AS "
            f"(SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {tickets - 1})",
            "FROM s",
        )
        # the ticket's number again, from its order's code
        number = "substr(o.code, 2)"
        insert_rows(
            position,
            {
                "order_id": "o.id",
                "secret": f"md5('{BARCODE_SALT}' || {number})",
                "pseudonymization_id": f"'P' || {number}",
                "web_secret": f"substr(md5('web-' || {number}), 1, 32)",
            },
            "",
            f"FROM pretixbase_order o WHERE o.event_id = {int(event.pk)}",
        )
        assert OrderPosition.objects.filter(order__event=event).count() == tickets
    print(f"seeded {tickets} tickets in {time.monotonic() - started:.1f} s", file=sys.stderr)


# --- serving ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the server did not listen on port {port}")


@dataclass
class Peer:
    """A running pretix: where to send scans and how."""

    backend: str
    tickets: int
    url: str
    headers: list[str]
    body: str
    ok: str
    process: subprocess.Popen[bytes]

    def barcodes(self, start: int, stop: int) -> list[str]:
        return [barcode(i) for i in range(start, min(stop, self.tickets))]


def list_id(config: Config) -> int:
    sql = f"SELECT id FROM pretixbase_checkinlist WHERE name = '{LIST_NAME}'"
    if config.backend == "postgresql":
        return int(psql(sql, config.database))
    with contextlib.closing(sqlite3.connect(config.database)) as db:
        return int(db.execute(sql).fetchone()[0])


@contextlib.contextmanager
def running(backend: str, tickets: int, workdir: Path | None = None) -> Iterator[Peer]:
    """pretix served by gunicorn on a fresh copy of the seeded database; all removed after."""
    python = ensure_venv()
    own_workdir = workdir is None
    workdir = workdir or Path(tempfile.mkdtemp(prefix="pretix-bench-"))
    try:
        if backend == "postgresql":
            template = ensure_postgres_template(python, tickets, workdir)
            pg_clone(template, PG_RUN_DB)
            config = Config("postgresql", PG_RUN_DB, workdir / "run")
        else:
            seeded = ensure_sqlite_file(python, tickets, workdir)
            database = workdir / "run.sqlite3"
            shutil.copyfile(seeded, database)
            config = Config("sqlite", str(database), workdir / "run")
        port = free_port()
        command = [
            str(VENV / "bin" / "gunicorn"),
            "pretix.wsgi:application",
            f"--bind=127.0.0.1:{port}",
            "--worker-class=gthread",
            f"--workers={WORKERS}",
            f"--threads={THREADS}",
            "--timeout=120",
            "--log-level=warning",
            "--max-requests=0",
        ]
        server_log = (workdir / "gunicorn.log").open("wb")
        process = subprocess.Popen(
            command, env=config.env(), cwd=config.workdir, stdout=server_log, stderr=server_log
        )
        try:
            try:
                wait_for_port(port, process)
            except RuntimeError:
                server_log.flush()
                sys.stderr.write((workdir / "gunicorn.log").read_text()[-4000:])
                raise
            yield Peer(
                backend=backend,
                tickets=tickets,
                url=f"http://127.0.0.1:{port}/api/v1/organizers/{ORGANIZER}/checkinrpc/redeem/",
                headers=[f"Authorization: Device {DEVICE_TOKEN}"],
                body=(
                    '{"secret": "{barcode}", "lists": [' + str(list_id(config)) + "], "
                    '"nonce": "{nonce}", "datetime": "{now}", "questions_supported": false}'
                ),
                ok="status=ok",
                process=process,
            )
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
            server_log.close()
    finally:
        if backend == "postgresql":
            with contextlib.suppress(RuntimeError):
                psql(f"DROP DATABASE IF EXISTS {PG_RUN_DB} WITH (FORCE)")
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def drop_cache() -> None:
    """Forget the ready databases (the venv stays)."""
    if postgres_available():
        prefix = "pretix_bench_"
        names = psql(f"SELECT datname FROM pg_database WHERE datname LIKE '{prefix}%'")
        for name in names.split():
            psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            log(f"dropped {name}")
    for path in CACHE.glob("pretix-*.sqlite3"):
        path.unlink()
        log(f"removed {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["prepare", "serve", "seed", "drop-cache"])
    parser.add_argument("--backend", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument("--tickets", type=int, default=200_000)
    parser.add_argument("--seconds", type=float, default=300, help="serve: for how long")
    args = parser.parse_args()
    if args.action == "seed":
        seed(args.tickets)
    elif args.action == "drop-cache":
        drop_cache()
    elif args.action == "prepare":
        python = ensure_venv()
        with tempfile.TemporaryDirectory(prefix="pretix-bench-") as tmp:
            if args.backend == "postgresql":
                log(f"ready: {ensure_postgres_template(python, args.tickets, Path(tmp))}")
            else:
                log(f"ready: {ensure_sqlite_file(python, args.tickets, Path(tmp))}")
    else:
        with running(args.backend, args.tickets) as peer:
            print(f"{peer.url}\n{peer.headers[0]}\n{peer.body}\nbarcode 0: {barcode(0)}")
            time.sleep(min(args.seconds, 3600))


if __name__ == "__main__":
    main()
