"""Every write about tickets: importing a ticketing system's export, cancelling a ticket, and
deciding a turnstile scan (`scan_decide`)."""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from safeground.bans.flagging import MatchReport, fixture_match
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.venues.models import Block

from . import decisions, live_counts, lookups
from .models import Scan, Ticket
from .ticket_file import BlockInfo, Progress, TicketFileError, TicketRow, parse_tickets

BATCH = 2000
FIELDS = ("holder_name", "holder_dob", "block_id", "row", "seat", "area", "end")
INSERT_COLUMNS = (
    "fixture_id", "barcode", "holder_name", "holder_dob", "block_id", "row", "seat", "area",
    "end", "status", "imported_at", "updated_at", "cancelled_reason",
)  # fmt: skip


@dataclass(frozen=True)
class ImportReport:
    created: int
    updated: int
    unchanged: int
    match: MatchReport


def ground_blocks(fixture: Fixture) -> dict[str, BlockInfo]:
    return {
        code: BlockInfo(pk, tuple(rows or ()), seats_per_row, first_seat)
        for pk, code, rows, seats_per_row, first_seat in Block.objects.filter(
            ground_id=fixture.ground_id
        ).values_list("pk", "code", "rows", "seats_per_row", "first_seat")
    }


def tickets_import(
    *, fixture: Fixture, path: Path, progress: Progress | None = None, today: date | None = None
) -> ImportReport:
    """Import a CSV export for one match: checked whole first, then written whole, or not at all.

    The same file again updates the tickets it holds (key: match + barcode), never duplicates."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TicketFileError([f"file: cannot be read ({error.strerror or error})"]) from None
    rows = parse_tickets(
        data, blocks=ground_blocks(fixture), today=today or timezone.localdate(), progress=progress
    )
    return tickets_write(fixture=fixture, rows=rows, progress=progress)


@transaction.atomic
def tickets_write(
    *, fixture: Fixture, rows: Sequence[TicketRow], progress: Progress | None = None
) -> ImportReport:
    """Create new tickets and update changed ones in batches, then match every holder."""
    now = timezone.now()
    existing = {
        values[0]: values
        for values in Ticket.objects.filter(fixture=fixture).values_list("barcode", "pk", *FIELDS)
    }
    new: list[TicketRow] = []
    changed: list[Ticket] = []
    unchanged = 0
    for row in rows:
        values = (
            row.holder_name,
            row.holder_dob,
            row.block_id,
            row.row,
            row.seat,
            row.area,
            row.end,
        )
        stored = existing.get(row.barcode)
        if stored is None:
            new.append(row)
        elif tuple(stored[2:]) != values:
            ticket = _ticket(fixture, row, now)
            ticket.pk = stored[1]
            changed.append(ticket)
        else:
            unchanged += 1
    total = len(new) + len(changed)
    for done, batch in enumerate(_batches(new), start=1):
        _insert(batch, fixture, now)
        if progress:
            progress("written", min(done * BATCH, total), total)
    for done, changed_batch in enumerate(_batches(changed), start=1):
        Ticket.objects.bulk_update(changed_batch, [*FIELDS, "updated_at"])
        if progress:
            progress("written", min(len(new) + done * BATCH, total), total)
    match = fixture_match(fixture=fixture)
    return ImportReport(created=len(new), updated=len(changed), unchanged=unchanged, match=match)


def _ticket(fixture: Fixture, row: TicketRow, now: datetime) -> Ticket:
    return Ticket(
        fixture=fixture,
        barcode=row.barcode,
        holder_name=row.holder_name,
        holder_dob=row.holder_dob,
        block_id=row.block_id,
        row=row.row,
        seat=row.seat,
        area=row.area,
        end=row.end,
        imported_at=now,
        updated_at=now,
    )


def _insert(rows: list[TicketRow], fixture: Fixture, now: datetime) -> None:
    """New tickets in one executemany per batch: ORM bulk_create costs ~10x more per row here
    (57,000 tickets in a demo load)."""
    ops = connection.ops
    stamp = ops.adapt_datetimefield_value(now)
    columns = ", ".join(ops.quote_name(c) for c in INSERT_COLUMNS)
    marks = ", ".join(["%s"] * len(INSERT_COLUMNS))
    table = ops.quote_name(Ticket._meta.db_table)
    values = [
        (fixture.pk, r.barcode, r.holder_name, ops.adapt_datefield_value(r.holder_dob),
         r.block_id, r.row, r.seat, r.area, r.end, Ticket.Status.VALID, stamp, stamp, "")
        for r in rows
    ]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)


def _batches[T](items: list[T]) -> Iterable[list[T]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


@transaction.atomic
def ticket_cancel(*, ticket: Ticket, reason: str) -> Ticket:
    """Cancel a ticket (a confirmed ban match, for one). A cancelled ticket admits nobody."""
    Ticket.objects.filter(pk=ticket.pk).update(
        status=Ticket.Status.CANCELLED, cancelled_reason=reason[:200], updated_at=timezone.now()
    )
    ticket.refresh_from_db()
    return ticket


# --- turnstile scans (docs/adr/0005-turnstile-decisions.md) -----------------------------------

BARCODE = re.compile(r"[\x21-\x7e]{1,64}")  # printable ASCII, no spaces, at most 64
DIRECTIONS = frozenset(Scan.Direction.values)  # `.values` builds a new list at every use
Reason = Scan.Reason


class ScanError(ValueError):
    """A scan the gates refuse to decide; `field` names what is wrong (HTTP 400, nothing stored)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ScanResult:
    decision: str
    reason: str | None
    message: str
    ticket: dict[str, Any] | None
    replayed: bool
    scan_id: int

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "reason": self.reason,
            "message": self.message,
            "ticket": self.ticket,
            "replayed": self.replayed,
        }


