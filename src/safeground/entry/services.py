"""Every write about tickets: importing a ticketing system's export, cancelling a ticket."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone

from safeground.bans.flagging import MatchReport, fixture_match
from safeground.matches.models import Fixture
from safeground.venues.models import Block

from .models import Ticket
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
