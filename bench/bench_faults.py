"""Nothing lost under faults (issue 17, part 2): two server processes on PostgreSQL and Redis,
scans at 200/s and log entries at 20/s through a reverse proxy's round robin, WebSocket clients on
both; one process killed (SIGKILL) and started again, then PostgreSQL cut for 3 s; everything
counted from the database at the end. The machinery is `bench/faults.py` (the test in
tests/scaleout/ runs a short version of the same).

    flock /tmp/bench.lock .venv/bin/python bench/bench_faults.py          # 60 s of load
    .venv/bin/python bench/bench_faults.py --seconds 30 --pg-db sg_me_faults --redis-url ...
    .venv/bin/python bench/bench_faults.py --restart-postgres   # restarts the REAL server

Last line: `faults acked=N lost=0 duplicated=0 chains_ok=yes` (counted, not assumed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import faults


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="of load (default 60)")
    parser.add_argument("--scan-rate", type=float, default=200.0)
    parser.add_argument("--entry-rate", type=float, default=20.0)
    parser.add_argument("--sockets", type=int, default=10, help="WebSocket clients per process")
    parser.add_argument("--outage-seconds", type=float, default=3.0)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres",
        help="the PostgreSQL server to use (its credentials; the database is --pg-db)",
    )
    parser.add_argument(
        "--pg-db",
        default=os.environ.get("BENCH_FAULTS_PG_DB", "sg_bench_faults"),
        help="database the bench makes and drops (default: %(default)s)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_FAULTS_REDIS_URL")
        or os.environ.get("REDIS_URL")
        or "redis://127.0.0.1:6379/0",
        help="default: BENCH_FAULTS_REDIS_URL, REDIS_URL or %(default)s",
    )
    parser.add_argument("--port", type=int, default=18600, help="servers at PORT, PORT+1; proxy +2")
    parser.add_argument(
        "--restart-postgres",
        action="store_true",
        help="restart the real PostgreSQL server (pg_ctlcluster) instead of cutting it through"
        " the proxy: every database on it is cut, so not on a machine others are using",
    )
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=60.0,
        help="after the load, how long the retries and the scanner's queue may take",
    )
    parser.add_argument("--no-kill", action="store_true", help="no process killed")
    parser.add_argument("--no-outage", action="store_true", help="no database outage")
    parser.add_argument(
        "--no-template",
        action="store_true",
        help="migrate and load the demo afresh (default: copy the template database an earlier"
        " run kept, named for the migrations and the demo, when there is one)",
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="the servers straight to PostgreSQL, not through the proxy (implies --no-outage)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        sys.exit("--database-url: a postgres:// URL is needed (two processes share PostgreSQL)")
    tickets = int(args.seconds * args.scan_rate * 1.1) + 100
    print(
        f"faults: two processes on ports {args.port}, {args.port + 1}; PostgreSQL database"
        f" {args.pg_db} at {urllib.parse.urlsplit(args.database_url).hostname}; Redis"
        f" {args.redis_url}; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    cluster = faults.Cluster.from_args(args, tickets=tickets)
    started = time.monotonic()
    try:
        cluster.direct = args.direct
        cluster.prepare(template=not args.no_template)
        cluster.start()
        print(
            f"  load: scans {args.scan_rate:.0f}/s, entries {args.entry_rate:.0f}/s for"
            f" {args.seconds:.0f} s; {2 * args.sockets} WebSocket clients",
            flush=True,
        )
        run: Any = asyncio.run
        with contextlib.suppress(ImportError):
            import uvloop

            run = uvloop.run
        report = run(
            faults.run_faults(
                cluster,
                seconds=args.seconds,
                scan_rate=args.scan_rate,
                entry_rate=args.entry_rate,
                sockets_per_process=args.sockets,
                outage_s=args.outage_seconds,
                restart_postgres=args.restart_postgres,
                kill=not args.no_kill,
                drain_s=args.drain_seconds,
                outage=not (args.no_outage or args.direct),
            )
        )
        errors = cluster.server_errors()
        outage_lines = cluster.outage_lines()
    finally:
        cluster.close(drop=not args.keep)
    for line in report.lines():
        print(line)
    print("  server log:", *outage_lines, sep="\n    ")
    if errors:
        print(f"  server tracebacks:\n{errors}")
    print(f"  whole run {time.monotonic() - started:.0f} s, load average {os.getloadavg()[0]:.1f}")
    print(report.last_line())


if __name__ == "__main__":
    main()