@dataclass(frozen=True)
class CheckedScan:
    """A well-formed scan with what the decision needs: its context for the database, and the
    turnstile, gate ends and ground for the answer and the control room."""

    context: decisions.ScanContext
    place: lookups.TurnstileInfo
    ends: lookups.GateEnds | None
    ground: lookups.GroundInfo


def scan_check(
    *,
    device: lookups.DeviceInfo,
    turnstile: str,
    barcode: str,
    scanned_at: datetime,
    nonce: UUID,
    direction: str = Scan.Direction.IN,
    now: datetime | None = None,
    cached_only: bool = False,
) -> CheckedScan:
    """Check a scan's fields and find its turnstile, match and gate ends; ScanError naming the
    field when it is wrong. Writes nothing. `cached_only`: from the event loop, lookups.NotCached
    when something is not in the process's caches."""
    now = now or timezone.now()
    if not BARCODE.fullmatch(barcode):
        raise ScanError("barcode", "must be 1 to 64 printable characters, without spaces")
    if direction not in DIRECTIONS:
        raise ScanError("direction", "must be 'in' or 'out'")
    if scanned_at.tzinfo is None:
        raise ScanError("scanned_at", "must carry a time zone (e.g. 2016-10-26T19:05:00+01:00)")
    if scanned_at > now + timedelta(seconds=settings.SAFEGROUND_CLOCK_SKEW_SECONDS):
        raise ScanError("scanned_at", "is in the future: check the turnstile's clock")
    try:
        place = lookups.turnstile_for(device.organisation_id, turnstile, cached_only=cached_only)
    except lookups.AmbiguousTurnstile:
        raise ScanError("turnstile", f"{turnstile!r} names turnstiles at several grounds") from None
    if place is None:
        raise ScanError("turnstile", f"no turnstile {turnstile!r} at your organisation's grounds")
    fixture_id = lookups.fixture_at(place.ground_id, scanned_at, cached_only=cached_only)
    ends = (
        lookups.gate_ends(fixture_id, place.gate_id, cached_only=cached_only)
        if fixture_id is not None
        else None
    )
    context = decisions.ScanContext(
        device_id=device.id,
        turnstile_id=place.id,
        gate_id=place.gate_id,
        fixture_id=fixture_id,
        day=ends.day if ends else None,
        home_ok=bool(ends and ends.home),
        away_ok=bool(ends and ends.away),
        reentry=bool(ends and ends.reentry),
        direction=direction,
        barcode=barcode,
        nonce=nonce,
        scanned_at=scanned_at,
        stored_at=now,
    )
    ground = lookups.ground_info(place.ground_id, cached_only=cached_only)
    return CheckedScan(context=context, place=place, ends=ends, ground=ground)


