"""The log's counts, kept by the database as entries are appended (docs/adr/0022-season-counts.md).

The log is append-only and a report's category, block and home-only flag never change (a
correction is a new entry, which the counts do not follow: ADR 0009), so a trigger on INSERT keeps
them exactly, in the append's own statement:

- `incidents_reportsbycategory`: reports per match, category and home-only;
- `incidents_incidentsbyblock`: incidents (the log's one definition, `incidents_reported`) per
  match, block and home-only;
- `incidents_incidentresponse`: each incident acted on, with its first assignment, escalation and
  resolution (an action written later but observed earlier wins: the earliest of each).

The season dashboard reads these instead of the log's rows. `install` recounts them from the rows
(the migration, for an upgraded install); the tests compare both.
"""

from collections.abc import Collection
from typing import Any

from django.db import connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Q, QuerySet, Sum

from safeground.append_only import KeptByTriggers

from .models import (
    DEALT_WITH_STATUSES,
    IncidentResponse,
    IncidentsByBlock,
    ReportsByCategory,
)
from .selectors import NOT_INCIDENT_CATEGORIES

_NOT_INCIDENT = ", ".join(f"'{code}'" for code in NOT_INCIDENT_CATEGORIES)
_DEALT_WITH = ", ".join(f"'{status}'" for status in DEALT_WITH_STATUSES)


def _is_incident(entry: str) -> str:
    return (
        f"{entry}.kind = 'report' AND NOT EXISTS (SELECT 1 FROM incidents_category c "
        f"WHERE c.id = {entry}.category_id AND c.code IN ({_NOT_INCIDENT}))"
    )


def _earliest(column: str, sqlite: bool) -> str:
    """The earlier of the kept time and the new one, either possibly empty."""
    if not sqlite:
        return f"{column} = LEAST(incidents_incidentresponse.{column}, EXCLUDED.{column})"
    # SQLite's two-argument min() is empty if either is; its times are ISO text, in order.
    return (
        f"{column} = CASE WHEN excluded.{column} IS NULL THEN {column} "
        f"WHEN {column} IS NULL THEN excluded.{column} "
        f"ELSE min({column}, excluded.{column}) END"
    )


def _statements(sqlite: bool) -> list[str]:
    """The trigger's statements over NEW (one appended entry); each counts only what it should
    (a WHERE: SQLite's upsert after a SELECT needs one anyway)."""
    by_category = (
        "INSERT INTO incidents_reportsbycategory (fixture_id, category_id, home_only, reports) "
        "SELECT NEW.fixture_id, coalesce(NEW.category_id, 0), NEW.home_only, 1 "
        "WHERE NEW.kind = 'report' "
        "ON CONFLICT (fixture_id, category_id, home_only) "
        "DO UPDATE SET reports = incidents_reportsbycategory.reports + 1"
    )
    by_block = (
        "INSERT INTO incidents_incidentsbyblock (fixture_id, block_id, home_only, incidents) "
        "SELECT NEW.fixture_id, NEW.block_id, NEW.home_only, 1 "
        f"WHERE NEW.block_id IS NOT NULL AND {_is_incident('NEW')} "
        "ON CONFLICT (fixture_id, block_id, home_only) "
        "DO UPDATE SET incidents = incidents_incidentsbyblock.incidents + 1"
    )
    times = ("first_assigned", "first_escalated", "first_resolved")
    response = (
        "INSERT INTO incidents_incidentresponse (report_id, fixture_id, home_only, observed_at, "
        "first_assigned, first_escalated, first_resolved) "
        "SELECT r.id, r.fixture_id, r.home_only, r.observed_at, "
        "CASE WHEN NEW.kind = 'assignment' THEN NEW.observed_at END, "
        "CASE WHEN NEW.kind = 'escalation' THEN NEW.observed_at END, "
        f"CASE WHEN NEW.kind = 'status' AND NEW.status IN ({_DEALT_WITH}) "
        "THEN NEW.observed_at END "
        f"FROM incidents_logentry r WHERE r.id = NEW.concerns_id AND {_is_incident('r')} "
        "AND (NEW.kind IN ('assignment', 'escalation') "
        f"OR (NEW.kind = 'status' AND NEW.status IN ({_DEALT_WITH}))) "
        "ON CONFLICT (report_id) DO UPDATE SET "
        + ", ".join(_earliest(column, sqlite) for column in times)
    )
    return [by_category, by_block, response]


def triggers_sql(vendor: str) -> list[str]:
    if vendor == "postgresql":
        body = "; ".join(_statements(sqlite=False))
        return [
            *drop_sql(vendor),
            "CREATE OR REPLACE FUNCTION incidents_log_counted() RETURNS trigger "
            f"LANGUAGE plpgsql AS $$ BEGIN {body}; RETURN NULL; END $$",
            "CREATE TRIGGER incidents_log_counted AFTER INSERT ON incidents_logentry "
            "FOR EACH ROW EXECUTE FUNCTION incidents_log_counted()",
        ]
    if vendor == "sqlite":
        body = "; ".join(_statements(sqlite=True))
        return [
            *drop_sql(vendor),
            "CREATE TRIGGER incidents_log_counted AFTER INSERT ON incidents_logentry "
            f"BEGIN {body}; END",
        ]
    return []


def drop_sql(vendor: str) -> list[str]:
    if vendor == "postgresql":
        return [
            "DROP TRIGGER IF EXISTS incidents_log_counted ON incidents_logentry",
            "DROP FUNCTION IF EXISTS incidents_log_counted()",
        ]
    if vendor == "sqlite":
        return ["DROP TRIGGER IF EXISTS incidents_log_counted"]
    return []


