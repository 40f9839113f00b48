"""The turnstiles' history for risk assessments (matches.risk): per earlier match, how many
banned supporters' tickets were denied entry (each ticket once, however often it was tried)."""

from django.db.models import Count

from safeground.matches.risk import HistoryWindow, PastRecord, past_fixtures, past_record

from .models import Scan


def banned_denials(window: HistoryWindow) -> list[PastRecord]:
    fixtures = {f.pk: f for f in past_fixtures(window).select_related("home_club", "away_club")}
    rows = (
        Scan.objects.filter(
            fixture_id__in=list(fixtures),
            direction=Scan.Direction.IN,
            decision=Scan.Decision.DENY,
            reason=Scan.Reason.BANNED,
        )
        .values("fixture_id")
        .annotate(count=Count("barcode", distinct=True))
        .order_by("fixture_id")
    )
    return [
        past_record(
            fixtures[row["fixture_id"]], kind="denial", code="", label="", count=row["count"]
        )
        for row in rows
    ]