def scan_decide(
    *,
    device: lookups.DeviceInfo,
    turnstile: str,
    barcode: str,
    scanned_at: datetime,
    nonce: UUID,
    direction: str = Scan.Direction.IN,
    now: datetime | None = None,
) -> ScanResult:
    """Admit or deny one scan at a turnstile, store it, and say why, in words a steward can act on.

    The match is the one at the turnstile's ground whose kick-off is nearest the time scanned
    (lookups.fixture_at). One admission per ticket is the database's: a conditional UPDATE.
    The same nonce from the same device again returns the stored decision and stores nothing."""
    scan = scan_check(
        device=device,
        turnstile=turnstile,
        barcode=barcode,
        scanned_at=scanned_at,
        nonce=nonce,
        direction=direction,
        now=now,
    )
    outcome = decisions.decide(scan.context)
    result = scan_result(scan, outcome)
    scan_announce(scan, outcome, result)
    return result


async def scan_decide_async(
    *,
    device: lookups.DeviceInfo,
    turnstile: str,
    barcode: str,
    scanned_at: datetime,
    nonce: UUID,
    direction: str = Scan.Direction.IN,
    now: datetime | None = None,
) -> ScanResult:
    """scan_decide from the event loop (entry/asgi.py, PostgreSQL): the same checks, statement,
    answer and events; only the database call differs (decisions.decide_async).

    lookups.NotCached, before anything is written, when a lookup needs the database: the caller
    then decides the scan with scan_decide on a thread, which fills the caches."""
    scan = scan_check(
        device=device,
        turnstile=turnstile,
        barcode=barcode,
        scanned_at=scanned_at,
        nonce=nonce,
        direction=direction,
        now=now,
        cached_only=True,
    )
    outcome = await decisions.decide_async(scan.context)
    result = scan_result(scan, outcome)
    if outcome.reason == Reason.BANNED:
        # Rare, and the bus may be Redis (a blocking client): off the loop.
        await decisions.in_scan_thread(scan_announce, scan, outcome, result)
    else:
        scan_announce(scan, outcome, result)
    return result


def scan_result(scan: CheckedScan, outcome: decisions.Outcome) -> ScanResult:
    """The answer to the turnstile."""
    direction = scan.context.direction
    return ScanResult(
        decision=outcome.decision,
        reason=outcome.reason or None,
        message=scan_message(
            outcome, direction=direction, ground=scan.ground, reentry=scan.context.reentry
        ),
        ticket=_ticket_json(outcome, scan.ground),
        replayed=outcome.replayed,
        scan_id=outcome.scan_id,
    )


def scan_announce(scan: CheckedScan, outcome: decisions.Outcome, result: ScanResult) -> None:
    """After the decision has committed: the control room hears of a banned holder turned away,
    and the match's live counts are due (live_counts, at most one a second)."""
    fixture_id = scan.context.fixture_id
    if outcome.replayed or fixture_id is None:
        return
    if outcome.reason == Reason.BANNED:
        _publish_banned(outcome, fixture_id, scan.place, scan.context.scanned_at, result.ticket)
    live_counts.touch(fixture_id)


