"""Scans from the event loop on SQLite (entry.runtime.one_writer): the process's one writer
decides the scans waiting together in one transaction. It answers as the ORM path does, admits a
ticket once whoever scans it, answers a nonce sent again with the first decision, lets one bad
scan fail alone, and answers 503 while another writer holds SQLite's lock past the deadline."""

import asyncio
import dataclasses
import sqlite3
import time
import uuid

import pytest
from django.db import connection

from safeground.entry import decision
from safeground.entry.models import Scan, Ticket
from safeground.entry.runtime import lookups, one_writer
from safeground.entry.scans import scan_check
from tests.entry.test_loop import CASES, away_tickets, post, run, scan_of, warm

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def sqlite_only():
    if connection.vendor != "sqlite":
        pytest.skip("the one writer is SQLite's (PostgreSQL: tests/entry/test_loop.py)")
    one_writer.writer_close()  # opened again with this test's settings
    yield
    one_writer.writer_close()


@pytest.fixture
def held(monkeypatch):
    """The writer's batches, by size; the first one held until `release()`, so that the scans
    sent meanwhile wait together for the next."""
    sizes: list[int] = []
    gate = asyncio.Event()
    write = one_writer.write

    async def counted(batch):
        sizes.append(len(batch))
        await gate.wait()
        return await write(batch)

    monkeypatch.setattr(one_writer, "write", counted)

    async def first_taken() -> None:
        while not sizes:
            await asyncio.sleep(0.005)

    return dataclasses.make_dataclass("Held", ["sizes", "first_taken", "release"])(
        sizes, first_taken, gate.set
    )


def test_the_writer_answers_as_the_orm_path(gates, monkeypatch) -> None:
    warm(gates, "F03", "A01")

    async def scans():
        return [await post(gates.key, scan_of(gates, *case)) for case in CASES]

    from_loop = run(scans)
    assert [answer.get("reason") for _, answer in from_loop] == [
        "banned", "cancelled", "flagged", "wrong_end", "wrong_end", "wrong_match",
        "unknown_ticket", None,
    ]  # fmt: skip
    monkeypatch.setattr(decision, "USE_SQL", False)
    orm = [(r.status_code, r.json()) for r in (gates.scan(*case) for case in CASES)]
    assert from_loop[:-1] == orm[:-1]
    assert orm[-1][1]["reason"] == "already_inside"  # AWAY-2 went in from the loop
    assert "18:55" in orm[-1][1]["message"]  # when it went in, in the ground's time
    assert Scan.objects.count() == 2 * len(CASES)
    assert Ticket.objects.get(barcode="AWAY-2").inside


def test_scans_that_wait_together_are_decided_in_one_transaction(gates, held) -> None:
    """The scans sent while the writer is busy go together in its next batch, but for a second
    scan of a ticket in it (AWAY-1 at F03, beside AWAY-1 at A01) and a nonce sent again: each
    waits for the batch after. Every scan gets the answer it would have had alone."""
    warm(gates, "F03", "A01")
    again = scan_of(gates, "AWAY-1")
    scans = [scan_of(gates, *case) for case in CASES] + [again, again]

    async def together():
        first = asyncio.create_task(post(gates.key, scans[0]))
        await held.first_taken()
        rest = [asyncio.create_task(post(gates.key, scan)) for scan in scans[1:]]
        await asyncio.sleep(0.2)
        held.release()
        return await asyncio.gather(first, *rest)

    answers = run(together)
    assert held.sizes == [1, 7, 1, 1]
    assert [answer.get("reason") for _, answer in answers] == [
        "banned", "cancelled", "flagged", "wrong_end", "wrong_end", "wrong_match",
        "unknown_ticket", None, None, None,
    ]  # fmt: skip
    assert [answer["replayed"] for _, answer in answers[-2:]] == [False, True]
    assert answers[-1][1] == answers[-2][1] | {"replayed": True}
    assert Scan.objects.count() == len(scans) - 1


def test_a_ticket_at_two_turnstiles_at_once_is_admitted_once(gates, held) -> None:
    warm(gates, "F03", "F07")

    async def together():
        first = asyncio.create_task(post(gates.key, scan_of(gates, "AWAY-2")))
        await held.first_taken()
        both = [
            asyncio.create_task(post(gates.key, scan_of(gates, "AWAY-1", turnstile)))
            for turnstile in ("F03", "F07")
        ]
        await asyncio.sleep(0.2)
        held.release()
        return await asyncio.gather(first, *both)

    answers = [answer.get("reason") or answer["decision"] for _, answer in run(together)]
    assert answers == ["admit", "admit", "already_inside"]
    assert held.sizes == [1, 1, 1]
    assert Scan.objects.filter(barcode="AWAY-1", decision="admit").count() == 1


