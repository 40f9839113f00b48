"""What must hold on a ground's network (issue 40, item 2): the clients reach the server only
through the impairing proxy of bench/impair.py, one profile at a time. The server: two processes on
PostgreSQL and Redis, as bench_faults.py serves them; or, with `--sqlite`, the default install
that most clubs run (`make run`): one process on a SQLite file, no Redis (faults.OneServer).

- steward phones: each an ordered outbox as static/safeground/outbox-1.js keeps it (one report
  at a time, in the order made, an idempotency key each; a failure stops the flush, which runs
  again every RETRY_MS of steward-1.js; a POST given up after the outbox's OUTBOX_WAIT_MS);
- turnstiles: scans with a nonce each, decided from the signed bundle when the server has not
  answered within scanner-1.js's ONLINE_WAIT_MS, held off and uploaded later (faults.Load);
- control-room screens: WebSocket clients that show each log entry once and catch up with
  `?after=` on every reconnect (faults.LiveClient, as live-1.js does).

Measured: from a report made on a phone to its showing on every screen (p99), a turnstile's
decision time (an answer, the deadline, or at once while it holds off), the scans decided offline;
counted from the database: every report and scan stored once (lost, duplicated), each phone's
reports stored in the order made, no ticket admitted twice, every screen showing every entry
exactly once. One line per profile, the last field the p99 to the screens of the reports made
clear of a stall:

    network profile=P report_to_screen_p99_ms= scan_p99_ms= offline_decided= lost=0
        duplicated=0 double_admits=0 clear_p99_ms=                      (on one line)

    flock /tmp/bench.lock .venv/bin/python bench/bench_network.py                 # every profile
    .venv/bin/python bench/bench_network.py --profile crowded-4g --seconds 40 --pg-db sg_me_net
    .venv/bin/python bench/bench_network.py --sqlite --port 18800      # the default install
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import re
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import faults
from bench.impair import PROFILES

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "src" / "safeground" / "static" / "safeground"


def js_constant(script: str, name: str) -> float:
    """A constant of a page's script (`const NAME = 4000;`), so the bench follows the page."""
    found = re.search(rf"const {name} = ([\d_]+)", (STATIC / script).read_text())
    if not found:
        raise RuntimeError(f"{name} not found in {script}")
    return int(found.group(1).replace("_", "")) / 1000


SCAN_DEADLINE_S = js_constant("scanner-1.js", "ONLINE_WAIT_MS")
OUTBOX_WAIT_S = js_constant("outbox-1.js", "OUTBOX_WAIT_MS")
OUTBOX_RETRY_S = js_constant("steward-1.js", "RETRY_MS")


class Impairment:
    """bench/impair.py in a process of its own, in front of every server process."""

    def __init__(self, profile: str, pairs: list[tuple[int, int]]) -> None:
        args = [f"--pair={listen}:{upstream}" for listen, upstream in pairs]
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "impair.py"), f"--profile={profile}", *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("listening"):
            raise RuntimeError(f"the impairing proxy did not start ({self.process.poll()})")
        self.started = time.monotonic()
        self.ports = tuple(pair[0] for pair in pairs)

    def stop(self) -> None:
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)
        if self.process.poll() is None:
            self.process.kill()