class KeptLogCounts(KeptByTriggers):
    """A migration operation: the triggers that keep the log's counts, then the counts of the
    entries already there. Reversible: the triggers go."""

    description = "Triggers keeping the log's counts, and the counts of the entries already stored"

    def install(self, db: BaseDatabaseWrapper) -> None:
        install(db)

    def drop_sql(self, vendor: str) -> list[str]:
        return drop_sql(vendor)


def install(db: BaseDatabaseWrapper = connection) -> None:
    """The triggers, and the counts recounted from the log, in one transaction (on PostgreSQL
    with the log locked against appends meanwhile)."""
    with transaction.atomic(using=db.alias), db.cursor() as cursor:
        if db.vendor == "postgresql":
            cursor.execute("LOCK TABLE incidents_logentry IN SHARE ROW EXCLUSIVE MODE")
        for sql in triggers_sql(db.vendor):
            cursor.execute(sql)
        for table in ("reportsbycategory", "incidentsbyblock", "incidentresponse"):
            cursor.execute(f"DELETE FROM incidents_{table}")
        cursor.execute(
            "INSERT INTO incidents_reportsbycategory (fixture_id, category_id, home_only, "
            "reports) SELECT fixture_id, coalesce(category_id, 0), home_only, count(*) "
            "FROM incidents_logentry WHERE kind = 'report' "
            "GROUP BY fixture_id, coalesce(category_id, 0), home_only"
        )
        cursor.execute(
            "INSERT INTO incidents_incidentsbyblock (fixture_id, block_id, home_only, incidents) "
            "SELECT e.fixture_id, e.block_id, e.home_only, count(*) FROM incidents_logentry e "
            f"WHERE e.block_id IS NOT NULL AND {_is_incident('e')} "
            "GROUP BY e.fixture_id, e.block_id, e.home_only"
        )
        cursor.execute(
            "INSERT INTO incidents_incidentresponse (report_id, fixture_id, home_only, "
            "observed_at, first_assigned, first_escalated, first_resolved) "
            "SELECT r.id, r.fixture_id, r.home_only, r.observed_at, "
            "min(a.observed_at) FILTER (WHERE a.kind = 'assignment'), "
            "min(a.observed_at) FILTER (WHERE a.kind = 'escalation'), "
            f"min(a.observed_at) FILTER (WHERE a.kind = 'status' AND a.status IN ({_DEALT_WITH})) "
            "FROM incidents_logentry r JOIN incidents_logentry a ON a.concerns_id = r.id "
            f"WHERE {_is_incident('r')} AND (a.kind IN ('assignment', 'escalation') "
            f"OR (a.kind = 'status' AND a.status IN ({_DEALT_WITH}))) "
            "GROUP BY r.id, r.fixture_id, r.home_only, r.observed_at"
        )


# --- reads ----------------------------------------------------------------------------------------


def reports_by_category(
    fixture_ids: Collection[int], *, home_only: bool
) -> list[tuple[int, int | None, int]]:
    """(match, category id or None, reports), home-only ones too when `home_only`."""
    rows = ReportsByCategory.objects.filter(fixture_id__in=fixture_ids)
    if not home_only:
        rows = rows.filter(home_only=False)
    return [
        (fixture_id, category_id or None, n)
        for fixture_id, category_id, n in rows.values_list("fixture_id", "category_id")
        .annotate(n=Sum("reports"))
        .values_list("fixture_id", "category_id", "n")
        .order_by()
    ]


def incidents_by_block(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[Any]:
    """(block code, incidents) over these matches, the most first (then by code)."""
    rows = IncidentsByBlock.objects.filter(fixture_id__in=fixture_ids)
    if not home_only:
        rows = rows.filter(home_only=False)
    return (
        rows.values_list("block__code")
        .annotate(n=Sum("incidents"))
        .order_by("-n", "block__code")
        .values_list("block__code", "n")
    )


def incident_responses(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[Any]:
    """Each incident assigned or resolved: (match, time from seen to first assigned, to first
    resolved; None when not). The database subtracts: thousands of durations load several times
    faster than the three times of each incident they come from (ADR 0022), and as exactly."""
    rows = IncidentResponse.objects.filter(
        Q(first_assigned__isnull=False) | Q(first_resolved__isnull=False),
        fixture_id__in=fixture_ids,
    )
    if not home_only:
        rows = rows.filter(home_only=False)
    return rows.values_list(
        "fixture_id", F("first_assigned") - F("observed_at"), F("first_resolved") - F("observed_at")
    )


def reports_in_categories(
    fixture_ids: Collection[int], codes: Collection[str], *, home_only: bool
) -> list[tuple[int, str, int]]:
    """(match, category code, reports) for the categories named, in one query: a join, as the
    kept rows name their category by id only (looking up each row's code in a subquery and
    comparing it was most of the season's arrests' time, ADR 0022)."""
    if not fixture_ids or not codes:
        return []
    matches, named = ", ".join(["%s"] * len(fixture_ids)), ", ".join(["%s"] * len(codes))
    sql = (
        "SELECT r.fixture_id, c.code, CAST(SUM(r.reports) AS BIGINT) "
        "FROM incidents_reportsbycategory r JOIN incidents_category c ON c.id = r.category_id "
        f"WHERE r.fixture_id IN ({matches}) AND c.code IN ({named})"
        f"{'' if home_only else ' AND NOT r.home_only'} GROUP BY r.fixture_id, c.code"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*fixture_ids, *codes])
        return cursor.fetchall()
