"""Exports (CSV and JSON) and the read API's rows: log entries, scans, bans, the season summary.

No personal data about supporters leaves in an export unless the role may read the register
(`can_export_people`) and states a reason; then every person named is an access record, as a
read of their record in the register is (bans.selectors.person_read). Scans carry no barcode
and no holder: the gates' figures need neither.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import transaction

from safeground import clock
from safeground.accounts.permissions import (
    can_export_people,
    can_read_match_report,
    can_read_season,
    require,
)
from safeground.bans.models import AccessRecord, Ban
from safeground.bans.selectors import reason_check
from safeground.bans.services import access_record_write
from safeground.entry.models import Scan
from safeground.errors import SafegroundError, one_of
from safeground.incidents.models import LogEntry
from safeground.incidents.selectors import entries_seen_by, place_label
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for
from safeground.venues.models import Ground
from safeground.venues.selectors import ground_for

from .season import Season

FORMATS = ("csv", "json")
SCAN_PAGE = 5000  # rows per page of the scans API


class ExportError(SafegroundError):
    """An export asked for in a way it cannot be given (a format, a page size)."""

    code = "export_refused"


def format_check(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ExportError("format", one_of(FORMATS))
    return fmt


def fixture_for_export(user: Any, fixture_id: int) -> Fixture:
    fixture = fixture_for(user, fixture_id)
    require(can_read_match_report(user, fixture))
    return fixture


def ground_for_export(user: Any, code: str) -> Ground:
    ground = ground_for(user, code)
    require(can_read_season(user, ground))
    return ground


# --- log entries -----------------------------------------------------------------------------

LOG_COLUMNS = (
    "seq", "kind", "observed_at", "logged_at", "author", "author_role", "category", "severity",
    "place", "text", "note", "status", "escalated_to", "concerns", "home_only", "hash",
)  # fmt: skip


def log_rows(user: Any, fixture: Fixture) -> Iterator[dict[str, Any]]:
    """The match's whole log, oldest first; home-only entries for the home club's staff only."""
    entries = entries_seen_by(user, fixture, LogEntry.objects.filter(fixture=fixture))
    for e in entries.select_related(
        "category", "block", "zone", "gate", "concourse", "concerns"
    ).order_by("seq"):
        yield {
            "seq": e.seq,
            "kind": e.kind,
            "observed_at": clock.iso(e.observed_at),
            "logged_at": clock.iso(e.logged_at),
            "author": e.author_name,
            "author_role": e.author_role,
            "category": e.category.code if e.category else "",
            "severity": e.severity,
            "place": place_label(e),
            "text": e.text,
            "note": e.note,
            "status": e.status,
            "escalated_to": e.escalated_to,
            "concerns": e.concerns.seq if e.concerns else None,
            "home_only": e.home_only,
            "hash": e.hash,
        }


# --- scans -----------------------------------------------------------------------------------

SCAN_COLUMNS = (
    "id", "scanned_at", "stored_at", "gate", "turnstile", "direction", "decision", "reason",
    "offline",
)  # fmt: skip


def scan_rows(fixture: Fixture, *, after: int = 0, limit: int | None = None) -> Iterator[dict]:
    """The match's scans by id (a cursor: `after` the last id seen), without barcodes."""
    scans = (
        Scan.objects.filter(fixture=fixture, pk__gt=after)
        .order_by("pk")
        .values_list(
            "pk", "scanned_at", "stored_at", "gate__code", "turnstile__code", "direction",
            "decision", "reason", "offline",
        )
    )  # fmt: skip
    if limit is not None:
        scans = scans[:limit]
    for row in scans.iterator(chunk_size=2000):
        values: dict[str, Any] = dict(zip(SCAN_COLUMNS, row, strict=True))
        values["scanned_at"] = clock.iso(values["scanned_at"])
        values["stored_at"] = clock.iso(values["stored_at"])
        yield values


# --- forged tickets, for the police ------------------------------------------------------------

FORGED_COLUMNS = ("scanned_at", "stored_at", "gate", "turnstile", "barcode", "offline")


