"""Scans decided on the event loop (PostgreSQL): the lean route's own path, with async connections
and the process's caches. It answers as the ninja route does, admits each ticket once under races,
stops a revoked key within the cache time, tells the control room only after the scan committed,
and costs one prepared statement per scan when the caches hold what it needs."""

import asyncio
import dataclasses
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
from psycopg import IntegrityError, pq

from safeground.accounts.models import Device, Organisation
from safeground.accounts.services import device_create, device_revoke
from safeground.entry.models import Scan, Ticket
from safeground.entry.runtime import asgi, lookups, loop, threads
from safeground.entry.scans import scan_check, scan_decide
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
    monkeypatch.setattr(loop, "CONNECTIONS", 4)
    executor = ThreadPoolExecutor(1, thread_name_prefix="scan")
    monkeypatch.setattr(threads, "_threads", executor)
    yield
    executor.submit(connections.close_all).result()
    executor.shutdown()


def run(work):
    """`work()` on a fresh event loop, as one uvicorn worker would; its pool closed after."""

    async def main():
        try:
            return await work()
        finally:
            await loop.scan_pool_close()

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


def away_tickets(gates, prefix: str, count: int) -> None:
    """`count` away tickets for the cup tie, PREFIX-00000 onwards, in one insert."""
    block = Block.objects.get(ground=gates.fixture.ground, code="S-L2")
    now = timezone.now()
    Ticket.objects.bulk_create(
        Ticket(fixture=gates.fixture, barcode=f"{prefix}-{i:05d}", holder_name=f"{prefix} holder",
               holder_dob=now.date(), block=block, row="A", seat=str(i), end="away",
               imported_at=now, updated_at=now)
        for i in range(count)
    )  # fmt: skip


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
    assert status == 401 and answer == {
        "code": "unauthorized",
        "field": "",
        "detail": "Unauthorized",
    }
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
    monkeypatch.setattr(loop, "CONNECTIONS", 1)
    warm(gates, "F03")

    async def traced() -> str:
        assert (await post(gates.key, scan_of(gates, "AWAY-1")))[1]["decision"] == "admit"
        pool = loop._batches[1].pool  # type: ignore[index]
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


def test_two_turnstiles_racing_on_each_ticket_admit_it_once_on_the_loop(
    gates, monkeypatch, batch_sizes
) -> None:
    """Two statements in flight at once: batches holding the same tickets meet at their rows."""
    monkeypatch.setattr(loop, "CONNECTIONS", 2)
    away_tickets(gates, "RACE", RACES)
    _, other_key = device_create(
        organisation=Organisation.objects.get(name="West Ham United"),
        name="Gate F turnstile 7",
        profile="turnstile",
    )
    warm(gates, "F03", "F07")
    lookups.device_for_key(other_key)
    at = (gates.fixture.kickoff - timedelta(minutes=30)).isoformat()
    at_once = 8  # tickets raced at the same time, each by two turnstiles

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
    assert max(batch_sizes) > 2
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
    # the planner's settings on, the statement, the settings back: each bound, none parsed again
    assert sent.count("Bind") == 3 and "Parse" not in sent and "Query" not in sent


@pytest.fixture
def batch_sizes(monkeypatch) -> list[int]:
    """The size of every statement the loop sends."""
    sizes: list[int] = []
    statement = loop.statement

    async def counted(pool, batch):
        sizes.append(len(batch))
        return await statement(pool, batch)

    monkeypatch.setattr(loop, "statement", counted)
    return sizes


def test_scans_that_wait_together_are_answered_as_each_alone(gates, monkeypatch, batch_sizes):
    """One statement in flight: the scans arriving meanwhile go in the next, together, and each
    gets the answer it would have had alone (the ninja route's, one at a time)."""
    monkeypatch.setattr(loop, "CONNECTIONS", 1)
    warm(gates, "F03", "A01")
    again = scan_of(gates, "AWAY-1")
    scans = [scan_of(gates, *case) for case in CASES] + [again, again]

    async def together():
        return await asyncio.gather(*(post(gates.key, scan) for scan in scans))

    answers = run(together)
    # the first alone, then the rest together but for AWAY-1 at F03 (AWAY-1 is in the batch,
    # at A01) and its nonce sent again: each waits for the next statement
    assert batch_sizes == [1, 7, 1, 1]
    assert [answer.get("reason") for _, answer in answers] == [
        "banned", "cancelled", "flagged", "wrong_end", "wrong_end", "wrong_match",
        "unknown_ticket", None, None, None,
    ]  # fmt: skip
    # the nonce sent twice: the second waited for the next statement and is that scan, replayed
    assert [answer["replayed"] for _, answer in answers[-2:]] == [False, True]
    assert Scan.objects.count() == len(scans) - 1
    lookups.caches_clear()
    for barcode in ("AWAY-1", "AWAY-2"):
        Ticket.objects.filter(barcode=barcode).update(inside=False)
    with connection.cursor() as cursor:  # scans are append-only; row triggers skip TRUNCATE
        cursor.execute(f"TRUNCATE {Scan._meta.db_table} CASCADE")
    alone = [(r.status_code, r.json()) for r in (gates.scan(*case) for case in CASES)]
    assert without_ids(answers[:-2]) == without_ids(alone)


