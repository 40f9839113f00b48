"""The log's retention step (ADR 0011), run by safeground.privacy in the daily job."""

from datetime import date

from django.conf import settings
from django.utils import timezone

from safeground.retention import Erased, Holds, cutoff, file_erase

from .models import Photo


def photos_retention_apply(today: date, holds: Holds) -> Erased:
    """Delete the files of the log's photos of matches that kicked off more than
    SAFEGROUND_PHOTO_RETENTION_DAYS ago, keeping each row with its SHA-256 and the erasure's time.
    The log's chain hashes the SHA-256 (a PHOTO record), not the file, so it still verifies.
    Photos of an open case's entries are held."""
    days = settings.SAFEGROUND_PHOTO_RETENTION_DAYS
    due = Photo.objects.filter(
        entry__fixture__kickoff__lt=cutoff(today, days), erased_at__isnull=True
    )
    held = erased = 0
    now = timezone.now()
    for photo in due.order_by("pk"):
        if photo.pk in holds.log_photos:
            held += 1
            continue
        file_erase(photo, "image", "erased_at", now)
        erased += 1
    return Erased(what="log photos", days=days, erased=erased, held=held)
