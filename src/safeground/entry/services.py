"""The writes other apps and pages call: importing a ticketing system's export, cancelling a
ticket and deciding a ban flag on a ticket. A turnstile's scans are recorded by entry.scans; the
erasing of holders by retention is entry.retention's."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.bans.models import AccessRecord, Ban
from safeground.bans.services import BanError, access_record_write, text_check
from safeground.matches.models import Fixture
from safeground.venues.models import Block

from . import hooks
from .flagging import MatchReport, fixture_match
from .gate_pressure import warning_cause
from .models import GateWarned, Ticket, TicketFlag
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
        for values in Ticket.objects.filter(fixture=fixture).values_list(
            "barcode", "pk", *FIELDS, "holder_erased_at"
        )
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
        elif stored[-1] is not None:
            # Erased by retention: a file imported again does not bring the holder back.
            unchanged += 1
        elif tuple(stored[2:-1]) != values:
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
    if total:
        hooks.tickets_arrived(fixture, now, total)
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


# --- ban flags on tickets (docs/adr/0004-ban-register.md) ----------------------------------------


def _flag_decide(flag: TicketFlag, *, by: User, note: str, to: str) -> TicketFlag:
    note = text_check("note", note)
    flag = (
        TicketFlag.objects.select_for_update(of=("self",))
        .select_related("ban__person", "league_ban", "ticket__fixture__ground")
        .get(pk=flag.pk)
    )
    if flag.status != TicketFlag.Status.OPEN:
        said = _("flag #%(flag)s is already %(status)s")
        raise BanError(
            "status", said % {"flag": flag.pk, "status": str(flag.get_status_display()).lower()}
        )
    flag.status = to
    flag.decided_by = by
    flag.decided_at = timezone.now()
    flag.decision_note = note
    flag.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])
    action = (
        AccessRecord.Action.CONFIRM_FLAG
        if to == TicketFlag.Status.CONFIRMED
        else AccessRecord.Action.CLEAR_FLAG
    )
    access_record_write(
        user=by, action=action, organisation=flag.ticket.fixture.ground.organisation_id,
        person=flag.ban.person if flag.ban else None, ban=flag.ban, reason=note,
        detail=f"ticket {flag.ticket.barcode}, fixture {flag.ticket.fixture_id}"
        + (f", league ban of {flag.league_ban.issuing_club}" if flag.league_ban else ""),
    )  # fmt: skip
    return flag


@transaction.atomic
def flag_confirm(*, flag: TicketFlag, by: User, note: str) -> TicketFlag:
    """The holder is the banned person: the ticket is cancelled and the gates will deny them."""
    flag = _flag_decide(flag, by=by, note=note, to=TicketFlag.Status.CONFIRMED)
    banned_by = (
        f"league ban of {flag.league_ban.issuing_club}"
        if flag.league_ban
        else f"ban #{flag.ban_id}"
    )
    ticket_cancel(ticket=flag.ticket, reason=f"holder banned ({banned_by})")
    return flag


@transaction.atomic
def flag_clear(*, flag: TicketFlag, by: User, note: str) -> TicketFlag:
    """Not the banned person: recorded, and the pair is not flagged again."""
    return _flag_decide(flag, by=by, note=note, to=TicketFlag.Status.CLEARED)


def flags_clear_revoked(ban: Ban, by: User, at: datetime) -> None:
    """A ban revoked on appeal: its open flags are cleared (bans.hooks, in the revoking
    transaction)."""
    TicketFlag.objects.filter(ban=ban, status=TicketFlag.Status.OPEN).update(
        status=TicketFlag.Status.CLEARED,
        decided_by=by,
        decided_at=at,
        decision_note=f"Ban #{ban.pk} revoked on appeal.",
    )


def gate_warnings_keep(
    *, fixture_id: int, warnings: Sequence[tuple[int, dict[str, Any]]], at: datetime
) -> list[GateWarned]:
    """The gate warnings standing now, as one process assessed them (gate_pressure.gates_publish:
    each with its gate's id), against the ones kept: each that started is marked standing and
    told (hooks.gate_warned) once; each kept that no longer stands is marked ended, so that it is
    told again when it comes back. The warnings that started, answered.

    A warning starts by one conditional write (a new row, or a row not standing set standing),
    so two processes assessing in turn, or at once, tell it once. One read when nothing changed."""
    now = {(gate_id, warning_cause(w)): w for gate_id, w in warnings}
    kept = {
        (gate_id, cause): standing
        for gate_id, cause, standing in GateWarned.objects.filter(
            fixture_id=fixture_id
        ).values_list("gate_id", "cause", "standing")
    }
    started = []
    for (gate_id, cause), warning in now.items():
        if kept.get((gate_id, cause)):
            continue
        with transaction.atomic():
            row, created = GateWarned.objects.get_or_create(
                fixture_id=fixture_id,
                gate_id=gate_id,
                cause=cause,
                defaults={"since": at, "warning": warning},
            )
            if not created and not GateWarned.objects.filter(pk=row.pk, standing=False).update(
                standing=True, since=at, warning=warning
            ):
                continue  # another process told it
            row.standing, row.since, row.warning = True, at, warning
            hooks.gate_warned(row)
            started.append(row)
    for (gate_id, cause), standing in kept.items():
        if standing and (gate_id, cause) not in now:
            GateWarned.objects.filter(
                fixture_id=fixture_id, gate_id=gate_id, cause=cause, standing=True
            ).update(standing=False)
    return started