def without_ids(answers: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    return [
        (status, {k: v for k, v in answer.items() if k != "scan_id"}) for status, answer in answers
    ]


def test_a_ticket_scanned_twice_while_waiting_is_admitted_once(gates, monkeypatch, batch_sizes):
    """Two turnstiles' scans of one ticket waiting together go in different statements: one
    admits it, the other finds it inside."""
    monkeypatch.setattr(loop, "CONNECTIONS", 1)
    warm(gates, "F03", "F07")

    async def together():
        return await asyncio.gather(
            post(gates.key, scan_of(gates, "AWAY-2")),  # alone: the others wait behind it
            post(gates.key, scan_of(gates, "AWAY-1", "F03")),
            post(gates.key, scan_of(gates, "AWAY-1", "F07")),
        )

    answers = [answer.get("reason") or answer["decision"] for _, answer in run(together)]
    assert answers == ["admit", "admit", "already_inside"]
    assert batch_sizes == [1, 1, 1]
    assert Scan.objects.filter(barcode="AWAY-1", decision="admit").count() == 1


def test_one_scan_failing_in_a_statement_leaves_the_others_decided(gates, monkeypatch, batch_sizes):
    """A statement that fails writes nothing; its scans are decided again one by one, so only the
    scan at fault fails (here one whose turnstile has gone from the database)."""
    monkeypatch.setattr(loop, "CONNECTIONS", 1)
    warm(gates, "F03")
    device = lookups.device_for_key(gates.key)

    def context(barcode: str):
        return scan_check(device=device, turnstile="F03", barcode=barcode, nonce=uuid.uuid4(),
                          scanned_at=gates.before_kickoff, cached_only=True).context  # fmt: skip

    first, good, bad = context("HOME-1"), context("AWAY-1"), context("AWAY-2")
    bad = dataclasses.replace(bad, turnstile_id=10**9)

    async def together():
        return await asyncio.gather(
            *(loop.decide_async(ctx) for ctx in (first, good, bad)), return_exceptions=True
        )

    wrong_end, admitted, failed = run(together)
    assert batch_sizes == [1, 2, 1, 1]  # the two together, then each again alone
    assert (wrong_end.reason, admitted.decision) == ("wrong_end", "admit")
    assert isinstance(failed, IntegrityError)
    assert sorted(Scan.objects.values_list("barcode", flat=True)) == ["AWAY-1", "HOME-1"]
    assert not Ticket.objects.get(barcode="AWAY-2").inside


def test_scans_waiting_past_their_deadline_are_answered_503_and_never_decided(
    gates, settings, monkeypatch, batch_sizes
):
    """A statement that gets no connection in time (the pool's wait is the scan's deadline):
    its scan and those queued behind it are answered 503 'scan again' with Retry-After at their
    deadline, the queued ones are never sent, and nothing is stored."""
    settings.SAFEGROUND_SCAN_DEADLINE_SECONDS = 0.3
    monkeypatch.setattr(loop, "CONNECTIONS", 1)
    warm(gates, "F03")

    async def starved():
        batches = await loop._batches_open()
        async with batches.pool.connection():  # the process's only connection, held
            answers = await asyncio.gather(
                *(post(gates.key, scan_of(gates, code)) for code in ("HOME-1", "AWAY-1", "AWAY-2"))
            )
        await asyncio.sleep(0.1)  # the connection is free again: nothing queued goes now
        return answers

    answers = run(starved)
    assert [status for status, _ in answers] == [503, 503, 503]
    assert answers[0][1] == {
        "code": "unavailable",
        "field": "",
        "detail": "The gates' database did not answer in time: scan again.",
    }
    assert batch_sizes == [1]
    assert not Scan.objects.exists()


def test_the_scan_connections_keep_one_plan_and_use_the_indexes(gates) -> None:
    """The pool's connections run the decision only: its plan is made once (not for each batch
    size), with index lookups even when made while the scans table was empty."""
    warm(gates, "F03")

    async def settings():
        await post(gates.key, scan_of(gates, "AWAY-1"))
        async with loop._batches[1].pool.connection() as conn:  # type: ignore[index]
            return [
                (await (await conn.execute(f"SHOW {name}")).fetchone())[0]
                for name in ("plan_cache_mode", "enable_seqscan")
            ]

    assert run(settings) == ["force_generic_plan", "off"]


def test_the_scan_threads_plan_the_statement_so_and_leave_their_connection_as_it_was(gates):
    warm(gates, "F03")
    names = ("plan_cache_mode", "enable_seqscan", "enable_hashjoin", "enable_mergejoin")

    def settings() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT setting FROM pg_settings WHERE name = ANY(%s) ORDER BY name",
                           [list(names)])  # fmt: skip
            return [row[0] for row in cursor.fetchall()]

    before = settings()
    assert gates.scan("AWAY-1").json()["decision"] == "admit"
    assert settings() == before == ["on", "on", "on", "auto"]


