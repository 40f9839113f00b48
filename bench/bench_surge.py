"""The surge (issue 24 item 4): the demo's worst ten minutes at ten times their real rate, on two
server processes over PostgreSQL and Redis, with one process killed (SIGKILL) mid-run and started
again:

- scans at `--scan-rate` (200/s) and reports at `--entry-rate` (20/s) concentrated on the blocks
  of three zones (so flashpoint scoring runs), as bench/faults.py offers them (the same clients:
  Retry-After honoured and jittered, offline decisions uploaded, entries retried with their key);
- a broadcast to every steward every `--broadcast-every` s (30), acknowledged by the demo's
  steward (posted to one of the three zones) from their own session;
- `--viewers` (2,000) sockets on the match, half on each process, in two client processes
  (bench/bench_live.py's clients), and the same number on the plain `websockets` reference server
  (bench_live's), which is sent the same frame, at the same size, after each report is answered.

Measured: scans' answer p99; from just before each report's POST to its frame on every viewer
socket (report_to_screen, over the sockets of the process that stayed up, so the kill's own
closed sockets are not counted as late) and the same for the reference (plain); lost and
duplicated as bench/faults.py counts them (from the database, and its reconnecting live clients)
plus frames a surviving viewer never got or got twice; shed = scans answered 503 or 429. Last line:

    surge scan_p99_ms=A report_to_screen_p99_ms=B acked=N lost=0 duplicated=0 shed=S plain_p99_ms=P

    flock /tmp/bench.lock .venv/bin/python bench/bench_surge.py --pg-db sg_me_bench_surge \\
        --redis-url redis://127.0.0.1:6379/7 --port 19600
    .venv/bin/python bench/bench_surge.py --seconds 30 --viewers 500      # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import queue
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import bench_live, faults, viewers

STEWARD = "steward"  # the demo's (safeground demo prints them)
ZONES = 3
TARGET_RATIO = 1.5  # report to screen p99 against the reference's (issue 39 item 2)
TARGET_SCAN_P99_MS = 50


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=90.0, help="of load (default 90)")
    parser.add_argument("--scan-rate", type=float, default=200.0)
    parser.add_argument("--entry-rate", type=float, default=20.0)
    parser.add_argument("--broadcast-every", type=float, default=30.0)
    parser.add_argument("--viewers", type=int, default=2000, help="sockets on Safeground")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres",
    )
    parser.add_argument(
        "--pg-db",
        default=os.environ.get("BENCH_SURGE_PG_DB", "sg_bench_surge"),
        help="made and dropped",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_SURGE_REDIS_URL")
        or os.environ.get("REDIS_URL")
        or "redis://127.0.0.1:6379/0",
    )
    parser.add_argument(
        "--port", type=int, default=18650, help="servers PORT, +1; proxy +2; reference +3, +4"
    )
    parser.add_argument("--no-kill", action="store_true")
    return parser.parse_args()


def surge_setup(fixture_id: int, out: str) -> None:
    """Inside Django: three zones' blocks of the match and the demo steward posted to the
    first of them."""
    import django

    django.setup()
    from safeground.accounts.models import User
    from safeground.incidents.posts import steward_post_assign
    from safeground.matches.models import Fixture, FixtureZone
    from safeground.venues.models import ZoneBlock

    fixture = Fixture.objects.get(pk=fixture_id)
    zones = list(
        FixtureZone.objects.filter(fixture=fixture)
        .order_by("zone__code")
        .values_list("zone_id", "zone__code")[:ZONES]
    )
    blocks = sorted(
        set(
            ZoneBlock.objects.filter(zone_id__in=[z for z, _ in zones]).values_list(
                "block__code", flat=True
            )
        )
    )
    steward = User.objects.get(username=STEWARD)
    steward_post_assign(
        fixture=fixture,
        steward=steward,
        assigned_by=User.objects.get(username=faults.LOGGIST),
        zone=zones[0][1],
    )
    Path(out).write_text(json.dumps({"blocks": blocks, "zones": [c for _, c in zones]}))


class SurgeLoad(faults.Load):
    """faults.Load with reports spread over three zones' blocks, each text marked for the
    viewers (bench_live.MARK) and the time just before its first POST kept: the reference's
    pass sends its frame at the same moment of its own run."""

    def __init__(self, cluster: faults.Cluster, blocks: list[str], **kwargs: Any) -> None:
        super().__init__(cluster, **kwargs)
        self.blocks = blocks
        self.posted: dict[int, float] = {}  # mark -> monotonic time just before its first POST

    def new_entry(self, i: int) -> faults.Sent:
        item = super().new_entry(i)
        body = json.loads(item.body)
        body["block"] = self.blocks[i % len(self.blocks)]
        body["text"] = f"surge bench-{i}- coin thrown towards the buffer"
        item.body = json.dumps(body).encode()
        self.posted[i] = time.monotonic()
        return item

    def answered(self) -> set[int]:
        """The marks of the reports acknowledged (online or after retries)."""
        return {
            int(bench_live.MARK.search(json.loads(i.body)["text"])[1])  # type: ignore[index]
            for i in self.sent
            if i.kind == "entry" and i.acked is not None
        }


async def broadcasts(
    load: SurgeLoad, steward: dict[str, str], every: float, stop: float
) -> tuple[int, int]:
    """A broadcast from the control room every `every` s, each acknowledged by the steward;
    (tried, acknowledged)."""
    tried = acked = 0
    fixture = load.setup.fixture_id
    proxy = faults.ReverseProxy(load.cluster.ports)
    wait = every / 2  # the first half-way into a period, so a short run has one too
    while time.monotonic() < stop:
        await asyncio.sleep(min(wait, max(0.0, stop - time.monotonic())))
        wait = every
        if time.monotonic() >= stop:
            break
        tried += 1
        headers = {
            "Content-Type": "application/json",
            "Cookie": load.cookie_header(),
            "X-CSRFToken": load.cookies["csrftoken"],
        }
        body = json.dumps({"script": "hold", "text": "Hold at the gates: surge"}).encode()
        try:
            _, answer = await proxy.request(
                "POST", f"/api/fixtures/{fixture}/broadcasts", headers, body, 10
            )
        except faults.NoAnswer:
            continue
        if answer.status != 201:
            continue
        sent = answer.json()["id"]
        ack_headers = {"Cookie": steward["cookie"], "X-CSRFToken": steward["csrftoken"]}
        for _attempt in range(5):  # the steward's phone retries its acknowledgement
            try:
                _, answer = await proxy.request(
                    "POST", f"/api/fixtures/{fixture}/broadcasts/{sent}/ack", ack_headers, b"", 10
                )
            except faults.NoAnswer:
                await asyncio.sleep(faults.jittered(1.0))
                continue
            if answer.status == 200:
                acked += 1
                break
            await asyncio.sleep(faults.jittered(float(faults.asked_wait(answer) or 1.0)))
    return tried, acked


async def steward_session(port: int) -> dict[str, str]:
    """The demo steward logged in through the login page (as faults.Load.log_in does)."""
    import urllib.parse

    upstream = faults.Upstream(port)
    answer = await upstream.request("GET", "/login/", {}, b"", 30)
    cookies: dict[str, str] = {}

    def keep(answer: faults.Answer) -> None:
        for value in answer.cookies:
            key, _, val = value.partition(";")[0].partition("=")
            cookies[key.strip()] = val

    keep(answer)
    form = urllib.parse.urlencode(
        {
            "username": STEWARD,
            "password": faults.PASSWORD,
            "csrfmiddlewaretoken": cookies["csrftoken"],
        }
    ).encode()
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    answer = await upstream.request(
        "POST",
        "/login/",
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
        form,
        30,
    )
    keep(answer)
    upstream.drop_all()
    if "sessionid" not in cookies:
        raise RuntimeError(f"login as {STEWARD} failed ({answer.status})")
    return {
        "cookie": "; ".join(f"{k}={v}" for k, v in cookies.items()),
        "csrftoken": cookies["csrftoken"],
    }


def viewers_start(
    urls: list[tuple[str, str]], cookie: str, count: int
) -> tuple[list[Any], list[int]]:
    """`count` cheap viewers (bench/viewers.py) on each URL, a client process each, pinned with
    the rest of the load generator; (the processes with their pipes, connected per URL)."""
    started = []
    for url, origin in urls:
        parent, child = multiprocessing.Pipe()
        process = multiprocessing.get_context("fork").Process(
            target=viewers.client_process,
            args=(url, origin, cookie, count, child, viewers.client_cpus()),
        )
        process.start()
        started.append((process, parent))
    return started, [int(pipe.recv()) for _, pipe in started]


def viewers_stop(started: list[Any]) -> list[tuple[Any, ...]]:
    results = []
    for _, pipe in started:
        pipe.send("stop")
    for process, pipe in started:
        results.append(pipe.recv())
        process.join(timeout=30)
    return results


def p99_ms(values: list[float]) -> int:
    if not values:
        return -1
    values = sorted(values)
    return round(1000 * values[min(len(values) - 1, int(len(values) * 0.99))])


async def run(
    args: argparse.Namespace, cluster: faults.Cluster, blocks: list[str]
) -> dict[str, Any]:
    """Safeground's pass: the surge, its viewers, the kill; counted from the database and the
    viewers of the process that stayed up."""
    load = SurgeLoad(cluster, blocks, scan_rate=args.scan_rate, entry_rate=args.entry_rate)
    await load.log_in()
    steward = await steward_session(cluster.ports[1])
    live = faults.LiveClients(cluster, 10, load.cookie_header())
    await live.start()
    fixture = load.setup.fixture_id
    per = args.viewers // 2
    surviving, victim = cluster.ports[1], cluster.ports[0]
    started, connected = await asyncio.to_thread(
        viewers_start,
        [
            (f"ws://127.0.0.1:{port}/ws/fixtures/{fixture}/", f"http://127.0.0.1:{port}")
            for port in (surviving, victim)
        ],
        load.cookie_header(),
        per,
    )
    meter = viewers.CpuMeter(
        [process.pid for process in cluster.servers.values()],
        [os.getpid(), *(process.pid for process, _ in started)],
    )
    meter.start()
    load.t0 = time.monotonic()
    marks: dict[str, float] = {}

    async def kill_and_restart() -> None:
        if args.no_kill:
            return
        await asyncio.sleep(args.seconds * 0.4)
        meter.server_killed(cluster.servers[victim].pid)
        cluster.kill(victim)
        marks["kill"] = time.monotonic() - load.t0
        await asyncio.sleep(3.0)
        restarted = cluster.start_server(victim)
        viewers.unpin(restarted.pid)
        meter.server_started(restarted.pid)
        marks["restart"] = time.monotonic() - load.t0

    stop = time.monotonic() + args.seconds
    faults_task = asyncio.create_task(kill_and_restart())
    broadcaster = asyncio.create_task(broadcasts(load, steward, args.broadcast_every, stop))
    await load.offer(args.seconds)
    await faults_task
    tried, acked = await broadcaster
    drained = await load.drain(30)  # a default run stays within about 3 minutes
    await asyncio.sleep(5)  # the last frames reach the sockets
    cpu = meter.stop()
    results = await asyncio.to_thread(viewers_stop, started)
    expected = await asyncio.to_thread(faults.entries_expected, cluster)
    await live.settle(expected, timeout=15)
    await live.stop()
    report = faults.Report()
    plan = faults.Timeline(0, 0, args.seconds, args.seconds, args.seconds)
    faults.count(report, cluster, load, live, expected, marks, plan)

    # The surviving process's viewers: every report answered, once each on every socket open.
    viewers_up = connected[0] - results[0][3]  # closed before the stop: not counted as lost
    screen = viewers.count_viewers(
        [results[0]], load.posted, sockets=viewers_up, expected=load.answered()
    )
    delivered = sum(len(result[0]) for result in results)
    shed = sum(1 for a in load.attempts if a.kind == "scan" and a.status in (503, 429))
    return {
        "report": report,
        "drained": drained,
        "acked_broadcasts": acked,
        "tried_broadcasts": tried,
        "scan_p99_ms": report.scans.get("p99_ms", -1),
        "report_to_screen_p99_ms": p99_ms(screen.delays_s),
        "viewer_missed": screen.missed,
        "viewer_twice": screen.twice,
        "viewers_up": viewers_up,
        "shed": shed,
        "cpu": cpu,
        "us_per_frame": 1e6 * cpu.server * cpu.seconds / max(delivered, 1),
        "marks": marks,
        # The reference's pass replays each answered report's frame at its POST's moment.
        "schedule": sorted(load.posted[i] - load.t0 for i in load.answered()),
        "frame_bytes": max(result[4] for result in results) or 600,
    }


def reference_pass(
    args: argparse.Namespace, schedule: list[float], frame_bytes: int
) -> dict[str, Any]:
    """The plain `websockets` server alone (Safeground idle): as many viewers, the same frames
    at the same moments of the run as Safeground's reports were posted."""
    plain_port, trigger_port = args.port + 3, args.port + 4
    plain = subprocess.Popen(
        [
            faults.PYTHON,
            bench_live.__file__,
            "--serve-plain",
            f"--port={plain_port}",
            f"--trigger-port={trigger_port}",
        ]
    )
    viewers.unpin(plain.pid)
    try:
        faults.wait_for_port(trigger_port, plain)
        per = args.viewers // 2
        started, connected = viewers_start(
            [(f"ws://127.0.0.1:{plain_port}/", "http://127.0.0.1")] * 2, "", per
        )
        lines: queue.Queue[bench_live.TriggerPublisher] = queue.Queue()
        for _ in range(8):  # a frame waits for a free line, as POSTs run side by side
            line = bench_live.TriggerPublisher(trigger_port)
            line.frame_bytes = frame_bytes
            lines.put(line)
        sent: dict[int, float] = {}

        def one(i: int) -> None:
            line = lines.get()
            try:
                sent[i] = time.monotonic()
                line.publish(i)
            finally:
                lines.put(line)

        meter = viewers.CpuMeter([plain.pid], [os.getpid(), *(p.pid for p, _ in started)])
        meter.start()
        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            for i, at in enumerate(schedule):
                delay = t0 + at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(one, i)
        time.sleep(5)
        cpu = meter.stop()
        results = viewers_stop(started)
    finally:
        plain.terminate()
        plain.wait(timeout=10)
    counted = viewers.count_viewers(results, sent, sockets=sum(connected))
    return {
        "p99_ms": p99_ms(counted.delays_s),
        "missed": counted.missed,
        "twice": counted.twice,
        "cpu": cpu,
        "us_per_frame": 1e6 * cpu.server * cpu.seconds / max(len(counted.delays_s), 1),
    }


