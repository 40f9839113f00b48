"""Offline uploads racing online scans, and each other, on PostgreSQL: still one admission per
ticket (the earlier scan stands), and no deadlock between uploads naming the same tickets."""

import os
import sys
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connections

from safeground.entry.models import EntryConflict, Scan, Ticket
from safeground.entry.scans import offline_scans_upload, scan_decide

RACES = int(os.environ.get("SAFEGROUND_OFFLINE_RACES", "300"))

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tickets(race_tickets):
    return race_tickets(RACES, "scanner")


def offline(barcodes: list[str], turnstile: str, at) -> dict:
    return {
        "scans": [
            {"barcode": b, "turnstile": turnstile, "scanned_at": at.isoformat(),
             "nonce": str(uuid.uuid4()), "decision": "admit", "reason": None}
            for b in barcodes
        ]
    }  # fmt: skip


def race(rounds: int, sides: list[Callable[[int], object]]) -> list[list[object]]:
    """Each side's call for round i leaves at the same moment as the other's; their answers."""
    barrier = threading.Barrier(len(sides))
    answers: list[list[object]] = [[] for _ in sides]
    failures: list[BaseException] = []

    def run(n: int) -> None:
        try:
            for i in range(rounds):
                barrier.wait(timeout=30)
                answers[n].append(sides[n](i))
        except BaseException as error:  # reported below
            failures.append(error)
            barrier.abort()
        finally:
            connections.close_all()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)  # hand the GIL over often, as tests/entry/test_race.py does
    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(sides))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert failures == []
    return answers


def test_an_earlier_offline_admission_racing_an_online_scan_stands_each_time(tickets) -> None:
    cup, (turnstile, scanner) = tickets
    online_at = cup.kickoff - timedelta(minutes=30)
    offline_at = online_at - timedelta(minutes=1)

    def online(i: int) -> str:
        result = scan_decide(device=turnstile, turnstile="F03", barcode=f"RACE-{i:05d}",
                             scanned_at=online_at, nonce=uuid.uuid4())  # fmt: skip
        return result.reason or "admit"

    def upload(i: int) -> bool:
        data = offline([f"RACE-{i:05d}"], "F07", offline_at)
        return offline_scans_upload(device=scanner, data=data)[0].conflict

    decisions, conflicts = race(RACES, [online, upload])
    # Online first: it admits, and the offline upload raises a conflict it wins (scanned first).
    # Offline first: it admits, and the online scan is told "already inside".
    for decision, conflict in zip(decisions, conflicts, strict=True):
        assert (decision, conflict) in {("admit", True), ("already_inside", False)}
    assert Ticket.objects.filter(fixture=cup, inside=True).count() == RACES
    assert set(Ticket.objects.filter(fixture=cup).values_list("entered_at", flat=True)) == {
        offline_at
    }
    assert EntryConflict.objects.count() == decisions.count("admit")
    assert not EntryConflict.objects.filter(first_scan__offline=False).exists()
    print(f"online first {decisions.count('admit')} of {RACES}")


def test_uploads_naming_the_same_tickets_in_opposite_orders_do_not_deadlock(tickets) -> None:
    cup, (first, second) = tickets
    at = cup.kickoff - timedelta(minutes=20)
    batch = 50
    rounds = max(1, RACES // batch)

    def names(i: int) -> list[str]:
        return [f"RACE-{n:05d}" for n in range(i * batch, (i + 1) * batch)]

    def forwards(i: int) -> int:
        results = offline_scans_upload(device=first, data=offline(names(i), "F03", at))
        return sum(r.conflict for r in results)

    def backwards(i: int) -> int:
        data = offline(names(i)[::-1], "F07", at + timedelta(seconds=30))
        return sum(r.conflict for r in offline_scans_upload(device=second, data=data))

    race(rounds, [forwards, backwards])
    admitted = rounds * batch
    assert Ticket.objects.filter(fixture=cup, inside=True).count() == admitted
    assert set(
        Ticket.objects.filter(fixture=cup, inside=True).values_list("entered_at", flat=True)
    ) == {at}
    assert EntryConflict.objects.count() == admitted
    assert Scan.objects.filter(offline=True).count() == 2 * admitted


def test_the_same_upload_sent_twice_at_once_is_stored_once(tickets) -> None:
    cup, (scanner, _) = tickets
    at = cup.kickoff - timedelta(minutes=10)
    rounds = max(1, RACES // 10)
    # Each round: two tickets of this match and one unknown barcode (which locks no ticket).
    uploads = [
        offline([f"RACE-{2 * i:05d}", f"RACE-{2 * i + 1:05d}", f"FORGED-{i}"], "F03", at)
        for i in range(rounds)
    ]

    def send(i: int) -> list[bool]:
        results = offline_scans_upload(device=scanner, data=uploads[i])
        return [r.replayed for r in results]

    first, second = race(rounds, [send, send])
    for mine, theirs in zip(first, second, strict=True):
        assert sorted([mine, theirs]) == [[False] * 3, [True] * 3]
    assert Scan.objects.filter(offline=True).count() == 3 * rounds
    assert Ticket.objects.filter(fixture=cup, inside=True).count() == 2 * rounds
    assert not EntryConflict.objects.exists()
