"""What partner agencies were told: each CAP 1.2 alert as signed and sent (append-only), where an
organisation wants alerts pushed, and how each push went."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.accounts.models import Organisation
from safeground.append_only import AppendOnlyModel
from safeground.languages import in_language
from safeground.matches.models import Fixture


class PartnerAlert(AppendOnlyModel):
    """One CAP alert: its signed XML kept as written, so the feed answers the same bytes every
    time and a partner's copy can be compared with ours."""

    class Source(models.TextChoices):
        BROADCAST = "broadcast", _("Broadcast")
        WARNING = "warning", _("Warning")
        KICKOFF = "kickoff", _("Kick-off change")
        METHANE = "methane", _("M/ETHANE report")

    class MsgType(models.TextChoices):
        ALERT = "Alert", _("Alert")
        UPDATE = "Update", _("Update")
        CANCEL = "Cancel", _("Cancel")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="partner_alerts")
    # CAP <identifier>: with a random part, so a database started afresh never reuses one.
    identifier = models.CharField(max_length=120, unique=True)
    sent_at = models.DateTimeField()  # CAP <sent>, whole seconds as the XML says it
    msg_type = models.CharField(max_length=10, choices=MsgType.choices)
    references = models.TextField(blank=True)  # CAP <references>: "sender,identifier,sent"
    source = models.CharField(max_length=20, choices=Source.choices)
    source_id = models.PositiveBigIntegerField()  # the broadcast's, entry's, decision's, report's
    home_only = models.BooleanField(default=False)
    # The headline in English and in the other languages it was said in, for the page.
    headline = models.CharField(max_length=300)
    headline_names = models.JSONField(default=dict, blank=True)
    xml = models.BinaryField()

    class Meta:
        ordering = ["-sent_at", "-pk"]
        indexes = [models.Index(fields=["fixture", "sent_at"], name="partneralert_fixture_sent")]
        # One thing told, one alert: a hook heard twice writes nothing new.
        constraints = [
            models.UniqueConstraint(
                fields=["source", "source_id"], name="partneralert_one_per_source"
            )
        ]

    def __str__(self) -> str:
        return self.identifier

    @property
    def local_headline(self) -> str:
        return in_language(self.headline, self.headline_names)


class PushEndpoint(models.Model):
    """Where an organisation's system takes its alerts: each new one it may see is POSTed there."""

    organisation = models.OneToOneField(
        Organisation, on_delete=models.CASCADE, related_name="cap_push_endpoint"
    )
    url = models.URLField(max_length=500)
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    set_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.organisation}: {self.url}"


class PushDelivery(models.Model):
    """One alert pushed to one organisation's endpoint: each try counted, the last answer kept."""

    alert = models.ForeignKey(PartnerAlert, on_delete=models.PROTECT, related_name="deliveries")
    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=500)
    attempts = models.PositiveSmallIntegerField(default=0)
    status = models.PositiveSmallIntegerField(null=True, blank=True)  # the endpoint's answer
    error = models.CharField(max_length=200, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    tried_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["alert", "organisation"], name="pushdelivery_once")
        ]
