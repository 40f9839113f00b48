"""The gates' counts, kept by the database as the scans happen (docs/adr/0022-season-counts.md).

Two tables, written only by the triggers installed here, in the statement that stores the scan
or admits the ticket, on every path (the PostgreSQL statement, SQLite's one writer, the ORM,
offline uploads, bulk loads):

- `entry_scancount`: scans per match, gate, direction, decision and reason;
- `entry_preventedcount`: tickets per match "prevented from attending" (denied as banned,
  flagged or cancelled and never admitted). A ticket counts when its first such denial is stored
  while it has never been admitted, and stops counting when it is first admitted (an offline
  admission merged later, say). `entered_at` never goes back to empty, so those two moves are
  all there is. On PostgreSQL the trigger locks the denied tickets (in id order, as the decision
  statement does) before it reads them, and reads with a fresh snapshot: a denial and an
  admission of one ticket at the same moment are counted one after the other.

The recounts below read the raw rows: the migration and `safeground recount-entry` fill the
tables from them (an upgraded install), and the tests compare both.
"""

from collections.abc import Collection
from typing import Any

from django.db import connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Count, Sum

from safeground.append_only import KeptByTriggers
from safeground.matches.models import Fixture

from .models import PreventedCount, Scan, ScanCount

Reason = Scan.Reason
# Turned away for who they are or what their ticket is: the "prevented from attending" figure.
PREVENTING = (Reason.BANNED, Reason.FLAGGED, Reason.CANCELLED)
_PREVENTING_SQL = ", ".join(f"'{code}'" for code in PREVENTING)
_KEY = "fixture_id, gate_id, direction, decision, reason"

_PG_SCANS = f"""
CREATE OR REPLACE FUNCTION entry_scan_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO entry_scancount ({_KEY}, scans)
    SELECT {_KEY}, count(*) FROM new_scans WHERE fixture_id IS NOT NULL
    GROUP BY {_KEY} ORDER BY {_KEY}
    ON CONFLICT ({_KEY}) DO UPDATE SET scans = entry_scancount.scans + EXCLUDED.scans;
    IF EXISTS (SELECT 1 FROM new_scans
               WHERE reason IN ({_PREVENTING_SQL}) AND ticket_id IS NOT NULL) THEN
        -- Locked first; the count below is a new statement, so it sees what a concurrent
        -- admission of these tickets committed while we waited.
        PERFORM 1 FROM entry_ticket WHERE id IN (
            SELECT ticket_id FROM new_scans WHERE reason IN ({_PREVENTING_SQL}))
        ORDER BY id FOR NO KEY UPDATE;
        INSERT INTO entry_preventedcount (fixture_id, tickets)
        SELECT t.fixture_id, count(*) FROM entry_ticket t
        WHERE t.id IN (SELECT ticket_id FROM new_scans WHERE reason IN ({_PREVENTING_SQL}))
          AND t.entered_at IS NULL
          AND NOT EXISTS (
            SELECT 1 FROM entry_scan s WHERE s.ticket_id = t.id
              AND s.reason IN ({_PREVENTING_SQL}) AND s.id NOT IN (SELECT id FROM new_scans))
        GROUP BY t.fixture_id ORDER BY t.fixture_id
        ON CONFLICT (fixture_id) DO UPDATE
            SET tickets = entry_preventedcount.tickets + EXCLUDED.tickets;
    END IF;
    RETURN NULL;
END $$
"""
_PG_ADMITTED = f"""
CREATE OR REPLACE FUNCTION entry_ticket_admitted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO entry_preventedcount (fixture_id, tickets)
    SELECT n.fixture_id, -count(*) FROM new_tickets n JOIN old_tickets o ON o.id = n.id
    WHERE o.entered_at IS NULL AND n.entered_at IS NOT NULL
      AND EXISTS (SELECT 1 FROM entry_scan s
                  WHERE s.ticket_id = n.id AND s.reason IN ({_PREVENTING_SQL}))
    GROUP BY n.fixture_id ORDER BY n.fixture_id
    ON CONFLICT (fixture_id) DO UPDATE
        SET tickets = entry_preventedcount.tickets + EXCLUDED.tickets;
    RETURN NULL;
END $$
"""

