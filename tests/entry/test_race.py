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

from safeground.entry.models import Scan, Ticket
from safeground.entry.scans import scan_decide

RACES = int(os.environ.get("SAFEGROUND_RACES", "10000"))

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_turnstiles_racing_on_each_ticket_admit_it_once(race_tickets) -> None:
    cup, devices = race_tickets(RACES, "turnstile")
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
                    device=devices[n],
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
