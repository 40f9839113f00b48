"""Entry benchmark (issue 6): turnstile scans through the real HTTP endpoint, Safeground against
pretix's check-in endpoint, on the same machine and the same database server.

For each database (PostgreSQL, then SQLite for the laptop case) and each system:

- `max`: the highest sustained scans/s: 32 connections back to back for S seconds (wrk),
- `rate`: 500 scans/s offered, open loop, for S seconds: p50/p99 including queueing,

every scan a fresh ticket (a real admit). The load generator (bench/load.py) runs in its own
process; its ceiling against a trivial server is measured first. pretix is installed, migrated and
seeded by bench/entry_peer_pretix.py (its own venv and ready databases under
~/.cache/safeground-bench; the first run takes ~7 minutes more for that).

The Safeground side runs once `src/safeground/entry/api.py` defines the scan route
(`POST /api/entry/scan`); until then it prints `entry: safeground scan endpoint not built yet`.

    .venv/bin/python bench/bench_entry.py            # both databases, 20 s runs
    .venv/bin/python bench/bench_entry.py --quick    # 5 s runs, 20,000 tickets, PostgreSQL only
    .venv/bin/python bench/bench_entry.py --no-sqlite --seconds 30 --tickets 200000
    .venv/bin/python bench/bench_entry.py --no-sqlite --only safeground --control-room 4

Last line (PostgreSQL figures; `n/a` where the Safeground side is not built):
`entry scans_per_s=N p99_ms_at_500=X pretix_scans_per_s=M ratio=R`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import entry_peer_pretix as pretix

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
LOAD = ROOT / "bench" / "load.py"
ENTRY_API = ROOT / "src" / "safeground" / "entry" / "api.py"
PG_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
SG_PG_DB = os.environ.get("SAFEGROUND_BENCH_ENTRY_DB", "safeground_bench_entry")
SG_TURNSTILE = "F03"
SG_SCAN_PATH = "/api/entry/scan"
WARMUP_SCANS = 2000
WARMUP_ROUNDS = 10
WARMUP_P99_MS = 1000

SQLITE_SETTINGS = """\
from pathlib import Path

from safeground.settings.dev import *  # noqa: F403
from safeground.settings.base import database_from_env

DATABASES = {{"default": database_from_env(Path({path!r}))}}
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 s runs, fewer tickets, no SQLite")
    parser.add_argument("--seconds", type=float, help="each measurement (default 20; quick 5)")
    parser.add_argument("--tickets", type=int, help="PostgreSQL (default 200000; quick 20000)")
    parser.add_argument("--sqlite-tickets", type=int, default=20_000)
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument("--no-postgresql", action="store_true", help="SQLite only")
    parser.add_argument("--connections", type=int, default=32, help="max: concurrent connections")
    parser.add_argument(
        "--rate",
        type=float,
        action="append",
        help="rate: scans/s offered (default 500; give it again for more runs, e.g. 200 and 500)",
    )
    parser.add_argument("--rate-connections", type=int, default=64, help="rate: connection pool")
    parser.add_argument("--only", choices=["pretix", "safeground"], help="one system only")
    parser.add_argument(
        "--control-room",
        type=int,
        default=0,
        metavar="N",
        help="Safeground: N control-room sockets open on the match while it is measured, so its "
        "live counts are read and sent as on match day (default 0)",
    )
    parser.add_argument(
        "--pg-db",
        default=SG_PG_DB,
        help="Safeground's PostgreSQL database, made and dropped by the run (default: "
        "$SAFEGROUND_BENCH_ENTRY_DB or safeground_bench_entry)",
    )
    parser.add_argument("--safeground-setup", help=argparse.SUPPRESS)  # internal: JSON args
    args = parser.parse_args()
    args.seconds = args.seconds or (5.0 if args.quick else 20.0)
    args.tickets = args.tickets or (20_000 if args.quick else 200_000)
    args.rate = args.rate or [500.0]
    if args.quick:
        args.no_sqlite = True
    return args