def deadlocks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def test_batches_holding_the_same_tickets_in_opposite_orders_never_deadlock(
    gates, monkeypatch
) -> None:
    """Each statement locks its tickets in ticket order, so two batches with the same tickets
    listed the other way round wait for each other instead of deadlocking."""
    monkeypatch.setattr(loop, "CONNECTIONS", 2)
    pairs = int(os.environ.get("SAFEGROUND_CROSSED", "100"))
    away_tickets(gates, "CROSS", 2 * pairs)
    warm(gates, "F03", "F07")
    device = lookups.device_for_key(gates.key)

    def context(i: int, turnstile: str):
        return scan_check(device=device, turnstile=turnstile, barcode=f"CROSS-{i:05d}",
                          nonce=uuid.uuid4(), scanned_at=gates.before_kickoff,
                          cached_only=True).context  # fmt: skip

    async def crossed():
        batches = await loop._batches_open()
        answers = []
        for x in range(0, 2 * pairs, 2):
            y = x + 1
            answers += await asyncio.gather(
                loop.statement(batches.pool, [context(x, "F03"), context(y, "F03")]),
                loop.statement(batches.pool, [context(y, "F07"), context(x, "F07")]),
            )
        return answers

    before = deadlocks()
    answers = run(crossed)  # the pool is closed after: its sessions have reported their figures
    time.sleep(0.5)
    assert deadlocks() == before
    reasons = [outcome.reason or outcome.decision for batch in answers for outcome in batch]
    assert sorted(set(reasons)) == ["admit", "already_inside"]
    assert reasons.count("admit") == reasons.count("already_inside") == 2 * pairs
    assert Ticket.objects.filter(barcode__startswith="CROSS-", inside=True).count() == 2 * pairs


