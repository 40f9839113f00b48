"""The turnstile decision itself, in one database round trip on PostgreSQL.

`decide(...)` finds the ticket, checks its match, flags, status and end, admits it with a
conditional UPDATE (only if not already inside: one admission per ticket whatever the concurrency),
and stores the scan, or returns the scan already stored under the device's nonce. PostgreSQL runs
it as one statement (a CTE); other databases (SQLite, the laptop case) run the same steps through
the ORM in one transaction (SQLite's writes are serialised, so the conditional UPDATE is as safe).
Both are exercised by the same tests (docs/adr/0005-turnstile-decisions.md).

`decide_async(...)` runs the same statement from the event loop, on a small pool of async
connections per process (entry/asgi.py): no hop to a thread and back for a scan. What the loop
cannot do without Django's database access runs on the scan threads (`in_scan_thread`).
"""

import asyncio
import functools
import os
import sys
import weakref
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any
from uuid import UUID

import psycopg
from django.db import Error, IntegrityError, connection, connections, transaction
from django.db.models import QuerySet
from psycopg_pool import AsyncConnectionPool

from safeground.bans.models import IN_FORCE, TicketFlag

from .models import Scan, Ticket

Reason = Scan.Reason

# The ORM path on every database; tests switch it on PostgreSQL to check both give the same.
USE_SQL = True


@dataclass(frozen=True)
class ScanContext:
    device_id: int
    turnstile_id: int
    gate_id: int
    fixture_id: int | None
    day: date | None  # the match day (bans in force that day)
    home_ok: bool  # the gate lets home tickets in for this match
    away_ok: bool
    reentry: bool  # an exit re-opens entry
    direction: str
    barcode: str
    nonce: UUID
    scanned_at: datetime
    stored_at: datetime


@dataclass(frozen=True)
class Outcome:
    scan_id: int
    replayed: bool
    decision: str
    reason: str
    ticket_id: int | None
    block_id: int | None = None
    row: str = ""
    seat: str = ""
    area: str = ""
    end: str = ""
    entered_at: datetime | None = None  # the earlier admission (already_inside)
    entered_gate_id: int | None = None
    flag_id: int | None = None  # the confirmed flag behind `banned` (a fresh decision only)


def decide(ctx: ScanContext) -> Outcome:
    if USE_SQL and connection.vendor == "postgresql":
        found = _decide_sql(ctx)
        if found is not None:
            return found
        # The same nonce stored by a concurrent request between our read and our insert: ours
        # changed nothing (its UPDATE and INSERT are one statement); answer with the stored one.
        return _prior(ctx)  # type: ignore[return-value]
    return _decide_orm(ctx)


# --- PostgreSQL: one statement ----------------------------------------------------------------

IN_FORCE_SQL = ", ".join(f"'{status}'" for status in sorted(IN_FORCE))

