"""The turnstile decision itself, in one database round trip on PostgreSQL.

`decide(...)` finds the ticket, checks its match, flags, status and end, admits it with a
conditional UPDATE (only if not already inside: one admission per ticket whatever the concurrency),
and stores the scan, or returns the scan already stored under the device's nonce. PostgreSQL runs
it as one statement (a CTE); other databases (SQLite, the laptop case) run the same steps through
the ORM in one transaction (SQLite's writes are serialised, so the conditional UPDATE is as safe).
Both are exercised by the same tests (docs/adr/0005-turnstile-decisions.md).

`decide_async(...)` runs the same statement from the event loop, on an async connection of the
process's own (entry/asgi.py): no hop to a thread and back for a scan. Scans that arrive while the
statement is running wait and go together in the next one (group commit): one statement, one
commit for all of them. What the loop cannot do without Django's database access runs on the scan
threads (`in_scan_thread`).
"""

import asyncio
import collections
import contextlib
import functools
import json
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

from safeground.bans.models import IN_FORCE

from .models import Scan, Ticket, TicketFlag

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

# One statement for a batch of scans (one, from a thread; as many as were waiting, from the loop):
# each array holds one value per scan, and every row answered carries its scan's place `n`.
# - `looked`: each scan's lookups one row at a time (LIMIT and the aggregate keep them out of any
#   join), so index probes per scan whatever the generic plan guesses of a batch's size.
# - A batch never holds two scans of one ticket or one nonce (_Batches.take), so it moves each
#   ticket at most once; `moving` locks the rows in ticket order, so two batches sharing tickets
#   wait for each other (as two single scans do) and never deadlock.
DECIDE_SQL = f"""
WITH s AS MATERIALIZED (
    SELECT * FROM json_to_recordset(%(scans)s::json) AS s(n int, device bigint, nonce uuid,
        fixture bigint, barcode text, day date, direction text, home_ok bool, away_ok bool,
        reentry bool, scanned_at timestamptz, stored_at timestamptz, turnstile bigint,
        gate bigint)
),
looked AS MATERIALIZED (
    SELECT s.*, p.id AS prior_id, p.decision AS prior_decision, p.reason AS prior_reason,
        p.ticket_id AS prior_ticket, t.id AS ticket_id, t.status, t."end", f.level,
        f.confirmed_id
    FROM s
    LEFT JOIN LATERAL (
        SELECT p.id, p.decision, p.reason, p.ticket_id FROM entry_scan p
        WHERE p.device_id = s.device AND p.nonce = s.nonce LIMIT 1
    ) p ON true
    LEFT JOIN LATERAL (
        SELECT t.id, t.status, t."end" FROM entry_ticket t
        WHERE t.fixture_id = s.fixture AND t.barcode = s.barcode LIMIT 1
    ) t ON true
    LEFT JOIN LATERAL (
        SELECT max(CASE WHEN f.status = 'confirmed' THEN 2 ELSE 1 END) AS level,
            min(f.id) FILTER (WHERE f.status = 'confirmed') AS confirmed_id
        FROM bans_ticketflag f JOIN bans_ban b ON b.id = f.ban_id
        WHERE f.ticket_id = t.id AND f.status IN ('confirmed', 'open')
          AND b.status IN ({IN_FORCE_SQL}) AND b.starts_on <= s.day
          AND (b.ends_on IS NULL OR b.ends_on >= s.day)
    ) f ON true
),
pre AS MATERIALIZED (
    SELECT l.*, CASE
        WHEN l.ticket_id IS NULL THEN CASE
            WHEN EXISTS (SELECT 1 FROM entry_ticket o WHERE o.barcode = l.barcode)
            THEN 'wrong_match' ELSE 'unknown_ticket' END
        WHEN l.direction = 'out' THEN ''
        WHEN l.level = 2 THEN 'banned'
        WHEN l.status = 'cancelled' THEN 'cancelled'
        WHEN l.level = 1 THEN 'flagged'
        WHEN l."end" = 'home' AND NOT l.home_ok THEN 'wrong_end'
        WHEN l."end" = 'away' AND NOT l.away_ok THEN 'wrong_end'
        ELSE '' END AS reason
    FROM looked l WHERE l.prior_id IS NULL
),
moving AS (
    SELECT e.id FROM entry_ticket e
    WHERE e.id IN (SELECT ticket_id FROM pre WHERE reason = '') ORDER BY e.id FOR NO KEY UPDATE
),
moved AS (
    UPDATE entry_ticket e SET
        inside = (pre.direction = 'in'),
        entered_at = CASE WHEN pre.direction = 'in' THEN pre.scanned_at ELSE e.entered_at END,
        entered_gate_id = CASE WHEN pre.direction = 'in' THEN pre.gate ELSE e.entered_gate_id END
    FROM pre
    WHERE pre.reason = '' AND e.id = pre.ticket_id AND e.id IN (SELECT id FROM moving)
      AND ((pre.direction = 'in' AND NOT e.inside)
        OR (pre.direction = 'out' AND pre.reentry AND e.inside))
    RETURNING pre.n
),
stored AS (
    INSERT INTO entry_scan (device_id, nonce, ticket_id, barcode, fixture_id, turnstile_id,
        gate_id, direction, decision, reason, scanned_at, stored_at)
    SELECT d.device, d.nonce, d.ticket_id, d.barcode, d.fixture, d.turnstile, d.gate,
        d.direction, CASE WHEN d.decided = '' THEN 'admit' ELSE 'deny' END, d.decided,
        d.scanned_at, d.stored_at
    FROM (
        SELECT pre.*, CASE
            WHEN pre.reason <> '' THEN pre.reason
            WHEN pre.direction = 'in' AND NOT EXISTS (SELECT 1 FROM moved WHERE moved.n = pre.n)
                THEN 'already_inside'
            ELSE '' END AS decided
        FROM pre
    ) d
    ON CONFLICT (device_id, nonce) DO NOTHING
    RETURNING id, device_id, nonce, decision, reason, ticket_id
),
result AS (
    SELECT pre.n, false AS replayed, st.id, st.decision, st.reason, st.ticket_id,
        pre.confirmed_id
    FROM stored st JOIN pre ON pre.device = st.device_id AND pre.nonce = st.nonce
    UNION ALL
    SELECT n, true, prior_id, prior_decision, prior_reason, prior_ticket, NULL
    FROM looked WHERE prior_id IS NOT NULL
)
SELECT r.n, r.id, r.replayed, r.decision, r.reason, r.ticket_id, t.block_id, t.row, t.seat,
    t.area, t."end", t.entered_at, t.entered_gate_id,
    CASE WHEN r.reason = 'banned' THEN r.confirmed_id END
FROM result r LEFT JOIN entry_ticket t ON t.id = r.ticket_id
"""
# Spaces squeezed: psycopg caches its parse of a statement of up to 4,096 bytes only.
DECIDE_SQL = " ".join(DECIDE_SQL.split())