def _ticket_json(outcome: decisions.Outcome, ground: lookups.GroundInfo) -> dict[str, Any] | None:
    if outcome.ticket_id is None:
        return None
    return {
        "block": ground.block_codes.get(outcome.block_id) if outcome.block_id else None,
        "row": outcome.row,
        "seat": outcome.seat,
        "area": outcome.area,
        "end": outcome.end,
    }


def _place(outcome: decisions.Outcome, ground: lookups.GroundInfo) -> str:
    if outcome.block_id is None:
        return outcome.area
    block = ground.block_codes.get(outcome.block_id, "?")
    return f"block {block}, row {outcome.row}, seat {outcome.seat}"


def scan_message(
    outcome: decisions.Outcome, *, direction: str, ground: lookups.GroundInfo, reentry: bool
) -> str:
    """What the steward at the turnstile reads: the decision and what to do next. `reentry`: the
    match's rule (an exit re-opens entry)."""
    reason = outcome.reason
    if not reason:
        if direction == Scan.Direction.OUT:
            if reentry:
                return "Exit recorded. The ticket may be used to come back in."
            return "Exit recorded. No re-entry at this match: the ticket will not admit again."
        return f"Admit: {_place(outcome, ground)}."
    if reason == Reason.BANNED:
        return (
            "Do not admit: the holder is banned from this match. Keep them at the turnstile, call"
            " your supervisor; the control room has been told."
        )
    if reason == Reason.FLAGGED:
        return (
            "Do not admit yet: check identity. The holder's name is close to someone on the"
            " banned list. Ask for photo ID and call your supervisor."
        )
    if reason == Reason.CANCELLED:
        return "Do not admit: this ticket has been cancelled. Send the holder to the ticket office."
    if reason == Reason.ALREADY_INSIDE:
        where = ground.gate_names.get(outcome.entered_gate_id or 0, "another gate")
        when = f" at {timezone.localtime(outcome.entered_at):%H:%M}" if outcome.entered_at else ""
        return (
            f"Do not admit: this ticket was already used at {where}{when}. A copied ticket, or"
            " someone who has left: call your supervisor."
        )
    if reason == Reason.WRONG_END:
        end = "an away" if outcome.end == Ticket.End.AWAY else "a home"
        gates = ground.block_gates.get(outcome.block_id or 0, ())
        go = f" Direct the holder to {' or '.join(gates)}." if gates else ""
        return f"Do not admit: {end} ticket, and this gate does not serve that end.{go}"
    if reason == Reason.WRONG_MATCH:
        return (
            "Do not admit: this ticket is for another match. Send the holder to the ticket office."
        )
    return "Do not admit: unknown ticket. Send the holder to the ticket office."


def _publish_banned(
    outcome: decisions.Outcome,
    fixture_id: int,
    place: lookups.TurnstileInfo,
    scanned_at: datetime,
    ticket: dict[str, Any] | None,
) -> None:
    """The control room sees a banned holder turned away. No name or photo in the frame: those
    stay behind the flag's page, which records who read them (docs/adr/0004-ban-register.md)."""
    publish(
        fixture_id=fixture_id,
        type="entry.denied",
        data={
            "reason": outcome.reason,
            "gate": place.gate_name,
            "turnstile": place.code,
            "scanned_at": scanned_at.isoformat(),
            "ticket": ticket,
            "flag": outcome.flag_id,
        },
        audience=Audience(home_only=True),
    )


@transaction.atomic
def arrival_reset(*, fixture: Fixture, device_id: int) -> int:
    """The demo only: forget one device's scans at a match; the tickets it admitted are outside
    again. Returns how many scans were forgotten."""
    admitted = Scan.objects.filter(
        fixture=fixture, device_id=device_id, decision=Scan.Decision.ADMIT
    ).values("ticket_id")
    Ticket.objects.filter(pk__in=admitted).update(inside=False, entered_at=None, entered_gate=None)
    forgotten, _ = Scan.objects.filter(fixture=fixture, device_id=device_id).delete()
    return forgotten