DECIDE_SQL = f"""
WITH prior AS (
    SELECT s.id, s.decision, s.reason, s.ticket_id
    FROM entry_scan s WHERE s.device_id = %(device)s AND s.nonce = %(nonce)s
),
ticket AS (
    SELECT t.id, t.status, t."end"
    FROM entry_ticket t WHERE t.fixture_id = %(fixture)s AND t.barcode = %(barcode)s
),
flag AS (
    SELECT max(CASE WHEN f.status = 'confirmed' THEN 2 ELSE 1 END) AS level,
        min(f.id) FILTER (WHERE f.status = 'confirmed') AS confirmed_id
    FROM bans_ticketflag f JOIN bans_ban b ON b.id = f.ban_id
    WHERE f.ticket_id = (SELECT id FROM ticket) AND f.status IN ('confirmed', 'open')
      AND b.status IN ({IN_FORCE_SQL}) AND b.starts_on <= %(day)s
      AND (b.ends_on IS NULL OR b.ends_on >= %(day)s)
),
pre AS (
    SELECT t.id AS ticket_id, CASE
        WHEN t.id IS NULL THEN CASE
            WHEN EXISTS (SELECT 1 FROM entry_ticket o WHERE o.barcode = %(barcode)s)
            THEN 'wrong_match' ELSE 'unknown_ticket' END
        WHEN %(direction)s = 'out' THEN ''
        WHEN f.level = 2 THEN 'banned'
        WHEN t.status = 'cancelled' THEN 'cancelled'
        WHEN f.level = 1 THEN 'flagged'
        WHEN t."end" = 'home' AND NOT %(home_ok)s THEN 'wrong_end'
        WHEN t."end" = 'away' AND NOT %(away_ok)s THEN 'wrong_end'
        ELSE '' END AS reason
    FROM (SELECT 1) AS one LEFT JOIN ticket t ON true LEFT JOIN flag f ON true
    WHERE NOT EXISTS (SELECT 1 FROM prior)
),
moved AS (
    UPDATE entry_ticket SET
        inside = (%(direction)s = 'in'),
        entered_at = CASE WHEN %(direction)s = 'in' THEN %(scanned_at)s ELSE entered_at END,
        entered_gate_id = CASE WHEN %(direction)s = 'in' THEN %(gate)s ELSE entered_gate_id END
    WHERE id = (SELECT ticket_id FROM pre WHERE reason = '')
      AND ((%(direction)s = 'in' AND NOT inside)
        OR (%(direction)s = 'out' AND %(reentry)s AND inside))
    RETURNING id
),
decided AS (
    SELECT pre.ticket_id, CASE
        WHEN pre.reason <> '' THEN pre.reason
        WHEN %(direction)s = 'in' AND NOT EXISTS (SELECT 1 FROM moved) THEN 'already_inside'
        ELSE '' END AS reason
    FROM pre
),
stored AS (
    INSERT INTO entry_scan (device_id, nonce, ticket_id, barcode, fixture_id, turnstile_id,
        gate_id, direction, decision, reason, scanned_at, stored_at)
    SELECT %(device)s, %(nonce)s, d.ticket_id, %(barcode)s, %(fixture)s, %(turnstile)s, %(gate)s,
        %(direction)s, CASE WHEN d.reason = '' THEN 'admit' ELSE 'deny' END, d.reason,
        %(scanned_at)s, %(stored_at)s
    FROM decided d
    ON CONFLICT (device_id, nonce) DO NOTHING
    RETURNING id, decision, reason, ticket_id
),
result AS (
    SELECT false AS replayed, id, decision, reason, ticket_id FROM stored
    UNION ALL SELECT true, id, decision, reason, ticket_id FROM prior
)
SELECT r.id, r.replayed, r.decision, r.reason, r.ticket_id, t.block_id, t.row, t.seat, t.area,
    t."end", t.entered_at, t.entered_gate_id,
    CASE WHEN r.reason = 'banned' AND NOT r.replayed THEN (SELECT confirmed_id FROM flag) END
FROM result r LEFT JOIN entry_ticket t ON t.id = r.ticket_id
"""


def _params(ctx: ScanContext) -> dict[str, Any]:
    return {
        "device": ctx.device_id,
        "nonce": ctx.nonce,
        "fixture": ctx.fixture_id,
        "barcode": ctx.barcode,
        "day": ctx.day,
        "direction": ctx.direction,
        "home_ok": ctx.home_ok,
        "away_ok": ctx.away_ok,
        "reentry": ctx.reentry,
        "scanned_at": ctx.scanned_at,
        "stored_at": ctx.stored_at,
        "turnstile": ctx.turnstile_id,
        "gate": ctx.gate_id,
    }


def _decide_sql(ctx: ScanContext) -> Outcome | None:
    with _prepared_cursor() as cursor:
        cursor.execute(DECIDE_SQL, _params(ctx))
        row = cursor.fetchone()
    return None if row is None else Outcome(*row)


# Django opens connections with prepare_threshold=None, which makes psycopg ignore prepare=True;
# this lets an explicit prepare through and never prepares anything on its own.
ONLY_WHEN_ASKED = sys.maxsize


