"""Scans decided on the event loop (PostgreSQL): the lean route's own path, with async connections
and the process's caches. It answers as the ninja route does, admits each ticket once under races,
stops a revoked key within the cache time, tells the control room only after the scan committed,
and costs one prepared statement per scan when the caches hold what it needs."""

import asyncio
import json
import os
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone
from psycopg import pq

from safeground.accounts.models import Device, Organisation
from safeground.accounts.services import device_create, device_revoke
from safeground.entry import asgi, decisions, lookups
from safeground.entry.models import Scan, Ticket
from safeground.entry.services import scan_check
from safeground.live import events
from safeground.venues.models import Block

RACES = int(os.environ.get("SAFEGROUND_RACES", "10000"))

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def loop_path(monkeypatch):
    """PostgreSQL only; four async connections (a test's loop opens its own), one scan thread
    whose connection is closed after the test."""
    if connection.vendor != "postgresql":
        pytest.skip(
            "scans are decided on the event loop on PostgreSQL only (SQLite takes the scan "
            "threads): set DATABASE_URL=postgres://... to run it"
        )
    monkeypatch.setattr(decisions, "CONNECTIONS", 4)
    threads = ThreadPoolExecutor(1, thread_name_prefix="scan")
    monkeypatch.setattr(decisions, "_threads", threads)
    yield
    threads.submit(connections.close_all).result()
    threads.shutdown()


def run(work):
    """`work()` on a fresh event loop, as one uvicorn worker would; its pool closed after."""

    async def main():
        try:
            return await work()
        finally:
            await decisions.scan_pool_close()

    return asyncio.run(main())