# The statement's columns for each scan, and the ScanContext field each is read from.
COLUMNS = {
    "device": "device_id", "nonce": "nonce", "fixture": "fixture_id", "barcode": "barcode",
    "day": "day", "direction": "direction", "home_ok": "home_ok", "away_ok": "away_ok",
    "reentry": "reentry", "scanned_at": "scanned_at", "stored_at": "stored_at",
    "turnstile": "turnstile_id", "gate": "gate_id",
}  # fmt: skip


def _params(batch: list[ScanContext]) -> dict[str, str]:
    """The batch as one JSON parameter: one value to adapt, however many scans (a list per
    column costs psycopg more than the statement's own work for a single scan)."""
    scans = []
    for n, ctx in enumerate(batch, 1):
        scan: dict[str, Any] = {column: getattr(ctx, field) for column, field in COLUMNS.items()}
        scan["n"] = n
        scans.append(scan)
    return {"scans": json.dumps(scans, default=str)}


def _outcomes(batch: list[ScanContext], rows: list[tuple[Any, ...]]) -> list[Outcome | None]:
    """Each scan's outcome in the batch's order; None for a scan whose nonce a concurrent request
    stored between this statement's read and its insert (it changed nothing for that scan)."""
    found = {row[0]: Outcome(*row[1:]) for row in rows}
    return [found.get(n) for n in range(1, len(batch) + 1)]


