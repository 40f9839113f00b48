"""Supporters' reports under a flood (issue 28): 100 reports/s for 60 s from one stand's seats and
10/s spread over the whole ground, posted to the seat pages (`/s/<code>/`) of the demo's match on
today, while 20 control-room screens are open (`--screens`; each a loggist's live socket, fetching
the queue's fragment again on `supporters.item` frames as the page does: one fetch at once, then
at most one every half second for the frames that arrived meanwhile). Each read's server CPU (the
view's own thread, from its Server-Timing header) is printed as p50 and p99.

Measured: report -> queue, from the moment a report was due to be sent (open loop: a late send
counts its wait) to the seat page's answer, which comes after the report is committed to its
item in the queue; p50 and p99. Then the number of items in the match's queue (groups): a flood
from one stand is a handful of items (its blocks by the categories used), not thousands of rows.

Every report comes from a new device (its own cookie) but from one address (this machine), so the
server is started with high per-address bounds (SAFEGROUND_SUPPORTERS_NETWORK_RATE and its
_URGENT twin, which a life at risk is held to); the per-device bound is the normal one. Last line:

    supporters reports=N p99_ms=X groups=G queue_read_cpu_ms=C queue_read_mean_ms=M

C is the median read's CPU (most reads serve the copy), M the mean (the reads that made it in).

    .venv/bin/python bench/bench_supporters.py                # SQLite (or: make bench-supporters)
    .venv/bin/python bench/bench_supporters.py --seconds 20   # a shorter run
    .venv/bin/python bench/bench_supporters.py --postgres     # PostgreSQL (DATABASE_URL or psql)
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import queue
import random
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_entry import cpu_of
from bench.bench_live import (
    PYTHON,
    ROOT,
    ApiPublisher,
    Database,
    postgres_database,
    server_env,
    sqlite_database,
    stop_server,
    wait_for_port,
)
from bench.load import free_port, percentile

STAND_CATEGORIES = ("abuse-racist", "standing", "smoking")  # a stand's flood: a few kinds
SPREAD_CATEGORIES = ("abuse-racist", "drunk", "medical", "violence", "missile", "other")
WORKERS = 24  # sending threads, each with its own keep-alive connection

SEATS = """
import json
from safeground.demo.season import rerun_find
from safeground.supporters.seats import seat_code
rerun = rerun_find()
blocks = list(rerun.ground.blocks.select_related('tier__stand').order_by('code'))
def codes(block, n):
    rows = block.rows[:max(1, n // max(block.seats_per_row, 1))]
    return [seat_code(block, r, s) for r in rows
            for s in range(block.first_seat, block.first_seat + block.seats_per_row)][:n]
stand = [c for b in blocks if b.tier.stand.code == 'E' for c in codes(b, 200)]
spread = [c for b in blocks for c in codes(b, 5)]
print(json.dumps({'fixture': rerun.pk, 'stand': stand, 'spread': spread}))
"""
GROUPS = """
from safeground.supporters.models import TriageItem
print(TriageItem.objects.filter(fixture={fixture}).count())
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--stand-rate", type=float, default=100.0, help="reports/s, one stand")
    parser.add_argument("--spread-rate", type=float, default=10.0, help="reports/s, the ground")
    parser.add_argument("--postgres", action="store_true", help="serve from PostgreSQL")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes (more than one: Redis, --redis-url)",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/6")
    parser.add_argument("--screens", type=int, default=20, help="control-room screens open")
    return parser.parse_args()


def shell(env: dict[str, str], code: str) -> str:
    done = subprocess.run(
        [PYTHON, "-m", "safeground.cli", "shell", "-c", code],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip().splitlines()[-1]


def prepare(database: Database) -> dict[str, str]:
    env = server_env(database) | {
        "SAFEGROUND_DEMO_TICKETS": "none",
        "SAFEGROUND_DEMO_HISTORY": "false",
        "SAFEGROUND_SUPPORTERS_NETWORK_RATE": "1000000/10m",
        "SAFEGROUND_SUPPORTERS_NETWORK_URGENT_RATE": "1000000/10m",  # the medical reports'
    }
    for command in (["migrate", "--no-input", "-v", "0"], ["demo"]):
        subprocess.run([PYTHON, "-m", "safeground.cli", *command], env=env, cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
    return env


class Sender(threading.Thread):
    """Takes (due time, seat code, category) jobs; POSTs each as a new device; records latency."""

    def __init__(self, port: int, csrf: str, jobs: queue.Queue, out: list[float], bad: list[int]):
        super().__init__(daemon=True)
        self.port, self.csrf, self.jobs, self.out, self.bad = port, csrf, jobs, out, bad
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def run(self) -> None:
        while (job := self.jobs.get()) is not None:
            due, code, category = job
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            body = urllib.parse.urlencode(
                {"csrfmiddlewaretoken": self.csrf, "category": category, "text": "bench report"}
            )
            headers = {
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"csrftoken={self.csrf}; sg_reporter={secrets.token_urlsafe(24)}",
            }
            try:
                self.conn.request("POST", f"/s/{code}/", body, headers)
                response = self.conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                status = 0
            if status == 302:
                self.out.append((time.monotonic() - due) * 1000)
            else:
                self.bad.append(status)


REFRESH_GAP = 0.5  # live-1.js REFRESH_GAP_MS


def panel_read(loggist: ApiPublisher, fixture: int) -> tuple[int, float | None, float]:
    """The queue's fragment, as the page fetches it: its status, the server's CPU for it (the
    view's own thread, from its Server-Timing; the read that made the copy names the making's
    CPU as `render`), and the seconds after which to read again (a copy from before the latest
    change says so; 0 otherwise)."""
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in loggist.cookies.items())}
    try:
        loggist.conn.request("GET", f"/fixtures/{fixture}/supporters/panel/", headers=headers)
        response = loggist.conn.getresponse()
        response.read()
    except (OSError, http.client.HTTPException):
        loggist.conn.close()
        loggist.conn = http.client.HTTPConnection("127.0.0.1", loggist.port, timeout=30)
        return 0, None, 0.0
    timing = dict(
        (name.strip(), float(dur))
        for name, _, dur in (part.partition(";dur=") for part in
                             response.getheader("Server-Timing", "").split(","))
        if dur
    )  # fmt: skip
    if "render" in timing:
        RENDERS.append(timing["render"])
    again = int(response.getheader("Safeground-Read-Again-Ms", "0") or 0) / 1000
    return response.status, timing.get("cpu"), again


RENDERS: list[float] = []  # the reads that made the copy: the CPU of making it


def control_room(
    loggist: ApiPublisher, fixture: int, stop: threading.Event, tally: dict[str, Any]
) -> None:
    """One control-room screen: its socket, and the queue's fragment fetched on each frame."""
    from websockets.asyncio.client import connect

    port = loggist.port

    async def watch() -> None:
        url = f"ws://127.0.0.1:{port}/ws/fixtures/{fixture}/"
        async with connect(url, origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
                           additional_headers={"Cookie": loggist.cookie}) as ws:  # fmt: skip
            while not stop.is_set():
                try:
                    message = await asyncio.wait_for(ws.recv(), 0.5)
                except TimeoutError:
                    continue
                if json.loads(message).get("type") != "supporters.item":
                    continue
                tally["frames"] += 1
                # As the page does (live-1.js refreshPanels): one fetch at once, then at most
                # one every REFRESH_GAP for the frames that came meanwhile, not one each; and
                # again when a copy from before the latest change says to.
                while True:
                    started = time.monotonic()
                    status, cpu, again = await asyncio.to_thread(panel_read, loggist, fixture)
                    tally["panels"] += status == 200
                    if cpu is not None:
                        tally["cpu_ms"].append(cpu)
                    meanwhile = 0
                    while True:
                        wait = max(0.001, started + max(REFRESH_GAP, again) - time.monotonic())
                        try:
                            message = await asyncio.wait_for(ws.recv(), wait)
                        except TimeoutError:
                            break
                        meanwhile += json.loads(message).get("type") == "supporters.item"
                    tally["frames"] += meanwhile
                    if not meanwhile and not again:
                        break

    asyncio.run(watch())


class Costs:
    """CPU the server process (and, on PostgreSQL, the database's backends) used, and the
    transactions the database committed, between `start` and `stop`: per report, with the
    control room's reads and the server's own chores counted in (so an upper bound)."""

    def __init__(self, server_pid: int, database: Database) -> None:
        self.pid, self.url = server_pid, database.env.get("DATABASE_URL", "")
        self.postgres = database.name == "postgresql"

    def _psql(self, sql: str) -> list[str]:
        done = subprocess.run(["psql", self.url, "-Atc", sql], capture_output=True, text=True,
                              check=True)  # fmt: skip
        return done.stdout.split()

    def _sample(self) -> tuple[float, dict[int, float], int]:
        if not self.postgres:
            return cpu_of([self.pid]), {}, 0
        where = "datname = current_database() AND pid <> pg_backend_pid()"
        backends = [int(p) for p in self._psql(f"SELECT pid FROM pg_stat_activity WHERE {where}")]
        (commits,) = self._psql(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        )
        return cpu_of([self.pid]), {pid: cpu_of([pid]) for pid in backends}, int(commits)

    def start(self) -> None:
        self.before = self._sample()

    def stop(self) -> None:
        self.after = self._sample()

    def per_report(self, reports: int) -> str:
        n = max(reports, 1)
        app = self.after[0] - self.before[0]
        text = f"server CPU per report: {1000 * app / n:.2f} ms"
        if self.postgres:
            # A backend opened since the start counts from nothing; one closed is not counted.
            database = sum(cpu - self.before[1].get(pid, 0.0) for pid, cpu in self.after[1].items())
            commits = self.after[2] - self.before[2] - 1  # the first sample's own
            text += (f"; PostgreSQL backends {1000 * database / n:.2f} ms; "
                     f"{commits / n:.2f} transactions per report")  # fmt: skip
        return text


def run(args: argparse.Namespace, database: Database) -> None:
    env = prepare(database)
    seats = json.loads(shell(env, SEATS))
    port = free_port()
    if args.workers > 1:
        env["REDIS_URL"] = args.redis_url
    serve = ["serve", f"--port={port}", f"--workers={args.workers}"]
    server = subprocess.Popen([PYTHON, "-m", "safeground.cli", *serve],
                              env=env, cwd=ROOT, stdout=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for_port(port, server)
        probe = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        probe.request("GET", f"/s/{seats['stand'][0]}/")
        response = probe.getresponse()
        page = response.read()
        cookie = next(v for k, v in response.getheaders() if v.startswith("csrftoken="))
        csrf = cookie.split(";", 1)[0].split("=", 1)[1]
        print(f"seat page {len(page)} bytes; {len(seats['stand'])} seats in the stand")
        stop = threading.Event()
        tally: dict[str, Any] = {"frames": 0, "panels": 0, "cpu_ms": []}
        first = ApiPublisher(port)
        rooms = [
            threading.Thread(target=control_room, args=(screen, seats["fixture"], stop, tally))
            for screen in [first] + [first.another() for _ in range(args.screens - 1)]
        ]
        for room in rooms:
            room.start()
        time.sleep(1.0)
        jobs: queue.Queue = queue.Queue()
        latencies: list[float] = []
        bad: list[int] = []
        senders = [Sender(port, csrf, jobs, latencies, bad) for _ in range(WORKERS)]
        for sender in senders:
            sender.start()
        start = time.monotonic() + 0.5
        due: list[tuple[float, str, str]] = []
        for rate, codes, categories in (
            (args.stand_rate, seats["stand"], STAND_CATEGORIES),
            (args.spread_rate, seats["spread"], SPREAD_CATEGORIES),
        ):
            for i in range(int(rate * args.seconds)):
                due.append((start + i / rate, random.choice(codes), random.choice(categories)))
        costs = Costs(server.pid, database)
        costs.start()
        for job in sorted(due):
            jobs.put(job)
        for _ in senders:
            jobs.put(None)
        for sender in senders:
            sender.join()
        costs.stop()
        time.sleep(1.0)
        stop.set()
        for room in rooms:
            room.join()
    finally:
        stop_server(server)
    groups = int(shell(env, GROUPS.format(fixture=seats["fixture"])))
    ordered = sorted(latencies)
    p50, p99 = percentile(ordered, 50), percentile(ordered, 99)
    refused = f"{len(bad)} {sorted(set(bad))[:5]}"
    print(f"offered {len(due)} reports in {args.seconds:.0f} s ({database.name}); "
          f"answered 302: {len(latencies)}; other answers: {refused}")  # fmt: skip
    print(f"report->queue p50 {p50:.1f} ms, p99 {p99:.1f} ms (target p99 <= 200 ms)")
    print(costs.per_report(len(latencies)))
    cpu = sorted(tally["cpu_ms"])
    cpu_p50, cpu_p99 = (percentile(cpu, 50), percentile(cpu, 99)) if cpu else (0.0, 0.0)
    print(f"control room: {args.screens} screens, {tally['frames']} supporters.item frames, "
          f"{tally['panels']} queue reads; the queue fragment's server CPU p50 {cpu_p50:.1f} ms, "
          f"p99 {cpu_p99:.1f} ms (target <= 5 ms)")  # fmt: skip
    made = percentile(sorted(RENDERS), 50) if RENDERS else 0.0
    mean = sum(cpu) / max(len(cpu), 1)
    print(f"  of which {len(RENDERS)} reads made the copy (median {made:.1f} ms); "
          f"mean CPU a read {mean:.1f} ms")  # fmt: skip
    print(f"supporters reports={len(latencies)} p99_ms={p99:.0f} groups={groups} "
          f"queue_read_cpu_ms={cpu_p50:.1f} queue_read_mean_ms={mean:.1f}")  # fmt: skip


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-supporters-") as workdir:
        database = postgres_database("sg_supporters_bench") if args.postgres else None
        run(args, database or sqlite_database(Path(workdir)))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