class _PreparedCursor(psycopg.Cursor):
    """Server-side binding, prepared once per pooled connection: planning this statement costs
    more than running it, and Django's own cursors never prepare."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        return super().execute(query, params, prepare=True)


def _prepared_cursor() -> Any:
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = ONLY_WHEN_ASKED
    # Django's wrapper around it: the query is counted, logged and wrapped like any other.
    return connection._prepare_cursor(_PreparedCursor(raw))  # type: ignore[attr-defined]


# --- every database: the ORM, one transaction ---------------------------------------------------

TICKET_FIELDS = ("block_id", "row", "seat", "area", "end", "entered_at", "entered_gate_id")


def _prior(ctx: ScanContext) -> Outcome | None:
    prior = (
        Scan.objects.filter(device_id=ctx.device_id, nonce=ctx.nonce)
        .values_list("pk", "decision", "reason", "ticket_id")
        .first()
    )
    if prior is None:
        return None
    scan_id, decision, reason, ticket_id = prior
    ticket = (
        Ticket.objects.filter(pk=ticket_id).values_list(*TICKET_FIELDS).first()
        if ticket_id
        else None
    )
    return Outcome(scan_id, True, decision, reason, ticket_id, *(ticket or ()))


def _flags(ticket_id: int, day: date | None) -> tuple[int, int | None]:
    """The level: 2, a confirmed flag on a ban in force that day (banned), 1, an open one (check
    identity), 0, none; and the first confirmed flag (for the control room's event)."""
    flags = list(
        flags_in_force([ticket_id], day)
        .filter(status__in=[TicketFlag.Status.CONFIRMED, TicketFlag.Status.OPEN])
        .order_by("pk")
        .values_list("pk", "status")
    )
    confirmed = [pk for pk, status in flags if status == TicketFlag.Status.CONFIRMED]
    if confirmed:
        return 2, confirmed[0]
    return (1 if flags else 0), None


def flags_in_force(ticket_ids: Collection[int], day: date | None) -> QuerySet[TicketFlag]:
    """The flags of these tickets on bans in force on the match day (the ORM's reading of the
    statement's `flag` part)."""
    return TicketFlag.objects.filter(
        ticket_id__in=ticket_ids, ban__status__in=IN_FORCE, ban__starts_on__lte=day
    ).exclude(ban__ends_on__lt=day)


def confirmed_flag(ticket_id: int, day: date | None) -> int | None:
    """The confirmed flag behind a `banned` decision a scanner made offline."""
    return _flags(ticket_id, day)[1]


def _decide_orm(ctx: ScanContext) -> Outcome:
    try:
        with transaction.atomic():
            return _decide_orm_atomic(ctx)
    except IntegrityError:
        # The nonce was stored meanwhile by a concurrent request; this one's writes rolled back.
        prior = _prior(ctx)
        if prior is None:
            raise
        return prior


def _decide_orm_atomic(ctx: ScanContext) -> Outcome:
    prior = _prior(ctx)
    if prior is not None:
        return prior
    ticket = (
        Ticket.objects.filter(fixture_id=ctx.fixture_id, barcode=ctx.barcode)
        .values_list("pk", "status", *TICKET_FIELDS)
        .first()
        if ctx.fixture_id is not None
        else None
    )
    reason = ""
    flag_id = None
    if ticket is None:
        other = Ticket.objects.filter(barcode=ctx.barcode).exists()
        reason = Reason.WRONG_MATCH if other else Reason.UNKNOWN_TICKET
    elif ctx.direction == Scan.Direction.IN:
        pk, status, _block, _row, _seat, _area, end, *_ = ticket
        level, flag_id = _flags(pk, ctx.day)
        if level == 2:
            reason = Reason.BANNED
        elif status == Ticket.Status.CANCELLED:
            reason = Reason.CANCELLED
        elif level == 1:
            reason = Reason.FLAGGED
        elif (end == Ticket.End.HOME and not ctx.home_ok) or (
            end == Ticket.End.AWAY and not ctx.away_ok
        ):
            reason = Reason.WRONG_END
    if ticket is not None and not reason:
        tickets = Ticket.objects.filter(pk=ticket[0])
        if ctx.direction == Scan.Direction.IN:
            admitted = tickets.filter(inside=False).update(
                inside=True, entered_at=ctx.scanned_at, entered_gate_id=ctx.gate_id
            )
            if not admitted:
                reason = Reason.ALREADY_INSIDE
        elif ctx.reentry:
            tickets.filter(inside=True).update(inside=False)
    scan = Scan.objects.create(
        device_id=ctx.device_id,
        nonce=ctx.nonce,
        ticket_id=ticket[0] if ticket else None,
        barcode=ctx.barcode,
        fixture_id=ctx.fixture_id,
        turnstile_id=ctx.turnstile_id,
        gate_id=ctx.gate_id,
        direction=ctx.direction,
        decision=Scan.Decision.DENY if reason else Scan.Decision.ADMIT,
        reason=reason,
        scanned_at=ctx.scanned_at,
        stored_at=ctx.stored_at,
    )
    outcome = Outcome(
        scan.pk, False, scan.decision, reason, scan.ticket_id, *(ticket[2:] if ticket else ())
    )
    return replace(outcome, flag_id=flag_id)


# --- PostgreSQL from the event loop -------------------------------------------------------------

# Connections per process for scans decided on the loop: as many as scans in flight at a busy
# process (16 for 32 turnstile connections over 2 workers), since a scan that waits for a
# connection in the pool cost ~15% more CPU (measured: docs/adr/0005-turnstile-decisions.md).
CONNECTIONS = max(1, int(os.environ.get("SAFEGROUND_ENTRY_CONNECTIONS", "16")))
# Threads per process for what the loop cannot do itself (cache misses, SQLite, the ORM path);
# each keeps its Django connection from scan to scan.
THREADS = max(1, int(os.environ.get("SAFEGROUND_ENTRY_THREADS", "8")))

_pool: tuple[asyncio.AbstractEventLoop, AsyncConnectionPool] | None = None
# One cursor kept per connection (it keeps the adapters it found for each parameter's type), and
# the statement as bytes (not encoded again for every scan).
_cursors: weakref.WeakKeyDictionary[psycopg.AsyncConnection[Any], psycopg.AsyncCursor[Any]] = (
    weakref.WeakKeyDictionary()
)
DECIDE_SQL_BYTES = DECIDE_SQL.encode()
_threads: ThreadPoolExecutor | None = None
_thread_connections: list[Any] = []  # each scan thread's Django connection, closed at shutdown


@functools.cache
def _postgresql() -> bool:
    # Read once: on the loop every request is a new context, and Django would make a new
    # connection object for each one that touched `connection`.
    return connections["default"].vendor == "postgresql"


def on_loop() -> bool:
    """Whether scans are decided on the event loop: the one statement, on PostgreSQL."""
    return USE_SQL and _postgresql()


async def decide_async(ctx: ScanContext) -> Outcome:
    """`decide` for the event loop: the same prepared statement on an async connection, in
    autocommit, so it has committed when this returns."""
    pool = _pool[1] if _pool is not None and _pool[0] is asyncio.get_running_loop() else None
    async with (pool or await _pool_open()).connection() as conn:
        cursor = _cursors.get(conn)
        if cursor is None:
            cursor = _cursors[conn] = conn.cursor()
        await cursor.execute(DECIDE_SQL_BYTES, _params(ctx), prepare=True)
        row = await cursor.fetchone()
    if row is not None:
        return Outcome(*row)
    # The same nonce stored meanwhile by a concurrent request (see decide).
    prior = await in_scan_thread(_prior, ctx)
    return prior  # type: ignore[return-value]


async def _pool_open() -> AsyncConnectionPool:
    """The process's pool, made on its event loop at the first scan (uvicorn has one loop per
    worker; tests run a loop each)."""
    global _pool
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)  # Django's sync cursor class; the pool's are async
    params["autocommit"] = True
    params["prepare_threshold"] = ONLY_WHEN_ASKED
    pool = AsyncConnectionPool(
        kwargs=params,
        min_size=CONNECTIONS,
        max_size=CONNECTIONS,
        timeout=10,
        open=False,
        name="entry-scans",
    )
    _pool = (asyncio.get_running_loop(), pool)
    await pool.open()
    return pool