# How the statement is planned. The planner takes a batch for ~100 scans and tables just filled
# or emptied for tiny: left to itself it chose hash joins over whole tables, a plan that stays
# cached as they fill (a scan then reads every ticket). With these, every lookup is an index probe.
# The loop's connections keep them for good (they run nothing else, _batches_open); Django's
# connection sets them around the statement only, so whenever PostgreSQL plans it there (first
# use, or after new statistics) it plans it so.
PLAN_SETTINGS = {
    "plan_cache_mode": "force_generic_plan",
    "enable_seqscan": "off",
    "enable_hashjoin": "off",
    "enable_mergejoin": "off",
}
PLAN_ON = "SELECT " + ", ".join(
    f"set_config('{k}', '{v}', false)" for k, v in PLAN_SETTINGS.items()
)
PLAN_OFF = "SELECT set_config(name, reset_val, false) FROM pg_settings WHERE name = ANY(%s)"


def _decide_sql(ctx: ScanContext) -> Outcome | None:
    with _prepared_cursor() as cursor:
        cursor.execute(PLAN_ON)
        try:
            cursor.execute(DECIDE_SQL, _params([ctx]))
            rows = cursor.fetchall()
        finally:
            # In a failed transaction the settings go back with its rollback.
            if cursor.connection.info.transaction_status != psycopg.pq.TransactionStatus.INERROR:
                cursor.execute(PLAN_OFF, (list(PLAN_SETTINGS),))
    return _outcomes([ctx], rows)[0]


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

# Statements in flight per process for scans decided on the loop, each on its own connection.
# Scans that arrive while they are all busy wait, and go together in the next statement: its fixed
# cost (starting the executor, the foreign-key checks, the commit) is then shared. One per process
# was the fastest measured (docs/adr/0005-turnstile-decisions.md); at a light load a scan finds
# the connection free and goes alone.
CONNECTIONS = max(1, int(os.environ.get("SAFEGROUND_ENTRY_CONNECTIONS", "1")))
BATCH_LIMIT = 64  # scans in one statement at most
POOL_TIMEOUT = 10.0  # seconds a statement waits for a connection before its scans fail
# Threads per process for what the loop cannot do itself (cache misses, SQLite, the ORM path);
# each keeps its Django connection from scan to scan.
THREADS = max(1, int(os.environ.get("SAFEGROUND_ENTRY_THREADS", "8")))


@dataclass(eq=False)
class _Waiting:
    ctx: ScanContext
    answer: asyncio.Future[Outcome | None]


