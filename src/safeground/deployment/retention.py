"""Deployment's retention step (ADR 0011), run by safeground.privacy in the daily job."""

from datetime import date

from django.conf import settings
from django.utils import timezone

from safeground.retention import Erased, Holds, cutoff, file_erase

from .models import CheckResult


def check_photos_retention_apply(today: date, holds: Holds) -> Erased:
    """Delete the files of check photos of matches that kicked off more than
    SAFEGROUND_PHOTO_RETENTION_DAYS ago. The result stays, with the photo's SHA-256 and the time
    of the erasure (the one change its triggers allow). No case holds a check photo: a photo
    wanted as evidence is uploaded to the case's locker."""
    days = settings.SAFEGROUND_PHOTO_RETENTION_DAYS
    due = CheckResult.objects.filter(
        match_check__fixture__kickoff__lt=cutoff(today, days), photo_erased_at__isnull=True
    ).exclude(photo="")
    erased = 0
    now = timezone.now()
    for result in due.order_by("pk"):
        file_erase(result, "photo", "photo_erased_at", now)
        erased += 1
    return Erased(what="check photos", days=days, erased=erased, held=0)
