"""Entry's retention step (ADR 0011), run by safeground.privacy in the daily job."""

from datetime import date

from django.conf import settings
from django.utils import timezone

from safeground.retention import Erased, Holds, cutoff

from .models import Ticket


def tickets_retention_apply(today: date, holds: Holds) -> Erased:
    """Blank the holder's name and date of birth on the tickets of matches that kicked off more
    than SAFEGROUND_TICKET_RETENTION_DAYS ago.

    The ticket rows stay (their scans, flags and case subjects point at them); a ticket an open
    case names is held. One UPDATE per match's worth of rows, not a row at a time."""
    days = settings.SAFEGROUND_TICKET_RETENTION_DAYS
    due = Ticket.objects.filter(
        fixture__kickoff__lt=cutoff(today, days), holder_erased_at__isnull=True
    )
    held = due.filter(pk__in=holds.tickets).count() if holds.tickets else 0
    # By id: SQLite and PostgreSQL both refuse an UPDATE through the fixture join.
    erased = Ticket.objects.filter(pk__in=due.exclude(pk__in=holds.tickets).values("pk")).update(
        holder_name="", holder_dob=None, holder_erased_at=timezone.now()
    )
    return Erased(what="ticket holders", days=days, erased=erased, held=held)
