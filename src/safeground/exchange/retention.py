"""The exchange app's retention step (ADR 0011), run by safeground.privacy in the daily job: a
club's cached holder tokens (HolderToken) are derived from ticket holders' names and dates of
birth, so they go when unused for as long as the ticket holders' own details are kept."""

from datetime import date

from django.conf import settings

from safeground.retention import Erased, Holds, cutoff

from .models import HolderToken


def holder_tokens_retention_apply(today: date, holds: Holds) -> Erased:
    """Delete the tokens no check has used for SAFEGROUND_TICKET_RETENTION_DAYS. A token names
    no ticket, so an open case holds none (the ticket itself is held by entry's step)."""
    days = settings.SAFEGROUND_TICKET_RETENTION_DAYS
    erased, _ = HolderToken.objects.filter(checked_at__lt=cutoff(today, days)).delete()
    return Erased(what="league holder tokens", days=days, erased=erased, held=0,
                  after="after the holder's last check")  # fmt: skip