@transaction.atomic
def forged_rows(*, user: Any, fixture: Fixture) -> list[dict[str, Any]]:
    """The forged tickets refused at the match (issue 41): when and at which turnstile, with the
    barcode the police need to trace the batch. A barcode that was never issued names no one, but
    the export is evidence for a prosecution: whoever takes it is on the access trail."""
    rows = []
    for scanned_at, stored_at, gate, turnstile, barcode, offline in (
        Scan.objects.filter(fixture=fixture, reason=Scan.Reason.FORGED)
        .order_by("scanned_at", "pk")
        .values_list(
            "scanned_at", "stored_at", "gate__name", "turnstile__code", "barcode", "offline"
        )
    ):
        rows.append(
            {
                "scanned_at": clock.iso(scanned_at),
                "stored_at": clock.iso(stored_at),
                "gate": gate,
                "turnstile": turnstile,
                "barcode": barcode,
                "offline": offline,
            }
        )
    access_record_write(
        user=user,
        action=AccessRecord.Action.EXPORT_FORGED,
        organisation=fixture.ground.organisation_id,
        reason="",
        subject=f"forged tickets at match #{fixture.pk}",
        detail=f"{len(rows)} forged tickets",
    )
    return rows


# --- bans ------------------------------------------------------------------------------------

BAN_COLUMNS = (
    "id", "type", "status", "scope", "issued_by", "starts_on", "ends_on", "is_life", "created_at",
)  # fmt: skip
PEOPLE_COLUMNS = ("first_names", "last_name", "date_of_birth")


@transaction.atomic
def ban_rows(*, user: Any, ground: Ground, reason: str = "") -> tuple[tuple[str, ...], list[dict]]:
    """The club's bans. With a reason, for a register reader, each ban's person too, and one
    access record per person named; without, no names (anyone who may read the season)."""
    org_id = ground.organisation_id
    people = bool(reason)
    if people:
        require(can_export_people(user, org_id))
        reason = reason_check(reason)
    bans = Ban.objects.filter(organisation_id=org_id).select_related("person").order_by("pk")
    rows = []
    named: dict[int, Any] = {}
    for ban in bans:
        row = {
            "id": ban.pk,
            "type": ban.type,
            "status": ban.status,
            "scope": ban.scope,
            "issued_by": ban.issued_by,
            "starts_on": clock.day_iso(ban.starts_on),
            "ends_on": clock.day_iso(ban.ends_on) if ban.ends_on else None,
            "is_life": ban.is_life,
            "created_at": clock.iso(ban.created_at),
        }
        if people:
            person = ban.person
            erased = person.erased_at is not None
            row |= {
                "first_names": "" if erased else person.first_names,
                "last_name": "" if erased else person.last_name,
                "date_of_birth": (
                    clock.day_iso(person.date_of_birth)
                    if person.date_of_birth and not erased
                    else None
                ),
            }
            named[person.pk] = person
        rows.append(row)
    for person in named.values():
        access_record_write(
            user=user,
            action=AccessRecord.Action.READ,
            organisation=org_id,
            person=person,
            reason=reason,
            detail=f"bans export of {ground.name}",
        )
    return (BAN_COLUMNS + PEOPLE_COLUMNS if people else BAN_COLUMNS), rows


# --- the season summary ----------------------------------------------------------------------

SEASON_COLUMNS = (
    "date", "opponent", "competition", "incidents", "arrests", "ejections", "denied", "prevented",
    "median_to_assignment", "median_to_resolution",
)  # fmt: skip


def season_rows(season: Season) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """One row per match; a column per incident category after the fixed ones."""
    codes = [c["code"] for c in season.categories]
    rows = []
    for match in season.matches:
        row = {column: match.get(column) for column in SEASON_COLUMNS}
        row["incidents"] = match["incidents_total"]
        for code in codes:
            row[f"incidents_{code}"] = match["incidents"].get(code, 0)
        rows.append(row)
    return SEASON_COLUMNS + tuple(f"incidents_{code}" for code in codes), rows


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A cell as a spreadsheet will read it: text from the log that starts like a formula is
    kept as text (a leading apostrophe), never run."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_lines(columns: Iterable[str], rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """CSV text in pieces of about 64 kB."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    columns = list(columns)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row.get(c)) for c in columns])
        if buffer.tell() > 64_000:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
