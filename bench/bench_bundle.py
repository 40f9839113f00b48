"""Offline bundle benchmark: the signed bundle for one turnstile of the demo cup tie, with all its
tickets (about 55,000), built from plain rows (`entry.bundle`), then signed.

Builds a fresh database of its own (SQLite in a temporary folder, or `--database-url`, which must
name an empty database this run may fill), loads the demo with every cup-tie ticket and a few
flags confirmed, and times, `--runs` times each, the median of:

- `build`: `bundle_payload` (the match, the flags, the tickets as keyed hashes; lookups warm),
- `sign`: canonical JSON and the Ed25519 signature,
- `http`: `GET /api/entry/bundle?turnstile=F03` through Django (device key, ninja, the JSON answer),
- the peer: the same payload built from model instances (`Ticket` objects with their block),
  the way an ORM loop would.

    .venv/bin/python bench/bench_bundle.py          # or: make bench-bundle

Each is given as wall and CPU time (other load on a shared machine stretches the wall time).
Last line: `bundle tickets=N build_ms=B sign_ms=S http_ms=H http_cpu_ms=C peer_ms=P
payload_bytes=Z` (wall medians but C; the target: http well under 1,000 ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def median_ms(runs: int, work: Callable[[], object]) -> tuple[float, float]:
    """Median wall and CPU milliseconds: on a shared 2-core box other load stretches the wall
    time; the CPU time is what the work itself costs."""
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        work()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="bench-bundle-")
    os.environ["DATABASE_URL"] = args.database_url or f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "safeground.settings.dev"
    os.environ["SAFEGROUND_DEMO_TICKETS"] = "all"
    os.environ["SAFEGROUND_ENTRY_COUNTS_EVERY"] = "0"
    sys.path.insert(0, str(ROOT / "src"))
    import django

    django.setup()
    from datetime import timedelta

    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.utils import timezone

    from safeground.accounts.models import Organisation
    from safeground.accounts.services import device_create
    from safeground.demo.season import demo_load
    from safeground.entry import bundle
    from safeground.entry.models import Ticket, TicketFlag
    from safeground.entry.runtime import lookups
    from safeground.matches.models import Fixture

    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    demo_load()
    cup = Fixture.objects.get(away_club__name="Chelsea")
    TicketFlag.objects.filter(ticket__fixture=cup).update(status=TicketFlag.Status.CONFIRMED)
    tickets = Ticket.objects.filter(fixture=cup).count()
    print(f"setup: demo with {tickets} cup-tie tickets on {connection.vendor} "
          f"in {time.perf_counter() - started:.1f}s")  # fmt: skip

    _, key = device_create(
        organisation=Organisation.objects.get(name="West Ham United"),
        name="Bench scanner",
        profile="scanner",
    )
    device = lookups.device_for_key(key)
    assert device is not None
    place = lookups.turnstile_for(device.organisation_id, "F03")
    assert place is not None
    now = cup.kickoff - timedelta(hours=1)
    payload = bundle.bundle_payload(turnstile=place, fixture_id=cup.pk, now=now)  # warms lookups
    build = median_ms(
        args.runs, lambda: bundle.bundle_payload(turnstile=place, fixture_id=cup.pk, now=now)
    )
    sign = median_ms(args.runs, lambda: bundle.bundle_sign(payload))
    signed = bundle.bundle_sign(payload)

    # The route answers for now: move the match to kick off in an hour.
    Fixture.objects.filter(pk=cup.pk).update(kickoff=timezone.now() + timedelta(hours=1))
    lookups.caches_clear()
    client = Client(HTTP_HOST="127.0.0.1")

    def http() -> None:
        response = client.get("/api/entry/bundle?turnstile=F03", headers={"X-Device-Key": key})
        assert response.status_code == 200, response.status_code

    http()
    over_http = median_ms(args.runs, http)

    def peer() -> None:
        """The payload's tickets from model instances: what an ORM loop would do (hashed in
        bulk as the real one is, so the difference is the rows)."""
        flags = bundle._flag_states(cup.pk, cup.kickoff.date())
        found = list(Ticket.objects.filter(fixture_id=cup.pk).select_related("block"))
        hashes = bundle.ticket_hashes(os.urandom(32), (ticket.barcode for ticket in found))
        rows = []
        for hashed, ticket in zip(hashes, found, strict=True):
            state = flags.get(ticket.pk) or ("inside" if ticket.inside else "valid")
            where = ticket.block.code if ticket.block else ticket.area
            rows.append([hashed, ticket.end[0], state, where, ticket.row, ticket.seat])
        rows.sort()

    peer_ms = median_ms(max(3, args.runs // 2), peer)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, (wall, cpu) in [("build", build), ("sign", sign), ("http", over_http),
                              ("peer", peer_ms)]:  # fmt: skip
        print(f"{name}: median wall {wall:.0f} ms, cpu {cpu:.0f} ms")
    print(
        f"bundle tickets={len(payload['tickets'])} build_ms={build[0]:.0f} sign_ms={sign[0]:.0f} "
        f"http_ms={over_http[0]:.0f} http_cpu_ms={over_http[1]:.0f} peer_ms={peer_ms[0]:.0f} "
        f"payload_bytes={len(signed.payload)}"
    )


if __name__ == "__main__":
    main()