def main() -> None:
    args = parse_args()
    if args.safeground_setup:
        safeground_setup(**json.loads(args.safeground_setup))
        return
    load1, load5, _ = os.getloadavg()
    print(
        f"entry machine: {os.cpu_count()} cores, load average {load1:.1f} (1 min) {load5:.1f}"
        " (5 min) before the run; other work on the machine lowers every figure",
        flush=True,
    )
    ceiling = run_load(["ceiling", f"--seconds={min(args.seconds, 10)}"])
    for result in ceiling:
        print(f"entry generator {describe(result)}", flush=True)

    figures: dict[tuple[str, str], dict[str, Result]] = {}
    backends = ([] if args.no_postgresql else ["postgresql"]) + (
        [] if args.no_sqlite else ["sqlite"]
    )
    built = safeground_built()
    for backend in backends:
        tickets = args.tickets if backend == "postgresql" else args.sqlite_tickets
        if args.only != "pretix":
            if built:
                try:
                    figures["safeground", backend] = measure_safeground(args, backend, tickets)
                except (subprocess.SubprocessError, RuntimeError, OSError, ValueError) as error:
                    print(f"entry safeground db={backend}: failed: {error}", flush=True)
            else:
                print("entry: safeground scan endpoint not built yet", flush=True)
        if args.only != "safeground":
            figures["pretix", backend] = measure_pretix(args, backend, tickets)

    # The last line's figures are PostgreSQL's, or SQLite's when it ran alone.
    backend = backends[0] if backends else "postgresql"
    ours = figures.get(("safeground", backend), {})
    peer = figures.get(("pretix", backend), {})
    scans = ours["max"].ok_per_s if "max" in ours else math.nan
    p99s = " ".join(
        f"p99_ms_at_{rate:.0f}={number(ours[f'rate{rate:.0f}'].p99_ms, 1)}"
        if f"rate{rate:.0f}" in ours
        else f"p99_ms_at_{rate:.0f}=n/a"
        for rate in args.rate
    )
    peer_scans = peer["max"].ok_per_s if "max" in peer else math.nan
    ratio = scans / peer_scans if peer_scans else math.nan
    print(
        f"entry db={backend} scans_per_s={number(scans, 0)} {p99s} "
        f"pretix_scans_per_s={number(peer_scans, 1)} ratio={number(ratio, 1)}",
        flush=True,
    )


def number(value: float, digits: int) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}f}"


# --- measurements ---------------------------------------------------------------------------


@dataclass
class Result:
    data: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError as exc:
            raise AttributeError(name) from exc


