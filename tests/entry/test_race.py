"""One admission per ticket, by the database: the same ticket scanned at the same moment at two
turnstiles, 10,000 times over, on two connections, admits each ticket exactly once."""

import os
import sys
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from safeground.accounts.models import Organisation
from safeground.accounts.services import device_create
from safeground.demo.season import demo_load
from safeground.entry import lookups
from safeground.entry.models import Scan, Ticket
from safeground.entry.services import scan_decide
from safeground.matches.models import Fixture
from safeground.venues.models import Block

RACES = int(os.environ.get("SAFEGROUND_RACES", "10000"))

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip(
            "real concurrency needs PostgreSQL (SQLite serialises writers): "
            "set DATABASE_URL=postgres://... to run it"
        )


def test_two_turnstiles_racing_on_each_ticket_admit_it_once(postgres_only, settings) -> None:
    settings.SAFEGROUND_DEMO_TICKETS = "none"
    demo_load()
    cup = Fixture.objects.get(away_club__name="Chelsea")
    block = Block.objects.get(ground=cup.ground, code="S-L2")
    now = timezone.now()
    Ticket.objects.bulk_create(
        Ticket(fixture=cup, barcode=f"RACE-{i:05d}", holder_name="Racer", holder_dob=now.date(),
               block=block, row="A", seat=str(i), end="away", imported_at=now, updated_at=now)
        for i in range(RACES)
    )  # fmt: skip
    club = Organisation.objects.get(name="West Ham United")
    devices = [
        lookups.device_for_key(
            device_create(organisation=club, name=f"T{n}", profile="turnstile")[1]
        )
        for n in (1, 2)
    ]
    at = cup.kickoff - timedelta(minutes=30)
    barrier = threading.Barrier(2)
    decisions: list[list[str]] = [[], []]
    failures: list[BaseException] = []

    def turnstile(n: int, code: str) -> None:
        try:
            with connection.cursor() as cursor:
                # The WAL flush per commit is not what is tested (the row lock is): skip the wait.
                cursor.execute("SET synchronous_commit = off")
            for i in range(RACES):
                barrier.wait(timeout=30)  # both scans of ticket i leave together
                result = scan_decide(
                    device=devices[n],  # type: ignore[arg-type]
                    turnstile=code,
                    barcode=f"RACE-{i:05d}",
                    scanned_at=at,
                    nonce=uuid.uuid4(),
                )
                decisions[n].append(result.reason or "admit")
        except BaseException as error:  # reported below
            failures.append(error)
            barrier.abort()
        finally:
            connections.close_all()  # this thread's own connection

    # Two threads handing the GIL to each other after every socket read: the default 5 ms switch
    # interval would make each race wait for it (the convoy effect), not for the database.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    started = time.monotonic()
    threads = [threading.Thread(target=turnstile, args=(0, "F03")),
               threading.Thread(target=turnstile, args=(1, "F07"))]  # fmt: skip
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    elapsed = time.monotonic() - started
    assert failures == []
    pairs = list(zip(*decisions, strict=True))
    assert len(pairs) == RACES
    assert all(sorted(pair) == ["admit", "already_inside"] for pair in pairs)
    assert Ticket.objects.filter(fixture=cup, inside=True).count() == RACES
    assert Scan.objects.filter(decision="admit").count() == RACES
    assert Scan.objects.filter(reason="already_inside").count() == RACES
    print(f"{RACES} races in {elapsed:.1f} s")
