"""Supporters' reports' retention step (ADR 0011), run by safeground.privacy in the daily job.

What identifies a reporter goes SAFEGROUND_SUPPORTERS_RETENTION_DAYS after the match: a contact
they gave, their photo's file (its SHA-256 stays), the keyed hash of their network address, the
text line's phone number and the numbers texts went to. The reports stay, anonymous, as counts
for the post-match report and the season."""

from datetime import date

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from safeground.retention import Erased, Holds, cutoff, file_erase

from .models import Reporter, SupporterReport, TextMessage


def supporters_retention_apply(today: date, holds: Holds) -> Erased:
    days = settings.SAFEGROUND_SUPPORTERS_RETENTION_DAYS
    before = cutoff(today, days)
    now = timezone.now()
    due = SupporterReport.objects.filter(fixture__kickoff__lt=before, erased_at__isnull=True)
    ids = list(due.values_list("pk", flat=True))
    for report in due.exclude(photo="").order_by("pk"):
        file_erase(report, "photo", "erased_at", now)
    SupporterReport.objects.filter(pk__in=ids).erase(contact="", network="", erased_at=now)
    erased = len(ids)
    # A reporter's phone goes once none of their reports is within the period.
    recent = SupporterReport.objects.filter(fixture__kickoff__gte=before).values("reporter")
    phones = Reporter.objects.filter(~Q(phone=""), erased_at__isnull=True).exclude(pk__in=recent)
    erased += phones.count()
    phones.erase(phone="", awaiting_text="", erased_at=now)
    TextMessage.objects.filter(~Q(to=""), sent_at__lt=before).erase(to="", erased_at=now)
    what = "supporters' contacts, photos and phone numbers"
    return Erased(what=what, days=days, erased=erased, held=0)