async def post(key: str | None, payload: dict) -> tuple[int, dict]:
    """POST /api/entry/scan through the router that wraps the application."""
    sent: list = []
    body = json.dumps(payload).encode()
    headers = [(b"x-device-key", key.encode())] if key else []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    async def app(scope, receive, send):
        raise AssertionError("a scan must not reach the application behind the router")

    scope = {"type": "http", "method": "POST", "path": "/api/entry/scan", "headers": headers}
    await asgi.gates_router(app)(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


def scan_of(gates, barcode: str, turnstile: str = "F03", **change) -> dict:
    return {"barcode": barcode, "turnstile": turnstile, "nonce": str(uuid.uuid4()),
            "scanned_at": gates.before_kickoff.isoformat()} | change  # fmt: skip


def warm(gates, *turnstiles: str) -> None:
    """What a turnstile's first scan loads: its device, turnstile, match and gate ends."""
    device = lookups.device_for_key(gates.key)
    for code in turnstiles:
        scan_check(device=device, turnstile=code, barcode="WARM", scanned_at=gates.before_kickoff,
                   nonce=uuid.uuid4())  # fmt: skip


CASES = [
    ("BANNED-1", "F03"),
    ("CANCELLED-1", "F03"),
    ("FLAGGED-1", "F03"),
    ("HOME-1", "F03"),
    ("AWAY-1", "A01"),
    ("LEAGUE-1", "F03"),
    ("NOT-A-TICKET", "F03"),
    ("AWAY-2", "F03"),
]


def test_the_loop_answers_as_the_ninja_route(gates) -> None:
    warm(gates, "F03", "A01")

    async def scans():
        return [await post(gates.key, scan_of(gates, *case)) for case in CASES]

    on_loop = run(scans)
    assert [answer.get("reason") for _, answer in on_loop] == [
        "banned", "cancelled", "flagged", "wrong_end", "wrong_end", "wrong_match",
        "unknown_ticket", None,
    ]  # fmt: skip
    ninja = [(r.status_code, r.json()) for r in (gates.scan(*case) for case in CASES)]
    assert on_loop[:-1] == ninja[:-1]
    assert ninja[-1][1]["reason"] == "already_inside"  # AWAY-2 went in on the loop
    assert Scan.objects.count() == 2 * len(CASES)
    assert Ticket.objects.get(barcode="AWAY-2").inside


def test_a_replayed_nonce_and_bad_input_on_the_loop(gates) -> None:
    warm(gates, "F03")
    first = scan_of(gates, "AWAY-1")

    async def scans():
        return [
            await post(gates.key, first),
            await post(gates.key, first),
            await post(gates.key, scan_of(gates, "has space")),
            await post(gates.key, scan_of(gates, "AWAY-2", scanned_at="2016-10-26T18:55:00")),
            await post("sgd_unknown", scan_of(gates, "AWAY-2")),
            await post(None, scan_of(gates, "AWAY-2")),
        ]

    admitted, replayed, barcode, no_zone, unknown_key, no_key = run(scans)
    assert admitted[1]["decision"] == replayed[1]["decision"] == "admit"
    assert (admitted[1]["replayed"], replayed[1]["replayed"]) == (False, True)
    assert (barcode[0], barcode[1]["field"]) == (400, "barcode")
    assert (no_zone[0], no_zone[1]["field"]) == (400, "scanned_at")
    assert unknown_key[0] == no_key[0] == 401
    assert Scan.objects.count() == 1


def test_a_revoked_key_stops_within_the_cache_time_on_the_loop(gates, settings) -> None:
    settings.SAFEGROUND_ENTRY_CACHE_SECONDS = 0.5
    warm(gates, "F03")
    assert run(lambda: post(gates.key, scan_of(gates, "AWAY-1")))[0] == 200
    device_revoke(device=Device.objects.get(pk=gates.device_id))
    time.sleep(0.6)
    status, answer = run(lambda: post(gates.key, scan_of(gates, "AWAY-2")))
    assert status == 401 and answer == {"detail": "Unauthorized"}
    assert list(Scan.objects.values_list("barcode", flat=True)) == ["AWAY-1"]


class CommittedWitness(list):
    """Records, as each event goes out, whether the banned scan is already visible to another
    connection (the sending thread's own): it is only if its statement has committed."""

    def append(self, event) -> None:
        self.scan_committed = Scan.objects.filter(reason="banned").exists()
        super().append(event)


def test_the_control_room_hears_of_a_banned_holder_after_the_scan_committed(gates) -> None:
    warm(gates, "F03")
    witness = CommittedWitness()
    events._captures.append(witness)
    try:
        status, answer = run(lambda: post(gates.key, scan_of(gates, "BANNED-1")))
    finally:
        events._captures.remove(witness)
    assert (status, answer["reason"]) == (200, "banned")
    assert [event.type for event in witness] == ["entry.denied"]
    assert witness.scan_committed
    flag = Ticket.objects.get(barcode="BANNED-1").flags.get()
    assert witness[0].data["flag"] == flag.pk and witness[0].data["turnstile"] == "F03"
    assert "Holder" not in witness[0].frame


def test_a_scan_on_the_loop_is_one_prepared_statement(gates, monkeypatch) -> None:
    """Traced on the wire (libpq's trace of the pool's one connection): on a cache hit a scan
    sends one Bind of the statement prepared at the first scan, and nothing else."""
    monkeypatch.setattr(decisions, "CONNECTIONS", 1)
    warm(gates, "F03")

    async def traced() -> str:
        assert (await post(gates.key, scan_of(gates, "AWAY-1")))[1]["decision"] == "admit"
        pool = decisions._pool[1]  # type: ignore[index]
        with tempfile.TemporaryFile("w+") as trace:
            async with pool.connection() as conn:
                conn.pgconn.trace(trace.fileno())
                conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
            answer = await post(gates.key, scan_of(gates, "AWAY-2"))
            async with pool.connection() as conn:
                conn.pgconn.untrace()
            assert answer[1]["decision"] == "admit"
            trace.seek(0)
            return trace.read()

    sent = [line.split("\t")[2] for line in run(traced).splitlines() if line.startswith("F\t")]
    assert sent.count("Bind") == 1 and sent.count("Execute") == 1
    assert "Parse" not in sent and "Query" not in sent


def test_two_turnstiles_racing_on_each_ticket_admit_it_once_on_the_loop(gates) -> None:
    block = Block.objects.get(ground=gates.fixture.ground, code="S-L2")
    now = timezone.now()
    Ticket.objects.bulk_create(
        Ticket(fixture=gates.fixture, barcode=f"RACE-{i:05d}", holder_name="Racer",
               holder_dob=now.date(), block=block, row="A", seat=str(i), end="away",
               imported_at=now, updated_at=now)
        for i in range(RACES)
    )  # fmt: skip
    _, other_key = device_create(
        organisation=Organisation.objects.get(name="West Ham United"),
        name="Gate F turnstile 7",
        profile="turnstile",
    )
    warm(gates, "F03", "F07")
    lookups.device_for_key(other_key)
    at = (gates.fixture.kickoff - timedelta(minutes=30)).isoformat()
    at_once = 4  # tickets raced at the same time, each by two turnstiles

    async def race(i: int) -> list[str]:
        answers = await asyncio.gather(
            post(gates.key, scan_of(gates, f"RACE-{i:05d}", "F03", scanned_at=at)),
            post(other_key, scan_of(gates, f"RACE-{i:05d}", "F07", scanned_at=at)),
        )
        return sorted(answer["reason"] or "admit" for _, answer in answers)

    async def races() -> list[list[str]]:
        pairs: list[list[str]] = []
        for first in range(0, RACES, at_once):
            last = min(first + at_once, RACES)
            pairs += await asyncio.gather(*(race(i) for i in range(first, last)))
        return pairs

    pairs = run(races)
    assert len(pairs) == RACES
    assert all(pair == ["admit", "already_inside"] for pair in pairs)
    assert Ticket.objects.filter(barcode__startswith="RACE-", inside=True).count() == RACES
    assert Scan.objects.filter(decision="admit").count() == RACES
    assert Scan.objects.filter(reason="already_inside").count() == RACES


def test_the_scan_threads_prepare_the_statement_too(gates) -> None:
    """The thread path (cache misses; the ninja route) binds the same prepared statement."""
    warm(gates, "F03")
    assert gates.scan("AWAY-1").json()["decision"] == "admit"
    raw = connection.connection
    with tempfile.TemporaryFile("w+") as trace:
        raw.pgconn.trace(trace.fileno())
        raw.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        assert gates.scan("AWAY-2").json()["decision"] == "admit"
        raw.pgconn.untrace()
        trace.seek(0)
        sent = [line.split("\t")[2] for line in trace.read().splitlines() if line[:2] == "F\t"]
    assert sent.count("Bind") == 1 and "Parse" not in sent and "Query" not in sent