class Phone:
    """A steward's phone: its outbox, in order, one report at a time."""

    def __init__(self, load: faults.Load, ports: tuple[int, ...], number: int) -> None:
        self.load = load
        self.proxy = faults.ReverseProxy(ports)  # its own connections: its own share of the link
        self.number = number
        self.outbox: list[faults.Sent] = []
        self.made: list[faults.Sent] = []
        self.wake = asyncio.Event()

    def report(self, item: faults.Sent) -> None:
        self.outbox.append(item)
        self.made.append(item)
        self.wake.set()

    async def run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), OUTBOX_RETRY_S)
            self.wake.clear()
            while self.outbox and await self.send(self.outbox[0]):
                self.outbox.pop(0)

    async def send(self, item: faults.Sent) -> bool:
        """True when the report left the outbox (stored, or refused and shown as refused)."""
        load = self.load
        item.attempts += 1
        headers = {
            "Content-Type": "application/json",
            "Cookie": load.cookie_header(),
            "X-CSRFToken": load.cookies["csrftoken"],
        }
        path = f"/api/fixtures/{load.setup.fixture_id}/log"
        began = time.monotonic()
        answer: faults.Answer | None = None
        port: int | None = None
        with contextlib.suppress(faults.NoAnswer):
            port, answer = await self.proxy.request("POST", path, headers, item.body, OUTBOX_WAIT_S)
        status = answer.status if answer else None
        load.attempts.append(
            faults.Attempt("entry", began - load.t0, time.monotonic() - began, port, status, None)
        )
        if answer is not None and status in (200, 201):
            item.acked = answer.json()["seq"]
            item.acked_at = time.monotonic() - load.t0
            return True
        # Refused (a 4xx): kept in the refused list, never sent again. Anything else: kept in its
        # place, the flush stops and runs again later.
        return answer is not None and status is not None and 400 <= status < 500 and status != 429


