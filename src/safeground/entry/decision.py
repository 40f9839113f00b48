"""The turnstile decision itself, in one database round trip on PostgreSQL: the rules of
entry.rules, in their order, applied to one scan or a batch.

`decide(...)` finds the ticket, checks its match, flags, status and end, admits it with a
conditional UPDATE (only if not already inside: one admission per ticket whatever the concurrency),
and stores the scan, or returns the scan already stored under the device's nonce. PostgreSQL runs
it as one statement (a CTE, DECIDE_SQL); SQLite (the laptop case, the default install) as three
in one transaction that holds its write lock (decide_sqlite: the reading with the same reasons'
CASE, the conditional UPDATE, the INSERT); the ORM path runs the same steps one by one (USE_SQL
off). All are exercised by the same tests (docs/adr/0005-turnstile-decisions.md). The
statements' order of reasons and the ORM's are generated from entry.rules.

The same statements run for a batch of scans from the event loop (entry.runtime.loop, and
runtime.one_writer on SQLite); this module knows nothing of the loop, its pool or its threads.
"""

import json
import sqlite3
from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any
from uuid import UUID

import psycopg
from django.db import IntegrityError, connection, transaction
from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime

from safeground import clock
from safeground.bans.models import in_force_q, in_force_sql
from safeground.prepared import prepared_cursor

from . import rules
from .counts import PREVENTING
from .models import Scan, Ticket, TicketFlag

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
    fits_format: bool = False  # the barcode fits the ground's ticket format (forged if unissued)


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
        return prior_outcome(ctx)  # type: ignore[return-value]
    if USE_SQL and connection.vendor == "sqlite":
        # Django's connection, in the caller's transaction if it has one (tests, the demo).
        with transaction.atomic(), connection.cursor() as cursor:
            return decide_sqlite(cursor, [ctx])[0]
    return _decide_orm(ctx)


# --- PostgreSQL: one statement ----------------------------------------------------------------

# The statement's reading of each reason over a scan's looked-up row `l` (one WHEN each; the last
# reason without a ticket is the ELSE of the others). Their order is entry.rules'.
SQL_CHECKS: dict[str, tuple[str, ...]] = {
    "wrong_match": ("EXISTS (SELECT 1 FROM entry_ticket o WHERE o.barcode = l.barcode)",),
    "forged": ("l.fits",),
    "unknown_ticket": (),
    "banned": ("l.level = 2",),
    "cancelled": ("l.status = 'cancelled'",),
    "flagged": ("l.level = 1",),
    "wrong_end": (
        "l.\"end\" = 'home' AND NOT l.home_ok",
        "l.\"end\" = 'away' AND NOT l.away_ok",
    ),
}
(ADMISSION,) = rules.codes("admission")  # decided by the conditional UPDATE
PREVENTING_SQL = ", ".join(f"'{code}'" for code in PREVENTING)


def _whens(codes: tuple[str, ...]) -> str:
    return " ".join(f"WHEN {check} THEN '{code}'" for code in codes for check in SQL_CHECKS[code])


def _no_ticket_case() -> str:
    *checked, otherwise = rules.codes("no_ticket")
    return f"CASE {_whens(tuple(checked))} ELSE '{otherwise}' END"


