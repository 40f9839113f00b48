"""Alerts' retention step (ADR 0011), run by safeground.privacy in the daily job: a steward's
push subscription is dropped once it has gone unused for SAFEGROUND_PUSH_RETENTION_DAYS.

A subscription is the address of one person's phone; it is kept only while it is in use. A
steward's phone subscribes again when they next check in (alerts/push-sw-1.js), so a dropped one
costs nothing on the next match day. The alerts' records (who was sent what, when) stay: they
are the match's record.
"""

from datetime import date

from django.conf import settings
from django.db.models import Q

from safeground.retention import Erased, Holds, cutoff

from .models import PushSubscription


def subscriptions_retention_apply(today: date, holds: Holds) -> Erased:
    """Delete the subscriptions neither given by the phone nor taken by a push service since the
    cutoff. No case holds a subscription: it is no evidence of anything."""
    days = settings.SAFEGROUND_PUSH_RETENTION_DAYS
    before = cutoff(today, days)
    unused = PushSubscription.objects.filter(saved_at__lt=before).filter(
        Q(last_ok_at__isnull=True) | Q(last_ok_at__lt=before)
    )
    erased, _ = unused.delete()
    return Erased(
        what="push subscriptions", days=days, erased=erased, held=0, after="after its last use"
    )