async def scan_pool_close() -> None:
    """Close the pool of the running loop (tests; a worker shutting down closes its sockets)."""
    global _pool
    if _pool is not None and _pool[0] is asyncio.get_running_loop():
        pool, _pool = _pool[1], None
        await pool.close()


def _in_thread[T](work: Callable[..., T], *args: Any) -> T:
    try:
        return work(*args)
    except Error:
        connection.close()  # this thread's connection failed: drop it, as Django would
        raise


async def in_scan_thread[T](work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` on one of the process's scan threads, which keep their Django connection."""
    global _threads
    if _threads is None:
        _threads = ThreadPoolExecutor(
            THREADS, thread_name_prefix="scan", initializer=_remember_connection
        )
    return await asyncio.get_running_loop().run_in_executor(_threads, _in_thread, work, *args)


def _remember_connection() -> None:
    _thread_connections.append(connections["default"])


async def scan_threads_close() -> None:
    """Stop the scan threads and close the connections they kept (a worker shutting down)."""
    global _threads
    threads, _threads = _threads, None
    if threads is not None:
        await asyncio.get_running_loop().run_in_executor(None, threads.shutdown)
    while _thread_connections:
        kept = _thread_connections.pop()
        kept.inc_thread_sharing()  # its thread has ended: closing it from here is safe
        try:
            kept.close()
        finally:
            kept.dec_thread_sharing()