def table_scans() -> tuple[int, int]:
    """Sequential and index scans of tickets and scans so far, as PostgreSQL counts them (this
    connection's own figures included: they are flushed first)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT sum(seq_scan), sum(idx_scan) FROM pg_stat_user_tables "
            "WHERE relname IN ('entry_ticket', 'entry_scan')"
        )
        seq, idx = cursor.fetchone()
    return int(seq), int(idx or 0)


def test_a_scan_threads_plan_uses_the_indexes_while_the_tables_fill(gates) -> None:
    """A scan thread's statement is planned with index lookups even when the tables' statistics
    say they are small (tickets just imported, no scans yet), so the plan stays right as they
    fill: once it is made, a scan reads no table from end to end."""
    away_tickets(gates, "FILL", 3000)
    warm(gates, "F03")
    device = lookups.device_for_key(gates.key)

    def scans(first: int, last: int) -> None:
        for i in range(first, last):
            scan_decide(device=device, turnstile="F03", barcode=f"FILL-{i:05d}",
                        scanned_at=gates.before_kickoff, nonce=uuid.uuid4())  # fmt: skip

    def on_a_thread() -> tuple[tuple[int, int], tuple[int, int]]:
        try:  # a Django connection of its own, as a scan thread's
            scans(0, 10)  # the plan is made (and the caches filled)
            before = table_scans()
            scans(10, 60)
            return before, table_scans()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(1) as thread:
        (seq_before, idx_before), (seq_after, idx_after) = thread.submit(on_a_thread).result()
    assert idx_after >= idx_before + 100  # two index probes a scan at least: the figures are in
    assert seq_after == seq_before
    assert Scan.objects.filter(barcode__startswith="FILL-", decision="admit").count() == 60


def test_a_turnstile_scanning_steadily_never_waits_for_a_reload(gates, settings, monkeypatch):
    """Past half its time an entry is reloaded on a scan thread while it still answers: scans
    stay on the loop across many expiries, and what the reload read counts at once (a key revoked
    meanwhile stops before the old entry would have expired)."""
    # Long enough that a reload on a busy CI box ends within the entry's second half; warmed
    # last, so the tickets' insert does not eat into its time.
    settings.SAFEGROUND_ENTRY_CACHE_SECONDS = 1.0
    sent_to_threads: list[str] = []
    over_http = asgi.scan_over_http

    def counted(key, body):
        sent_to_threads.append(json.loads(body)["barcode"])
        return over_http(key, body)

    monkeypatch.setattr(asgi, "scan_over_http", counted)
    away_tickets(gates, "STEADY", 150)
    warm(gates, "F03")

    async def steadily():
        answers = []
        for i in range(150):  # 3 s at least: three times the entries' time
            answers.append(await post(gates.key, scan_of(gates, f"STEADY-{i:05d}")))
            await asyncio.sleep(0.02)
        return answers

    answers = run(steadily)
    assert [answer["decision"] for _, answer in answers] == ["admit"] * 150
    assert sent_to_threads == []

    async def revoked_meanwhile():
        started = time.monotonic()
        await asyncio.sleep(1.1)  # past half the entry's time (warmed just now)
        # Revoked by another process: this one learns of it only through its reload (a
        # revocation made here leaves this process's cache at once: tests/accounts/test_devices).
        await threads.in_scan_thread(
            lambda: Device.objects.filter(pk=gates.device_id).update(revoked_at=timezone.now())
        )
        before = await post(gates.key, scan_of(gates, "AWAY-1"))  # the old entry; asks a reload
        for _ in range(50):
            await asyncio.sleep(0.002)
            after = await post(gates.key, scan_of(gates, "AWAY-2"))
            if after[0] == 401:
                break
        return before, after, time.monotonic() - started

    settings.SAFEGROUND_ENTRY_CACHE_SECONDS = 2.0
    lookups.caches_clear()
    warm(gates, "F03")  # entries loaded now
    before, after, took = run(revoked_meanwhile)
    assert before[0] == 200 and after[0] == 401
    assert took < 2.0  # the reload's reading, not the entry's expiry
    assert sent_to_threads == ["AWAY-2"]  # once the key was gone from the cache


def test_a_reload_that_fails_drops_the_entry_and_the_next_scan_meets_the_error(gates, settings):
    """A second ground of the organisation gets a turnstile F03 too: the reload of F03 fails
    (the code no longer names one turnstile), and the next scan is refused naming the field."""
    from safeground.venues.models import Gate, Ground, Turnstile

    settings.SAFEGROUND_ENTRY_CACHE_SECONDS = 2.0
    lookups.caches_clear()
    warm(gates, "F03")
    other = Ground.objects.create(organisation=gates.fixture.ground.organisation,
                                  code="training-ground", name="Training Ground")  # fmt: skip
    Turnstile.objects.create(gate=Gate.objects.create(ground=other, code="T", name="T"), code="F03")

    async def scans():
        await asyncio.sleep(1.1)  # past half the entries' time
        first = await post(gates.key, scan_of(gates, "AWAY-1"))  # the old entry; asks a reload
        for _ in range(100):  # until the reload has run; well before the entry's expiry
            await asyncio.sleep(0.005)
            if lookups._turnstiles._data.get((gates.fixture.ground.organisation_id, "F03")) is None:
                break
        return first, await post(gates.key, scan_of(gates, "AWAY-2"))

    first, second = run(scans)
    assert first[1]["decision"] == "admit"
    assert second[0] == 409 and second[1]["field"] == "turnstile"  # well formed; ambiguous data
    assert "several grounds" in second[1]["detail"]
    assert list(Scan.objects.values_list("barcode", flat=True)) == ["AWAY-1"]