# One statement for a batch of scans (one, from a thread; as many as were waiting, from the loop):
# each array holds one value per scan, and every row answered carries its scan's place `n`.
# - `looked`: each scan's lookups one row at a time (LIMIT and the aggregate keep them out of any
#   join), so index probes per scan whatever the generic plan guesses of a batch's size.
# - A batch never holds two scans of one ticket or one nonce (runtime/loop.py, POLICY's keys), so
#   it moves each ticket at most once; `moving` locks the rows in ticket order, so two batches
#   sharing tickets wait for each other (as two single scans do) and never deadlock. It locks the
#   tickets turned away as banned, flagged or cancelled too: the trigger that counts them
#   (entry/counts.py) locks them again, and finds them already locked, in the same order.
DECIDE_SQL = f"""
WITH s AS MATERIALIZED (
    SELECT * FROM json_to_recordset(%(scans)s::json) AS s(n int, device bigint, nonce uuid,
        fixture bigint, barcode text, day date, direction text, home_ok bool, away_ok bool,
        reentry bool, scanned_at timestamptz, stored_at timestamptz, turnstile bigint,
        gate bigint, fits bool)
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
        FROM bans_ticketflag f LEFT JOIN bans_ban b ON b.id = f.ban_id
        LEFT JOIN bans_leagueban l ON l.id = f.league_ban_id
        WHERE f.ticket_id = t.id AND f.status IN ('confirmed', 'open')
          AND (({in_force_sql("b", "s.day")})
            OR (l.id IS NOT NULL AND l.withdrawn_at IS NULL
                AND (l.ends_on IS NULL OR l.ends_on >= s.day)))
    ) f ON true
),
pre AS MATERIALIZED (
    SELECT l.*, CASE
        WHEN l.ticket_id IS NULL THEN {_no_ticket_case()}
        WHEN l.direction = 'out' THEN ''
        {_whens(rules.codes("ticket"))}
        ELSE '' END AS reason
    FROM looked l WHERE l.prior_id IS NULL
),
moving AS (
    SELECT e.id FROM entry_ticket e
    WHERE e.id IN (SELECT ticket_id FROM pre WHERE reason IN ('', {PREVENTING_SQL}))
    ORDER BY e.id FOR NO KEY UPDATE
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
                THEN '{ADMISSION}'
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
    "turnstile": "turnstile_id", "gate": "gate_id", "fits": "fits_format",
}  # fmt: skip


def params(batch: list[ScanContext]) -> dict[str, str]:
    """The batch as one JSON parameter: one value to adapt, however many scans (a list per
    column costs psycopg more than the statement's own work for a single scan)."""
    scans = []
    for n, ctx in enumerate(batch, 1):
        scan: dict[str, Any] = {column: getattr(ctx, field) for column, field in COLUMNS.items()}
        scan["n"] = n
        scans.append(scan)
    return {"scans": json.dumps(scans, default=str)}


def outcomes(batch: list[ScanContext], rows: list[tuple[Any, ...]]) -> list[Outcome | None]:
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
    with prepared_cursor() as cursor:
        cursor.execute(PLAN_ON)
        try:
            cursor.execute(DECIDE_SQL, params([ctx]))
            rows = cursor.fetchall()
        finally:
            # In a failed transaction the settings go back with its rollback.
            if cursor.connection.info.transaction_status != psycopg.pq.TransactionStatus.INERROR:
                cursor.execute(PLAN_OFF, (list(PLAN_SETTINGS),))
    return outcomes([ctx], rows)[0]


# --- SQLite: a batch in one transaction ---------------------------------------------------------

# SQLite has no data-modifying CTE, so a batch is three statements in one transaction, whatever
# its size: the reading and the reasons (the same CASE as PostgreSQL's, from entry.rules), the
# conditional UPDATE of the tickets that move, the INSERT of the new scans. The transaction holds
# SQLite's one write lock from its BEGIN IMMEDIATE (settings.SQLITE_OPTIONS; the writer's own
# connection, runtime.one_writer): nothing else writes between the reading and the commit. Each
# statement takes the batch as one JSON text (json_each), as PostgreSQL's takes one parameter.
# A batch never holds two scans of one ticket or one nonce (the group commit's keys).


def _from_json(columns: tuple[str, ...]) -> str:
    fields = ", ".join(f"json_extract(value, '$.{c}') AS \"{c}\"" for c in columns)
    return f"SELECT {fields} FROM json_each(%s)"


_SQLITE_FLAGS = f"""FROM bans_ticketflag f LEFT JOIN bans_ban b ON b.id = f.ban_id
    LEFT JOIN bans_leagueban l ON l.id = f.league_ban_id
    WHERE f.ticket_id = pre.ticket_id AND f.status IN ('confirmed', 'open')
      AND (({in_force_sql("b", "pre.day")})
        OR (l.id IS NOT NULL AND l.withdrawn_at IS NULL
            AND (l.ends_on IS NULL OR l.ends_on >= pre.day)))"""

# Each scan's prior scan (by nonce), its ticket, its flags' level and its reason ('' when the
# ticket may move); the answer's ticket columns; the confirmed flag behind `banned`. SQLite inlines
# the CTEs (the flags' lookup runs for each use of `level`): materialising them cost more, 0.94
# against 0.71 ms of CPU for a batch of 16 (Session 6).
SQLITE_READ_SQL = f"""
WITH s AS ({_from_json((*COLUMNS, "n"))}),
pre AS (
    SELECT s.*, p.id AS prior_id, p.decision AS prior_decision, p.reason AS prior_reason,
        p.ticket_id AS prior_ticket, t.id AS ticket_id, t.status, t."end"
    FROM s
    LEFT JOIN entry_scan p ON p.device_id = s.device AND p.nonce = s.nonce
    LEFT JOIN entry_ticket t ON p.id IS NULL AND t.fixture_id = s.fixture
        AND t.barcode = s.barcode
),
looked AS (
    SELECT pre.*, (SELECT max(CASE WHEN f.status = 'confirmed' THEN 2 ELSE 1 END)
        {_SQLITE_FLAGS}) AS level
    FROM pre
),
decided AS (
    SELECT l.*, CASE
        WHEN l.prior_id IS NOT NULL THEN l.prior_reason
        WHEN l.ticket_id IS NULL THEN {_no_ticket_case()}
        WHEN l.direction = 'out' THEN ''
        {_whens(rules.codes("ticket"))}
        ELSE '' END AS reason
    FROM looked l
)
SELECT pre.n, pre.prior_id, pre.prior_decision, pre.reason,
    coalesce(pre.prior_ticket, pre.ticket_id), t.block_id, t.row, t.seat, t.area, t."end",
    t.entered_at, t.entered_gate_id,
    CASE WHEN pre.prior_id IS NULL AND pre.reason = 'banned' THEN
        (SELECT min(CASE WHEN f.status = 'confirmed' THEN f.id END) {_SQLITE_FLAGS}) END
FROM decided pre LEFT JOIN entry_ticket t ON t.id = coalesce(pre.prior_ticket, pre.ticket_id)
"""

# The tickets that move, each only if it is where the scan needs it (one admission a ticket).
SQLITE_MOVE_SQL = f"""
UPDATE entry_ticket SET
    inside = (m.direction = 'in'),
    entered_at = CASE WHEN m.direction = 'in' THEN m.scanned_at ELSE entered_at END,
    entered_gate_id = CASE WHEN m.direction = 'in' THEN m.gate ELSE entered_gate_id END
FROM ({_from_json(("ticket", "direction", "reentry", "scanned_at", "gate"))}) AS m
WHERE entry_ticket.id = m.ticket
  AND ((m.direction = 'in' AND NOT entry_ticket.inside)
    OR (m.direction = 'out' AND m.reentry AND entry_ticket.inside))
RETURNING entry_ticket.id
"""

_STORED = ("device", "nonce", "ticket", "barcode", "fixture", "turnstile", "gate", "direction",
           "decision", "reason", "scanned_at", "stored_at")  # fmt: skip
SQLITE_STORE_SQL = f"""
INSERT INTO entry_scan (device_id, nonce, ticket_id, barcode, fixture_id, turnstile_id, gate_id,
    direction, decision, reason, scanned_at, stored_at)
{_from_json(_STORED)}
RETURNING id, device_id, nonce
"""
SQLITE_READ_SQL, SQLITE_MOVE_SQL, SQLITE_STORE_SQL = (
    " ".join(sql.split()) for sql in (SQLITE_READ_SQL, SQLITE_MOVE_SQL, SQLITE_STORE_SQL)
)
# Django's cursor takes %s (and logs the statement with it); sqlite3's own, `?`.
_QMARK = {
    sql: sql.replace("%s", "?") for sql in (SQLITE_READ_SQL, SQLITE_MOVE_SQL, SQLITE_STORE_SQL)
}


def _sqlite_time(moment: datetime) -> str:
    """A time as Django stores it in SQLite (DatabaseOperations.adapt_datetimefield_value): UTC,
    without its zone."""
    return str(moment.astimezone(UTC).replace(tzinfo=None))


def _aware(value: datetime | str | None) -> datetime | None:
    """A stored time read back: as Django reads it, aware, in UTC."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def decide_sqlite(cursor: Any, batch: list[ScanContext]) -> list[Outcome]:
    """Each scan's outcome, in the batch's order, on `cursor`'s connection, inside a transaction
    that holds the write lock (the caller's). What fails raises, and the caller rolls back."""

    def execute(sql: str, rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        own = isinstance(cursor, sqlite3.Cursor)
        cursor.execute(_QMARK[sql] if own else sql, [json.dumps(rows)])
        return cursor.fetchall()

    scans = []
    for n, ctx in enumerate(batch, 1):
        scan: dict[str, Any] = {column: getattr(ctx, field) for column, field in COLUMNS.items()}
        scan.update(
            n=n,
            nonce=ctx.nonce.hex,  # a UUIDField in SQLite: 32 hex digits
            scanned_at=_sqlite_time(ctx.scanned_at),
            stored_at=_sqlite_time(ctx.stored_at),
            day=clock.day_iso(ctx.day) if ctx.day else None,
        )
        scans.append(scan)
    read = {row[0]: row for row in execute(SQLITE_READ_SQL, scans)}
    # The scan that may move each ticket: the first of the batch (a second, which the group
    # commit keeps for the next batch anyway, finds it moved).
    moving: dict[int, int] = {}
    for n, (_, prior, _decision, reason, ticket, *_rest) in read.items():
        if prior is None and ticket is not None and not reason:
            moving.setdefault(ticket, n)
    moved: set[int] = set()
    if moving:
        rows = [scans[n - 1] | {"ticket": ticket} for ticket, n in moving.items()]
        moved = {ticket for (ticket,) in execute(SQLITE_MOVE_SQL, rows)}
    new = []
    for n, (_, prior, _decision, reason, ticket, *_rest) in read.items():
        if prior is not None:
            continue
        scan = scans[n - 1]
        went = ticket in moved and moving[ticket] == n
        if not reason and scan["direction"] == Scan.Direction.IN and not went:
            reason = ADMISSION
        scan.update(ticket=ticket, reason=reason, decision="deny" if reason else "admit")
        new.append(scan)
    stored: dict[tuple[int, str], int] = {}
    if new:
        stored = {(device, nonce): pk for pk, device, nonce in execute(SQLITE_STORE_SQL, new)}
    outcomes = []
    for n, scan in enumerate(scans, 1):
        _, prior, prior_decision, reason, ticket, *seat, entered_at, gate, flag = read[n]
        if prior is not None:
            outcome = Outcome(prior, True, prior_decision, reason, ticket, *seat)
        else:
            pk = stored[scan["device"], scan["nonce"]]
            outcome = Outcome(pk, False, scan["decision"], scan["reason"], ticket, *seat)
        outcomes.append(
            replace(outcome, entered_at=_aware(entered_at), entered_gate_id=gate, flag_id=flag)
        )
    return outcomes


# --- every database: the ORM, one transaction ---------------------------------------------------

TICKET_FIELDS = ("block_id", "row", "seat", "area", "end", "entered_at", "entered_gate_id")


def prior_outcome(ctx: ScanContext) -> Outcome | None:
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
    return TicketFlag.objects.filter(in_force_on(day), ticket_id__in=ticket_ids)


def in_force_on(day: date | None) -> Q:
    """A flag whose ban is in force on the day: one of the register's, or a league ban another
    club still publishes (safeground.exchange) that has not ended."""
    own = in_force_q(day, via="ban__")
    league = Q(league_ban__isnull=False, league_ban__withdrawn_at__isnull=True) & (
        Q(league_ban__ends_on__isnull=True) | Q(league_ban__ends_on__gte=day)
    )
    return own | league


def confirmed_flag(ticket_id: int, day: date | None) -> int | None:
    """The confirmed flag behind a `banned` decision a scanner made offline."""
    return _flags(ticket_id, day)[1]


def no_ticket_holds(*, other_match: bool, fits: bool) -> dict[str, bool]:
    """The ORM's reading of the reasons without a ticket of this match (SQL_CHECKS')."""
    return {"wrong_match": other_match, "forged": fits, "unknown_ticket": True}


def ticket_holds(ctx: ScanContext, *, status: str, end: str, level: int) -> dict[str, bool]:
    """The ORM's reading of the reasons on the ticket (SQL_CHECKS'); `level` as `_flags`."""
    return {
        "banned": level == 2,
        "cancelled": status == Ticket.Status.CANCELLED,
        "flagged": level == 1,
        "wrong_end": (end == Ticket.End.HOME and not ctx.home_ok)
        or (end == Ticket.End.AWAY and not ctx.away_ok),
    }


def _decide_orm(ctx: ScanContext) -> Outcome:
    try:
        with transaction.atomic():
            return _decide_orm_atomic(ctx)
    except IntegrityError:
        # The nonce was stored meanwhile by a concurrent request; this one's writes rolled back.
        prior = prior_outcome(ctx)
        if prior is None:
            raise
        return prior


def _decide_orm_atomic(ctx: ScanContext) -> Outcome:
    prior = prior_outcome(ctx)
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
        reason = rules.first(no_ticket_holds(other_match=other, fits=ctx.fits_format))
    elif ctx.direction == Scan.Direction.IN:
        pk, status, _block, _row, _seat, _area, end, *_ = ticket
        level, flag_id = _flags(pk, ctx.day)
        reason = rules.first(ticket_holds(ctx, status=status, end=end, level=level))
    if ticket is not None and not reason:
        tickets = Ticket.objects.filter(pk=ticket[0])
        if ctx.direction == Scan.Direction.IN:
            admitted = tickets.filter(inside=False).update(
                inside=True, entered_at=ctx.scanned_at, entered_gate_id=ctx.gate_id
            )
            if not admitted:
                reason = ADMISSION
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