_SQLITE_SCANS = f"""
CREATE TRIGGER entry_scan_counted AFTER INSERT ON entry_scan WHEN NEW.fixture_id IS NOT NULL
BEGIN
    INSERT INTO entry_scancount ({_KEY}, scans)
    VALUES (NEW.fixture_id, NEW.gate_id, NEW.direction, NEW.decision, NEW.reason, 1)
    ON CONFLICT ({_KEY}) DO UPDATE SET scans = scans + 1;
END
"""
_SQLITE_PREVENTED = f"""
CREATE TRIGGER entry_scan_prevented AFTER INSERT ON entry_scan
WHEN NEW.reason IN ({_PREVENTING_SQL}) AND NEW.ticket_id IS NOT NULL
  AND (SELECT entered_at FROM entry_ticket WHERE id = NEW.ticket_id) IS NULL
  AND NOT EXISTS (SELECT 1 FROM entry_scan s WHERE s.ticket_id = NEW.ticket_id
                  AND s.reason IN ({_PREVENTING_SQL}) AND s.id <> NEW.id)
BEGIN
    INSERT INTO entry_preventedcount (fixture_id, tickets)
    SELECT fixture_id, 1 FROM entry_ticket WHERE id = NEW.ticket_id
    ON CONFLICT (fixture_id) DO UPDATE SET tickets = tickets + 1;
END
"""
_SQLITE_ADMITTED = f"""
CREATE TRIGGER entry_ticket_admitted AFTER UPDATE OF entered_at ON entry_ticket
WHEN OLD.entered_at IS NULL AND NEW.entered_at IS NOT NULL
  AND EXISTS (SELECT 1 FROM entry_scan s
              WHERE s.ticket_id = NEW.id AND s.reason IN ({_PREVENTING_SQL}))
BEGIN
    INSERT INTO entry_preventedcount (fixture_id, tickets) VALUES (NEW.fixture_id, -1)
    ON CONFLICT (fixture_id) DO UPDATE SET tickets = tickets - 1;
END
"""


def triggers_sql(vendor: str) -> list[str]:
    if vendor == "postgresql":
        return [
            *drop_sql(vendor),
            _PG_SCANS,
            _PG_ADMITTED,
            "CREATE TRIGGER entry_scan_counted AFTER INSERT ON entry_scan "
            "REFERENCING NEW TABLE AS new_scans "
            "FOR EACH STATEMENT EXECUTE FUNCTION entry_scan_counted()",
            "CREATE TRIGGER entry_ticket_admitted AFTER UPDATE ON entry_ticket "
            "REFERENCING OLD TABLE AS old_tickets NEW TABLE AS new_tickets "
            "FOR EACH STATEMENT EXECUTE FUNCTION entry_ticket_admitted()",
        ]
    if vendor == "sqlite":
        return [*drop_sql(vendor), _SQLITE_SCANS, _SQLITE_PREVENTED, _SQLITE_ADMITTED]
    return []


def drop_sql(vendor: str) -> list[str]:
    if vendor == "postgresql":
        return [
            "DROP TRIGGER IF EXISTS entry_scan_counted ON entry_scan",
            "DROP TRIGGER IF EXISTS entry_ticket_admitted ON entry_ticket",
            "DROP FUNCTION IF EXISTS entry_scan_counted()",
            "DROP FUNCTION IF EXISTS entry_ticket_admitted()",
        ]
    if vendor == "sqlite":
        return [
            "DROP TRIGGER IF EXISTS entry_scan_counted",
            "DROP TRIGGER IF EXISTS entry_scan_prevented",
            "DROP TRIGGER IF EXISTS entry_ticket_admitted",
        ]
    return []


class KeptCounts(KeptByTriggers):
    """A migration operation: install the triggers that keep the counts, then fill the counts
    from the rows already there (an upgraded install). Reversible: the triggers go."""

    description = "Triggers keeping the gates' counts, and the counts of the scans already stored"

    def install(self, db: BaseDatabaseWrapper) -> None:
        install(db)

    def drop_sql(self, vendor: str) -> list[str]:
        return drop_sql(vendor)


def install(db: BaseDatabaseWrapper = connection) -> None:
    """The triggers, and the counts recounted from the rows, in one transaction: on PostgreSQL
    the tables are locked against writes meanwhile, so no scan falls between the two."""
    with transaction.atomic(using=db.alias), db.cursor() as cursor:
        if db.vendor == "postgresql":
            cursor.execute("LOCK TABLE entry_scan, entry_ticket IN SHARE ROW EXCLUSIVE MODE")
        for sql in triggers_sql(db.vendor):
            cursor.execute(sql)
        _recount_into_tables(cursor)


def _recount_into_tables(cursor: Any) -> None:
    cursor.execute("DELETE FROM entry_scancount")
    cursor.execute("DELETE FROM entry_preventedcount")
    cursor.execute(
        f"INSERT INTO entry_scancount ({_KEY}, scans) SELECT {_KEY}, count(*) FROM entry_scan "
        f"WHERE fixture_id IS NOT NULL GROUP BY {_KEY}"
    )
    cursor.execute(
        "INSERT INTO entry_preventedcount (fixture_id, tickets) "
        "SELECT t.fixture_id, count(*) FROM entry_ticket t WHERE t.entered_at IS NULL "
        "AND EXISTS (SELECT 1 FROM entry_scan s WHERE s.ticket_id = t.id "
        f"AND s.reason IN ({_PREVENTING_SQL})) GROUP BY t.fixture_id"
    )