class Screen(faults.LiveClient):
    """A control-room screen that notes when it first showed each entry."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.shown_at: dict[int, float] = {}

    def receive(self, text: str | bytes) -> None:
        before = len(self.shown)
        super().receive(text)
        if len(self.shown) > before:
            self.shown_at[self.shown[-1]] = time.monotonic()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def run_profile(
    cluster: faults.Cluster | faults.OneServer, profile: str, args: argparse.Namespace
) -> dict[str, Any]:
    assert cluster.setup is not None
    proxied = tuple(args.port + 10 + n for n in range(len(cluster.ports)))
    load = faults.Load(cluster, scan_rate=args.scan_rate, entry_rate=0)
    load.scan_timeout = SCAN_DEADLINE_S
    await load.log_in()  # before the network is impaired: a steward logged in at the gate
    impairment = Impairment(profile, list(zip(proxied, cluster.ports, strict=True)))
    try:
        load.proxy = faults.ReverseProxy(proxied)
        live = faults.LiveClients(cluster, 0, load.cookie_header())
        live.clients = [
            Screen(proxied, home % 2, cluster.setup.fixture_id, load.cookie_header())
            for home in range(args.screens)
        ]
        await live.start(timeout=60)
        phones = [Phone(load, proxied, n) for n in range(args.phones)]
        runners = [asyncio.create_task(phone.run()) for phone in phones]
        seconds = args.seconds
        stall = PROFILES[profile]
        if stall.stall_first_s is not None and stall.stall_every_s is None:
            # A one-off stall (the blackout): load until 10 s after it, so its end is measured.
            seconds = max(seconds, stall.stall_first_s + stall.stall_s + 10)
        load.t0 = time.monotonic()

        async def reports() -> None:
            made = 0
            while (now := time.monotonic() - load.t0) < seconds:
                while made < now * args.entry_rate:
                    item = load.new_entry(made)
                    item.offered_at = now
                    load.sent.append(item)
                    phones[made % len(phones)].report(item)
                    made += 1
                await asyncio.sleep(0.01)

        await asyncio.gather(load.offer(seconds), reports())
        deadline = time.monotonic() + args.drain_seconds
        drained = await load.drain(args.drain_seconds)
        while any(phone.outbox for phone in phones) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        for task in runners:
            task.cancel()
        expected = await asyncio.to_thread(faults.entries_expected, cluster)
        await live.settle(expected, timeout=30)
        await live.stop()
    finally:
        impairment.stop()

    report = faults.Report()
    plan = faults.Timeline(0, 0, 0, 0, seconds)
    faults.count(report, cluster, load, live, expected, {}, plan)
    if not drained or any(phone.outbox for phone in phones):
        report.problems.append(f"not all sent within {args.drain_seconds:.0f} s of the load")

    setup = cluster.setup
    with cluster.database() as db:
        stored = dict(
            db.execute(
                "SELECT idempotency_key, min(seq) FROM incidents_logentry WHERE fixture_id = %s"
                " AND idempotency_key LIKE 'faults-%%' GROUP BY idempotency_key",
                (setup.fixture_id,),
            ).fetchall()
        )
        (double_admits,) = db.execute(
            "SELECT count(*) FROM (SELECT ticket_id FROM entry_scan s JOIN entry_ticket t"
            " ON t.id = s.ticket_id WHERE t.fixture_id = %s AND s.decision = 'admit'"
            " AND s.direction = 'in' GROUP BY ticket_id HAVING count(*) > 1) twice",
            (setup.fixture_id,),
        ).fetchone()
    out_of_order = 0
    for phone in phones:
        seqs = [stored[item.key] for item in phone.made if item.key in stored]
        out_of_order += sum(1 for a, b in itertools.pairwise(seqs) if b < a)
    never_stored = report.scans["offered"] - report.scans["stored"]
    never_stored += report.entries["offered"] - report.entries["stored"]

    # From the report made (on the phone) to its showing, on every screen; and the same for the
    # reports made clear of a stall (no byte crosses a stalled link: those wait for its end).
    def clear_of_stalls(at: float) -> bool:
        since_proxy = load.t0 + at - impairment.started
        return all(stall.stall_end(since_proxy + d / 2) is None for d in range(5))

    to_screen, to_screen_clear = [], []
    for item in load.sent:
        if item.kind != "entry" or item.acked is None:
            continue
        for screen in live.clients:
            if isinstance(screen, Screen) and item.acked in screen.shown_at:
                took = screen.shown_at[item.acked] - (load.t0 + item.offered_at)
                to_screen.append(took)
                if clear_of_stalls(item.offered_at):
                    to_screen_clear.append(took)
    # A turnstile's decision: the server's answer, the deadline (then the bundle's), or at once
    # from the bundle while it holds off.
    decided = [min(a.took, SCAN_DEADLINE_S) for a in load.attempts if a.kind == "scan"]
    decided += [0.0] * load.held
    answered = [a.took for a in load.attempts if a.kind == "scan" and a.status == 200]
    answered_clear = [
        a.took
        for a in load.attempts
        if a.kind == "scan" and a.status == 200 and clear_of_stalls(a.sent_at)
    ]
    offline = sum(1 for item in load.sent if item.kind == "scan" and item.offline)
    offline += sum(1 for item in load.offline)  # decided offline, never uploaded
    return {
        "profile": profile,
        "seconds": seconds,
        "report": report,
        "to_screen_p50": percentile(to_screen, 0.5),
        "to_screen_p99": percentile(to_screen, 0.99),
        "to_screen_max": max(to_screen, default=float("nan")),
        "to_screen_clear_p99": percentile(to_screen_clear, 0.99),
        "answered_clear_p99": percentile(answered_clear, 0.99),
        "scan_p99": percentile(decided, 0.99),
        "answered_p50": percentile(answered, 0.5),
        "answered_p99": percentile(answered, 0.99),
        "offline": offline,
        "lost": report.lost + never_stored,
        "duplicated": report.duplicated,
        "double_admits": int(double_admits),
        "out_of_order": out_of_order,
        "resends": sum(item.attempts - 1 for item in load.sent if item.kind == "entry"),
    }


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--profile",
        action="append",
        choices=sorted(PROFILES),
        help="repeatable; default: ground-wifi, crowded-4g, dropping, blackout",
    )
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="of load (default 60; blackout: 80)"
    )
    parser.add_argument("--scan-rate", type=float, default=20.0, help="scans/s (default 20)")
    parser.add_argument("--entry-rate", type=float, default=2.0, help="reports/s (default 2)")
    parser.add_argument("--phones", type=int, default=10, help="steward phones (default 10)")
    parser.add_argument("--screens", type=int, default=10, help="control-room screens")
    parser.add_argument("--drain-seconds", type=float, default=90.0)
    parser.add_argument(
        "--sqlite",
        action="store_true",
        help="the default install: one process on a SQLite file, no Redis",
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres",
    )
    parser.add_argument("--pg-db", default=os.environ.get("BENCH_NETWORK_PG_DB", "sg_bench_net"))
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_NETWORK_REDIS_URL")
        or os.environ.get("REDIS_URL")
        or "redis://127.0.0.1:6379/0",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=18700,
        help="servers at PORT, PORT+1 (--sqlite: PORT); proxy +10, +11",
    )
    return parser.parse_args()


def served(args: argparse.Namespace) -> faults.Cluster | faults.OneServer:
    """The servers of one profile's run, started over a database of their own."""
    tickets = int(max(args.seconds, 80.0) * args.scan_rate * 1.1) + 100
    if args.sqlite:
        one = faults.OneServer(port=args.port, prefix="safeground-network-")
        try:
            began = time.monotonic()
            one.prepare(tickets)
            print(f"  SQLite database ready in {time.monotonic() - began:.0f} s", flush=True)
            one.start()
        except BaseException:
            one.close()
            raise
        return one
    cluster = faults.Cluster.from_args(args, tickets=tickets)
    try:
        cluster.direct = True  # the network under test is the clients', not the database's
        cluster.prepare(template=True)
        cluster.start()
    except BaseException:
        cluster.close()
        raise
    return cluster