def run_load(argv: list[str]) -> list[Result]:
    """bench/load.py in its own process; its JSON result (one, or a list)."""
    done = subprocess.run(
        [PYTHON, str(LOAD), *argv], capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"load.py failed ({done.returncode}): {done.stderr[-3000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return [Result(item) for item in (data if isinstance(data, list) else [data])]


def describe(result: Result) -> str:
    """One line: what was measured and its figures."""
    errors = ",".join(f"http{k}:{v}" for k, v in sorted(result.http_errors.items()))
    if result.socket_errors:
        errors += ("," if errors else "") + f"socket:{result.socket_errors}"
    offered = f" offered={result.offered_rps:.0f}/s" if result.offered_rps else ""
    unfinished = f" unfinished={result.unfinished}" if result.unfinished else ""
    reasons = ",".join(f"{k}:{v}" for k, v in sorted(result.refused_reasons.items()))
    refused = f"{result.refused}" + (f"({reasons})" if reasons else "")
    cpu = f" client_cpu_us_per_req={1e6 * result.client_cpu_s / max(result.sent, 1):.0f}"
    return (
        f"{result.mode}{offered} engine={result.engine} seconds={result.seconds:.1f} "
        f"req_per_s={result.rps:.1f} admits_per_s={result.ok_per_s:.1f} "
        f"p50_ms={number(result.p50_ms, 1)} p99_ms={number(result.p99_ms, 1)} "
        f"refused={refused} errors={errors or 0}{unfinished}"
        + (cpu if result.mode.startswith("ceiling") else "")
    )


def measure(
    args: argparse.Namespace,
    label: str,
    url: str,
    headers: list[str],
    body: str,
    ok: str,
    barcodes: list[str],
    server_pids: list[int],
) -> dict[str, Result]:
    """Warm-up, then `max` and `rate`, each on barcodes never scanned before."""
    common = [f"--url={url}", f"--body={body}", f"--ok={ok}"]
    for header in headers:
        common += ["-H", header]
    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix="bench-entry-") as tmp:
        cursor = 0

        def codes(count: int) -> str:
            nonlocal cursor
            path = Path(tmp) / f"codes-{cursor}.txt"
            path.write_text("".join(f"{code}\n" for code in barcodes[cursor : cursor + count]))
            return str(path)

        # warm-up: every worker's first requests are slow (imports, caches; pretix's take seconds):
        # short bursts until the server answers steadily, bounded
        for _ in range(WARMUP_ROUNDS):
            warm_codes = f"--barcodes={codes(WARMUP_SCANS)}"
            (warm,) = run_load(
                ["max", *common, warm_codes, "--seconds=2", "--engine=python", "--connections=16"]
            )
            cursor += warm.barcodes_used
            if warm.ok and warm.p99_ms < WARMUP_P99_MS and not warm.http_errors:
                break
        else:
            print(f"entry {label}: still slow after warm-up: {describe(warm)}", flush=True)
        # Tickets kept back for the rate runs after `max`.
        wanted = int(sum(args.rate) * args.seconds)
        for mode, rate in [("max", 0.0)] + [("rate", rate) for rate in args.rate]:
            available = len(barcodes) - cursor - (wanted if mode == "max" else 0)
            if available <= 0:
                print(f"entry {label}: out of tickets for {mode}; raise --tickets", flush=True)
                continue
            cpu_before = cpu_of(server_pids)
            argv = [mode, *common, f"--barcodes={codes(available)}", f"--seconds={args.seconds}"]
            if mode == "max":
                argv.append(f"--connections={args.connections}")
            else:
                argv += [f"--rate={rate}", f"--connections={args.rate_connections}"]
                wanted -= int(rate * args.seconds)
            (result,) = run_load(argv)
            cursor += result.barcodes_used
            server_cpu = cpu_of(server_pids) - cpu_before
            answered = result.rps * result.seconds
            per_request = f" server_cpu_ms_per_req={1000 * server_cpu / max(answered, 1):.2f}"
            print(f"entry {label} {describe(result)}{per_request}", flush=True)
            results[mode if mode == "max" else f"rate{rate:.0f}"] = result
    return results