def counts_rebuild() -> None:
    """Recount the kept counts from the scans and tickets (`safeground recount-entry`)."""
    install(connection)


# --- reads: the kept counts, and the same figures recounted from the rows ----------------------


def denied_by_match(fixture_ids: Collection[int]) -> dict[int, int]:
    """match id -> scans refused at the turnstiles, for any reason (a match with none is absent)."""
    return {
        pk: n
        for pk, n in ScanCount.objects.filter(fixture_id__in=fixture_ids, decision="deny")
        .values_list("fixture_id")
        .annotate(n=Sum("scans"))
        .values_list("fixture_id", "n")
        .order_by()
        if n
    }


def prevented_by_match(fixture_ids: Collection[int]) -> dict[int, int]:
    """match id -> tickets prevented from attending, every match given (0 for none)."""
    kept = dict(
        PreventedCount.objects.filter(fixture_id__in=fixture_ids).values_list(
            "fixture_id", "tickets"
        )
    )
    return {pk: kept.get(pk, 0) for pk in fixture_ids}


def inside_through_gates(fixture_id: int, gate_ids: Collection[int]) -> int:
    """People in through these gates and not scanned out through them: the admissions in minus
    the exits (an exit scan of a ticket of the match is admitted), from the kept counts (one
    query over a few rows, whatever the crowd). Never below 0 (an exit of someone let in
    elsewhere)."""
    by_direction = dict(
        ScanCount.objects.filter(
            fixture_id=fixture_id, gate_id__in=gate_ids, decision=Scan.Decision.ADMIT
        )
        .values_list("direction")
        .annotate(n=Sum("scans"))
        .values_list("direction", "n")
        .order_by()
    )
    return max(0, by_direction.get("in", 0) - by_direction.get("out", 0))


def denied_recount(fixture_ids: Collection[int]) -> dict[int, int]:
    """`denied_by_match` counted over the scans themselves."""
    return dict(
        Scan.objects.filter(fixture_id__in=fixture_ids, decision=Scan.Decision.DENY)
        .values_list("fixture_id")
        .annotate(n=Count("pk"))
        .values_list("fixture_id", "n")
        .order_by()
    )


def prevented_recount(fixture_ids: Collection[int]) -> dict[int, int]:
    """`prevented_by_match` counted over the scans and tickets themselves."""
    counts = dict(
        Scan.objects.filter(
            fixture_id__in=fixture_ids, reason__in=PREVENTING, ticket__entered_at__isnull=True
        )
        .values_list("fixture_id")
        .annotate(n=Count("ticket_id", distinct=True))
        .values_list("fixture_id", "n")
        .order_by()
    )
    return {pk: counts.get(pk, 0) for pk in fixture_ids}


def scans_recount(fixture_ids: Collection[int]) -> dict[tuple[Any, ...], int]:
    """(match, gate, direction, decision, reason) -> scans, over the scans themselves."""
    return {
        tuple(key): n
        for *key, n in Scan.objects.filter(fixture_id__in=fixture_ids)
        .values_list("fixture_id", "gate_id", "direction", "decision", "reason")
        .annotate(n=Count("pk"))
        .order_by()
    }


def scans_kept(fixture_ids: Collection[int]) -> dict[tuple[Any, ...], int]:
    """The same key -> scans, as kept (rows at 0 left out)."""
    return {
        tuple(key): n
        for *key, n in ScanCount.objects.filter(fixture_id__in=fixture_ids).values_list(
            "fixture_id", "gate_id", "direction", "decision", "reason", "scans"
        )
        if n
    }


def differences() -> list[str]:
    """Each kept count that differs from a full recount of the rows, as a line for the operator
    (none: the counts are right)."""
    ids = list(Fixture.objects.values_list("pk", flat=True))
    lines = []
    kept, counted = scans_kept(ids), scans_recount(ids)
    for key in sorted(kept.keys() | counted.keys(), key=str):
        if kept.get(key, 0) != counted.get(key, 0):
            match, gate, direction, decision, reason = key
            lines.append(
                f"match {match} gate {gate} {direction} {decision} {reason or '-'}: "
                f"kept {kept.get(key, 0)}, counted {counted.get(key, 0)}"
            )
    kept_prevented, counted_prevented = prevented_by_match(ids), prevented_recount(ids)
    for pk in ids:
        if kept_prevented[pk] != counted_prevented[pk]:
            lines.append(
                f"match {pk} prevented from attending: kept {kept_prevented[pk]}, "
                f"counted {counted_prevented[pk]}"
            )
    return lines