def main() -> None:
    args = parse_args()
    if not args.sqlite and not args.database_url.startswith(("postgres://", "postgresql://")):
        sys.exit("--database-url: a postgres:// URL is needed (two processes share PostgreSQL)")
    profiles = args.profile or ["ground-wifi", "crowded-4g", "dropping", "blackout"]
    if args.sqlite:
        servers = (
            f"one process on SQLite (the default install: a file of its own, no Redis) on port"
            f" {args.port}"
        )
    else:
        servers = (
            f"two processes on PostgreSQL {args.pg_db} at"
            f" {urllib.parse.urlsplit(args.database_url).hostname} and Redis {args.redis_url} on"
            f" ports {args.port}, {args.port + 1}"
        )
    print(
        f"network: {servers}, behind bench/impair.py; scanner deadline {SCAN_DEADLINE_S:.1f} s"
        f" (scanner-1.js), outbox wait {OUTBOX_WAIT_S:.0f} s, resend every"
        f" {OUTBOX_RETRY_S:.0f} s",
        flush=True,
    )
    lines = []
    for profile in profiles:
        cluster = served(args)
        try:
            print(f"== {profile} ({PROFILES[profile]}), load average {load_average()}")
            run: Any = asyncio.run
            with contextlib.suppress(ImportError):
                import uvloop

                run = uvloop.run
            result = run(run_profile(cluster, profile, args))
            errors = cluster.server_errors()
        finally:
            cluster.close()
        report = result["report"]
        for line in report.lines()[:4]:
            print(line)
        print(
            f"  to the screens p50/p99/max ms: {1000 * result['to_screen_p50']:.0f}/"
            f"{1000 * result['to_screen_p99']:.0f}/{1000 * result['to_screen_max']:.0f};"
            f" scan answers p50/p99 ms: {1000 * result['answered_p50']:.0f}/"
            f"{1000 * result['answered_p99']:.0f}; report resends {result['resends']};"
            f" out of order {result['out_of_order']}; load {result['seconds']:.0f} s"
        )
        print(
            "  clear of stalls: to the screens p99"
            f" {1000 * result['to_screen_clear_p99']:.0f} ms, scan answers p99"
            f" {1000 * result['answered_clear_p99']:.0f} ms"
        )
        for problem in report.problems:
            print(f"  PROBLEM: {problem}")
        if errors:
            print(f"  server tracebacks:\n{errors}")
        print(f"  load average after: {load_average()}")
        line = (
            f"network profile={profile}"
            f" report_to_screen_p99_ms={1000 * result['to_screen_p99']:.0f}"
            f" scan_p99_ms={1000 * result['scan_p99']:.0f}"
            f" offline_decided={result['offline']} lost={result['lost']}"
            f" duplicated={result['duplicated']} double_admits={result['double_admits']}"
            f" clear_p99_ms={1000 * result['to_screen_clear_p99']:.0f}"
        )
        lines.append(line)
        print(line, flush=True)
    if len(lines) > 1:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