def cpu_of(pids: list[int]) -> float:
    """CPU seconds used so far by these processes and their children (from /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    seen: set[int] = set()
    todo = list(pids)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(stat[11]) + int(stat[12])) / tick
            for task in Path(f"/proc/{pid}/task").iterdir():
                children = (task / "children").read_text().split()
                todo.extend(int(child) for child in children)
    return total


def measure_pretix(args: argparse.Namespace, backend: str, tickets: int) -> dict[str, Result]:
    if backend == "postgresql" and not pretix.postgres_available():
        print("entry pretix db=postgresql: skipped (no PostgreSQL on 127.0.0.1:5432)")
        return {}
    with pretix.running(backend, tickets) as peer:
        label = f"pretix db={backend} tickets={tickets}"
        return measure(
            args,
            label,
            peer.url,
            peer.headers,
            peer.body,
            peer.ok,
            peer.barcodes(0, tickets),
            [peer.process.pid],
        )


# --- the Safeground side --------------------------------------------------------------------


def safeground_built() -> bool:
    if not ENTRY_API.exists():
        return False
    text = ENTRY_API.read_text()
    return "entry/scan" in text or 'url_name="entry_scan"' in text


def server_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="safeground.settings.dev",
        SAFEGROUND_REQUIRE_2FA="false",
        LOG_LEVEL="WARNING",
        DEBUG="false",
    )
    env.update(extra)
    return env


def psql(sql: str) -> None:
    subprocess.run(
        ["psql", PG_ADMIN_URL, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True,
        capture_output=True,
        timeout=300,
    )


@contextlib.contextmanager
def safeground_database(backend: str, workdir: Path, pg_db: str) -> Iterator[dict[str, str]]:
    if backend == "postgresql":
        psql(f"DROP DATABASE IF EXISTS {pg_db} WITH (FORCE)")
        psql(f"CREATE DATABASE {pg_db}")
        try:
            yield {"DATABASE_URL": PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + pg_db}
        finally:
            with contextlib.suppress(subprocess.SubprocessError):
                psql(f"DROP DATABASE IF EXISTS {pg_db} WITH (FORCE)")
    else:
        settings_dir = workdir / "settings"
        settings_dir.mkdir()
        path = workdir / "safeground.sqlite3"
        (settings_dir / "bench_entry_settings.py").write_text(
            SQLITE_SETTINGS.format(path=str(path))
        )
        # Beside the caller's PYTHONPATH (a worktree's src measured instead of the installed one).
        path_list = os.pathsep.join(filter(None, [str(settings_dir), os.environ.get("PYTHONPATH")]))
        yield {"DJANGO_SETTINGS_MODULE": "bench_entry_settings", "PYTHONPATH": path_list}


def safeground_setup(tickets: int, out: str) -> None:
    """Inside Safeground's Django: the demo, its cup tie kicking off in an hour, N admit-able
    tickets for it in the blocks of turnstile F03's gate (of the end that gate lets in), and a
    turnstile device key. Written against the register issue's models; adjust here if the scan
    endpoint needs more."""
    import django

    django.setup()
    from datetime import date, timedelta

    from django.utils import timezone

    from safeground.accounts.models import Organisation
    from safeground.accounts.services import device_create
    from safeground.demo.season import CUP_TIE_OPPONENT, HOME_ORG, demo_is_loaded, demo_load
    from safeground.entry.models import Ticket
    from safeground.matches.models import Fixture
    from safeground.venues.models import Turnstile

    if not demo_is_loaded():
        demo_load()
    fixture = Fixture.objects.filter(away_club__name__icontains=CUP_TIE_OPPONENT).first()
    assert fixture is not None, "the demo's cup tie is missing"
    # the scan's match is the one whose kick-off is nearest the time scanned: kick off in an hour
    # (a throwaway database), nearer than any other match at the ground
    Fixture.objects.filter(pk=fixture.pk).update(kickoff=timezone.now() + timedelta(hours=1))
    turnstiles = Turnstile.objects.filter(gate__ground=fixture.ground).select_related("gate")
    turnstile = turnstiles.filter(code=SG_TURNSTILE).first() or turnstiles.first()
    assert turnstile is not None, "the demo ground has no turnstiles"
    blocks = list(turnstile.gate.blocks.all())
    assert blocks, f"gate {turnstile.gate} serves no blocks"
    end = Ticket.End.HOME
    with contextlib.suppress(ImportError, AttributeError):
        from safeground.entry.runtime.lookups import gate_ends

        ends = gate_ends(fixture.pk, turnstile.gate_id)
        end = Ticket.End.HOME if ends.home or not ends.away else Ticket.End.AWAY
    moment = timezone.now()
    barcodes = [f"SGB{i:010d}" for i in range(tickets)]
    Ticket.objects.filter(fixture=fixture, barcode__startswith="SGB").delete()
    for first in range(0, tickets, 5000):
        Ticket.objects.bulk_create(
            Ticket(
                fixture=fixture,
                barcode=barcodes[i],
                holder_name=f"Bench Supporter {i}",
                holder_dob=date(1990, 1, 1),
                block=blocks[i % len(blocks)],
                row=str(1 + i // 1000 % 30),
                seat=str(1 + i % 1000),
                end=end,
                status=Ticket.Status.VALID,
                imported_at=moment,
                updated_at=moment,
            )
            for i in range(first, min(first + 5000, tickets))
        )
    organisation = Organisation.objects.get(name=HOME_ORG)
    _, key = device_create(
        organisation=organisation, name=f"bench turnstile {moment:%H%M%S}", profile="turnstile"
    )
    Path(out).write_text(
        json.dumps(
            {
                "device_key": key,
                "turnstile": turnstile.code,
                "barcodes": barcodes,
                "fixture_id": fixture.pk,
            }
        )
    )


@contextlib.contextmanager
def control_room(port: int, fixture_id: int, sockets: int) -> Iterator[dict[str, int]]:
    """`sockets` control-room sockets on the match (logged in as the demo loggist), read on a
    thread of this process while the block runs; counts the `entry.counts` frames they get."""
    heard = {"sockets": 0, "counts": 0}
    if not sockets:
        yield heard
        return
    from bench_live import ApiPublisher

    cookie = ApiPublisher(port).cookie
    stop = threading.Event()

    async def listen() -> None:
        from websockets.asyncio.client import connect

        url = f"ws://127.0.0.1:{port}/ws/fixtures/{fixture_id}/"
        opened = [
            await connect(url, origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
                          additional_headers={"Cookie": cookie}, ping_interval=None)
            for _ in range(sockets)
        ]  # fmt: skip
        heard["sockets"] = len(opened)

        async def read(ws: Any) -> None:
            with contextlib.suppress(Exception):
                async for message in ws:
                    if json.loads(message).get("type") == "entry.counts":
                        heard["counts"] += 1

        readers = [asyncio.create_task(read(ws)) for ws in opened]
        while not stop.is_set():
            await asyncio.sleep(0.1)
        for ws in opened:
            await ws.close()
        await asyncio.gather(*readers)

    thread = threading.Thread(target=asyncio.run, args=(listen(),), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while heard["sockets"] < sockets and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if heard["sockets"] < sockets:
        raise RuntimeError(f"control room: {heard['sockets']} of {sockets} sockets opened")
    try:
        yield heard
    finally:
        stop.set()
        thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def measure_safeground(args: argparse.Namespace, backend: str, tickets: int) -> dict[str, Result]:
    workdir = Path(tempfile.mkdtemp(prefix="bench-entry-sg-"))
    try:
        with safeground_database(backend, workdir, args.pg_db) as db_env:
            env = server_env(db_env)
            manage = [PYTHON, "-m", "safeground.cli"]
            subprocess.run(
                [*manage, "migrate", "--no-input", "-v", "0"], env=env, check=True, timeout=600
            )
            out = workdir / "setup.json"
            setup = json.dumps({"tickets": tickets, "out": str(out)})
            subprocess.run(
                [PYTHON, __file__, f"--safeground-setup={setup}"], env=env, check=True, timeout=900
            )
            seeded = json.loads(out.read_text())
            port = free_port()
            # The shipped application (scans take its lean route), two workers as at a big ground.
            command = [
                PYTHON,
                "-m",
                "uvicorn",
                "safeground.asgi:application",
                f"--port={port}",
                "--workers=2",
                "--no-access-log",
                "--log-level=warning",
            ]
            log = (workdir / "server.log").open("wb")
            server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=log)
            try:
                pretix.wait_for_port(port, server)
                room = control_room(port, seeded["fixture_id"], args.control_room)
                body = (
                    '{"barcode": "{barcode}", "turnstile": "' + seeded["turnstile"] + '", '
                    '"scanned_at": "{now}", "nonce": "{nonce}"}'
                )
                with room as heard:
                    results = measure(
                        args,
                        f"safeground db={backend} tickets={tickets}",
                        f"http://127.0.0.1:{port}{SG_SCAN_PATH}",
                        [f"X-Device-Key: {seeded['device_key']}"],
                        body,
                        "decision=admit",
                        seeded["barcodes"],
                        [server.pid],
                    )
                if args.control_room:
                    print(
                        f"entry safeground control room: sockets={heard['sockets']} "
                        f"counts_frames={heard['counts']}",
                        flush=True,
                    )
                return results
            finally:
                server.terminate()
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait(timeout=10)
                log.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    started = time.monotonic()
    main()
    print(f"entry: done in {time.monotonic() - started:.0f} s", file=sys.stderr)