def contexts(gates, *barcodes: str, turnstile: str = "F03"):
    device = lookups.device_for_key(gates.key)
    assert device is not None
    at = gates.before_kickoff
    return [
        scan_check(
            device=device, turnstile=turnstile, barcode=barcode, nonce=uuid.uuid4(), scanned_at=at
        ).context
        for barcode in barcodes
    ]


def test_one_transaction_admits_a_ticket_once_even_if_it_holds_it_twice(gates) -> None:
    """The group commit keeps a ticket's second scan for the next batch; should a batch hold it
    twice anyway, its conditional UPDATE moves the ticket once and the other is already_inside."""
    (at_f03,) = contexts(gates, "AWAY-1")
    (at_f07,) = contexts(gates, "AWAY-1", turnstile="F07")
    outcomes = run(lambda: one_writer.write([at_f03, at_f07]))
    assert [(o.decision, o.reason) for o in outcomes] == [
        ("admit", ""),
        ("deny", "already_inside"),
    ]
    assert Scan.objects.filter(barcode="AWAY-1").count() == 2


def test_a_nonce_sent_again_is_answered_with_the_first_decision(gates) -> None:
    warm(gates, "F03")
    admitted, unknown = scan_of(gates, "AWAY-1"), scan_of(gates, "NOT-A-TICKET")

    async def scans():
        return [await post(gates.key, scan) for scan in (admitted, unknown, admitted, unknown)]

    first, refused, again, refused_again = run(scans)
    assert again == (200, first[1] | {"replayed": True})
    assert refused_again == (200, refused[1] | {"replayed": True})
    assert refused[1]["reason"] == "unknown_ticket"
    assert Scan.objects.count() == 2


def test_one_bad_scan_in_a_batch_fails_alone(gates, held) -> None:
    """A batch SQLite refuses (here a scan whose turnstile has gone: its foreign key fails at the
    commit) is rolled back whole and decided again scan by scan: only that scan fails."""
    warm(gates, "F03")
    first, good, bad = contexts(gates, "HOME-1", "AWAY-1", "AWAY-2")
    bad = dataclasses.replace(bad, turnstile_id=10**9)

    async def together():
        alone = asyncio.create_task(one_writer.decide_async(first))
        await held.first_taken()
        rest = [asyncio.create_task(one_writer.decide_async(ctx)) for ctx in (good, bad)]
        await asyncio.sleep(0.2)
        held.release()
        return await asyncio.gather(alone, *rest, return_exceptions=True)

    wrong_end, admitted, failed = run(together)
    assert held.sizes == [1, 2, 1, 1]  # the two together, then each again alone
    assert (wrong_end.reason, admitted.decision) == ("wrong_end", "admit")
    assert isinstance(failed, sqlite3.IntegrityError)
    assert sorted(Scan.objects.values_list("barcode", flat=True)) == ["AWAY-1", "HOME-1"]
    assert not Ticket.objects.get(barcode="AWAY-2").inside


def test_scans_answered_503_while_another_writer_holds_the_lock(gates, settings) -> None:
    """Another process's writer (or an offline upload) holds SQLite's write lock past the scans'
    deadline: each scan is answered 503 'scan again' at its deadline, and nothing is stored."""
    settings.SAFEGROUND_SCAN_DEADLINE_SECONDS = 0.3
    warm(gates, "F03")
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    other.execute("BEGIN IMMEDIATE")

    async def locked_out():
        began = time.monotonic()
        answers = await asyncio.gather(
            *(post(gates.key, scan_of(gates, code)) for code in ("HOME-1", "AWAY-1", "AWAY-2"))
        )
        return answers, time.monotonic() - began

    try:
        answers, took = run(locked_out)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert [status for status, _ in answers] == [503, 503, 503]
    assert answers[0][1]["code"] == "unavailable"
    assert took < 2
    assert not Scan.objects.exists()


def test_a_hundred_tickets_raced_at_two_turnstiles_are_each_admitted_once(gates) -> None:
    away_tickets(gates, "RACE", 100)
    warm(gates, "F03", "F07")

    async def race():
        return await asyncio.gather(
            *(
                post(gates.key, scan_of(gates, f"RACE-{i:05d}", turnstile))
                for i in range(100)
                for turnstile in ("F03", "F07")
            )
        )

    answers = run(race)
    assert {status for status, _ in answers} == {200}
    assert sorted(answer.get("reason") or "admit" for _, answer in answers) == (
        ["admit"] * 100 + ["already_inside"] * 100
    )
    admitted = Ticket.objects.filter(barcode__startswith="RACE-", inside=True).count()
    assert admitted == 100
    assert Scan.objects.filter(barcode__startswith="RACE-", decision="admit").count() == 100