def main() -> None:
    args = parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(
        f"surge: two processes on ports {args.port}, {args.port + 1}; {args.viewers} viewers and"
        f" as many on the reference; scans {args.scan_rate:.0f}/s, reports"
        f" {args.entry_rate:.0f}/s on {ZONES} zones, a broadcast every {args.broadcast_every:.0f}"
        f" s; {args.seconds:.0f} s; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    cluster = faults.Cluster.from_args(args, tickets=int(args.seconds * args.scan_rate * 1.1) + 100)
    try:
        cluster.direct = True  # no database cut here: the servers straight to PostgreSQL
        setup = cluster.prepare(template=True)
        out = cluster.workdir / "surge.json"
        done = subprocess.run(
            [faults.PYTHON, __file__, "setup", str(setup.fixture_id), str(out)],
            env=cluster.env(proxied=False),
            cwd=faults.ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the surge's setup failed: {done.stderr[-3000:]}")
        zones = json.loads(out.read_text())
        print(f"  reports on zones {', '.join(zones['zones'])} ({len(zones['blocks'])} blocks)")
        # The load generator (this process, its viewers) on one CPU, the servers on any.
        viewers.pin_here(viewers.client_cpus())
        cluster.start()
        for process in cluster.servers.values():
            viewers.unpin(process.pid)
        try:
            import uvloop

            result = uvloop.run(run(args, cluster, zones["blocks"]))
        except ImportError:
            result = asyncio.run(run(args, cluster, zones["blocks"]))
        print(
            f"  Safeground's pass done; the reference's pass: {len(result['schedule'])} frames of"
            f" {result['frame_bytes']} B at the same moments, load average"
            f" {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        reference = reference_pass(args, result["schedule"], result["frame_bytes"])
    finally:
        cluster.close()
    report: faults.Report = result["report"]
    for line in report.lines():
        print(line)
    print(
        f"  broadcasts sent={result['tried_broadcasts']}"
        f" acknowledged={result['acked_broadcasts']}; viewers on the surviving process"
        f" {result['viewers_up']}: missed={result['viewer_missed']} twice={result['viewer_twice']};"
        f" drained={result['drained']}; kill/restart at {result['marks']}"
    )
    cpu: viewers.CpuShare = result["cpu"]
    plain_cpu: viewers.CpuShare = reference["cpu"]
    print("  Safeground (two processes; scans, reports and broadcasts included):")
    print(cpu.line())
    print("  the reference (the plain `websockets` server alone):")
    print(plain_cpu.line())
    print(
        f"  server CPU per delivered frame: Safeground {result['us_per_frame']:.1f} µs (all of its"
        f" work), plain {reference['us_per_frame']:.1f} µs; the reference's viewers:"
        f" missed={reference['missed']} twice={reference['twice']}"
    )
    lost = report.lost + result["viewer_missed"]
    duplicated = report.duplicated + result["viewer_twice"]
    screen, plain_p99 = result["report_to_screen_p99_ms"], reference["p99_ms"]
    ratio = screen / max(plain_p99, 1)
    met = (
        ratio <= TARGET_RATIO
        and lost == 0
        and duplicated == 0
        and 0 <= result["scan_p99_ms"] <= TARGET_SCAN_P99_MS
    )
    judged = cpu.server_had_a_core and plain_cpu.server_had_a_core
    print(
        f"  verdict (report to screen at most {TARGET_RATIO}x the reference's p99, 0 lost, 0"
        f" doubled, scans p99 at most {TARGET_SCAN_P99_MS} ms): "
        + (("met" if met else "NOT met") if judged else "none: the server had no core to itself")
        + f"; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"surge scan_p99_ms={result['scan_p99_ms']}"
        f" report_to_screen_p99_ms={screen}"
        f" acked={report.acked} lost={lost} duplicated={duplicated} shed={result['shed']}"
        f" plain_p99_ms={plain_p99} ratio={ratio:.2f} judged={'yes' if judged else 'no'}"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["setup"]:
        surge_setup(int(sys.argv[2]), sys.argv[3])
    else:
        main()