class _Batches:
    """Scans waiting on one event loop, and the statements deciding them."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self.waiting: collections.deque[_Waiting] = collections.deque()
        self.running: set[asyncio.Task[None]] = set()

    def decide(self, ctx: ScanContext) -> asyncio.Future[Outcome | None]:
        answer = asyncio.get_running_loop().create_future()
        self.waiting.append(_Waiting(ctx, answer))
        self.start()
        return answer

    def start(self) -> None:
        while self.waiting and len(self.running) < CONNECTIONS:
            task = asyncio.create_task(self.run(self.take()))
            self.running.add(task)
            task.add_done_callback(self.done)

    def done(self, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        self.start()

    def take(self) -> list[_Waiting]:
        """The next batch, in order of arrival; a second scan of a ticket (or a nonce sent
        again) waits for the next, so a statement moves each ticket at most once."""
        batch: list[_Waiting] = []
        later: list[_Waiting] = []
        seen: set[tuple[Any, ...]] = set()
        while self.waiting and len(batch) < BATCH_LIMIT:
            waiting = self.waiting.popleft()
            ctx = waiting.ctx
            keys = (("ticket", ctx.fixture_id, ctx.barcode), ("nonce", ctx.device_id, ctx.nonce))
            if seen.intersection(keys):
                later.append(waiting)
                continue
            seen.update(keys)
            batch.append(waiting)
        self.waiting.extendleft(reversed(later))
        return batch

    async def run(self, batch: list[_Waiting]) -> None:
        try:
            try:
                outcomes = await self.statement([waiting.ctx for waiting in batch])
            except psycopg.Error as error:
                # The server refused the statement (no sqlstate: the connection or the pool
                # failed, and would fail each scan again). Nothing was written (one statement);
                # one scan's fault must not be the others': each goes again on its own.
                if len(batch) == 1 or error.sqlstate is None:
                    raise
                for waiting in batch:
                    try:
                        _answer(waiting, (await self.statement([waiting.ctx]))[0])
                    except Exception as error:
                        _fail(waiting, error)
                return
            for waiting, outcome in zip(batch, outcomes, strict=True):
                _answer(waiting, outcome)
        except BaseException as error:
            for waiting in batch:
                _fail(waiting, error)
            if not isinstance(error, Exception):
                raise

    async def statement(self, batch: list[ScanContext]) -> list[Outcome | None]:
        async with self.pool.connection() as conn:
            cursor = _cursors.get(conn)
            if cursor is None:
                cursor = _cursors[conn] = conn.cursor()
            await cursor.execute(DECIDE_SQL_BYTES, _params(batch), prepare=True)
            rows = await cursor.fetchall()
        return _outcomes(batch, rows)


def _answer(waiting: _Waiting, outcome: Outcome | None) -> None:
    if not waiting.answer.done():  # its request may have gone (the client hung up)
        waiting.answer.set_result(outcome)


def _fail(waiting: _Waiting, error: BaseException) -> None:
    if not waiting.answer.done():
        waiting.answer.set_exception(error)


_batches: tuple[asyncio.AbstractEventLoop, _Batches] | None = None
# One cursor kept per connection (it keeps the adapters it found for each parameter's type), and
# the statement as bytes (not encoded again for every batch).
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
    """`decide` for the event loop: the same statement on an async connection, in autocommit,
    with whatever other scans were waiting for one; it has committed when this returns."""
    batches = (
        _batches[1] if _batches is not None and _batches[0] is asyncio.get_running_loop() else None
    )
    outcome = await (batches or await _batches_open()).decide(ctx)
    if outcome is not None:
        return outcome
    # The same nonce stored meanwhile by a concurrent request (see decide).
    prior = await in_scan_thread(_prior, ctx)
    return prior  # type: ignore[return-value]


async def _batches_open() -> _Batches:
    """The process's pool and batches, made on its event loop at the first scan (uvicorn has
    one loop per worker; tests run a loop each)."""
    global _batches
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)  # Django's sync cursor class; the pool's are async
    params["autocommit"] = True
    params["prepare_threshold"] = ONLY_WHEN_ASKED
    # These connections run the decision only. Its plan is made once per connection (else
    # PostgreSQL plans it afresh for each batch size), and every lookup in it has a unique index:
    # a sequential scan, chosen while the scans table was small, would stay in that plan as the
    # table grew.
    settings = " ".join(f"-c {name}={value}" for name, value in PLAN_SETTINGS.items())
    params["options"] = " ".join((params.get("options", ""), settings)).strip()
    pool = AsyncConnectionPool(
        kwargs=params,
        min_size=CONNECTIONS,
        max_size=CONNECTIONS,
        timeout=POOL_TIMEOUT,
        open=False,
        name="entry-scans",
    )
    batches = _Batches(pool)
    _batches = (asyncio.get_running_loop(), batches)
    await pool.open()
    return batches


async def scan_pool_close() -> None:
    """Close the pool of the running loop (tests; a worker shutting down closes its sockets)."""
    global _batches
    if _batches is not None and _batches[0] is asyncio.get_running_loop():
        batches, _batches = _batches[1], None
        await batches.pool.close()


def _in_thread[T](work: Callable[..., T], *args: Any) -> T:
    try:
        return work(*args)
    except Error:
        connection.close()  # this thread's connection failed: drop it, as Django would
        raise


def _scan_threads() -> ThreadPoolExecutor:
    global _threads
    if _threads is None:
        _threads = ThreadPoolExecutor(
            THREADS, thread_name_prefix="scan", initializer=_remember_connection
        )
    return _threads


async def in_scan_thread[T](work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` on one of the process's scan threads, which keep their Django connection."""
    threads = _scan_threads()
    return await asyncio.get_running_loop().run_in_executor(threads, _in_thread, work, *args)


def in_scan_thread_soon(work: Callable[[], None]) -> None:
    """`work()` on a scan thread, not waited for (the loop's cache reloads, which report their
    own errors): what it raises is dropped, after a database error has closed the thread's
    connection as `in_scan_thread` does."""
    # RuntimeError: the threads are stopping with the worker; the entry expires instead.
    with contextlib.suppress(RuntimeError):
        _scan_threads().submit(_in_thread, work)


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
