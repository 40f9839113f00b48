"""Push subscriptions of stewards' phones, and what became of each alert sent to them."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.incidents.models import Broadcast, LogEntry
from safeground.matches.models import Fixture


class PushSubscription(models.Model):
    """One phone's (one browser's) Web Push subscription: where its push service takes
    messages for it, and the keys its messages are encrypted to (RFC 8291)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions"
    )
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=100)  # base64url, the phone's P-256 public key
    auth = models.CharField(max_length=50)  # base64url, the 16-byte authentication secret
    device = models.CharField(max_length=200, blank=True)  # the browser's own description
    # The steward page's language when the phone subscribed: its alerts are worded in it (a
    # locked phone shows the notification without the page). Blank: the site's language.
    language = models.CharField(max_length=10, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the phone last gave it (the steward page sends it again on each visit), and when a
    # push service last took a message for it: retention drops it once both are old.
    saved_at = models.DateTimeField(auto_now=True)
    last_ok_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.user}: {self.device or self.endpoint[:40]}"


class Alert(models.Model):
    """A push to phones: a broadcast, a task given, a flashpoint warning in one's zone, an
    urgent broadcast raised to the supervisors because it is not acknowledged in time, or a
    major incident's M/ETHANE report to the commanders."""

    class Kind(models.TextChoices):
        BROADCAST = "broadcast", _("Broadcast")
        TASK = "task", _("Task")
        WARNING = "warning", _("Flashpoint warning")
        OVERDUE = "overdue", _("Broadcast not acknowledged")
        MAJOR_INCIDENT = "major_incident", _("Major incident (M/ETHANE)")  # to the commanders

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="alerts")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    broadcast = models.ForeignKey(
        Broadcast, null=True, blank=True, on_delete=models.PROTECT, related_name="alerts"
    )
    entry = models.ForeignKey(
        LogEntry, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    title = models.CharField(max_length=200)
    body = models.CharField(max_length=500)
    urgent = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # An urgent broadcast's alert: when it was raised to the supervisors, unacknowledged.
    raised_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["urgent", "raised_at", "created_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.title}"


class AlertRecipient(models.Model):
    """One person's copy of an alert: sent (a push service took it for at least one of their
    phones), delivered (a phone's service worker said it arrived), seen (the steward page
    showed it). Acknowledged is the broadcast's own acknowledgement (incidents)."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="recipients")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    devices = models.PositiveSmallIntegerField(default=0)  # subscriptions it was pushed to
    sent_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    seen_at = models.DateTimeField(null=True, blank=True)
    failed = models.CharField(max_length=200, blank=True)  # why no phone took it, if none did

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["alert", "user"], name="alert_recipient_once")
        ]

    def __str__(self) -> str:
        return f"{self.alert_id} to {self.user_id}"
