"""The log's history for risk assessments (matches.risk): per earlier match and category, how
many reports there were and the highest severity. Arrests and ejections are log categories too;
the policy says which categories count for which factor."""

from django.db.models import Count, Max

from safeground.matches.risk import HistoryWindow, PastRecord, past_fixtures, past_record

from .models import LogEntry


def log_history(window: HistoryWindow) -> list[PastRecord]:
    fixtures = {f.pk: f for f in past_fixtures(window).select_related("home_club", "away_club")}
    rows = (
        LogEntry.objects.filter(
            fixture_id__in=list(fixtures), kind=LogEntry.Kind.REPORT, category__isnull=False
        )
        .values("fixture_id", "category__code", "category__name")
        .annotate(count=Count("id"), max_severity=Max("severity"))
        .order_by("fixture_id", "category__code")
    )
    return [
        past_record(
            fixtures[row["fixture_id"]],
            kind="log",
            code=row["category__code"],
            label=row["category__name"],
            count=row["count"],
            max_severity=row["max_severity"] or 0,
        )
        for row in rows
    ]
