"""Match-day deployment: stewards checking in at their posts, the ground's pre-match checks and
their results, and the plan marked ready.

Posts themselves are the log's (`incidents.models.StewardPost`: the live picture's visibility
depends on them); this app adds what happens at a post. Check-ins, results and the ready mark are
append-only: a new result supersedes an older one, nothing is edited.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground import clock
from safeground.append_only import AppendOnlyModel
from safeground.incidents.models import StewardPost
from safeground.matches.models import Fixture, PlanVersion
from safeground.venues.models import ONE_PLACE, Concourse, Gate, Zone


class CheckIn(AppendOnlyModel):
    """A steward reporting at their post, from the phone. A move to another post needs a new one."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="check_ins")
    post = models.ForeignKey(StewardPost, on_delete=models.PROTECT, related_name="check_ins")
    steward = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    checked_in_at = models.DateTimeField()

    class Meta:
        ordering = ["fixture", "checked_in_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["post"], name="checkin_once_per_post")]

    def __str__(self) -> str:
        return f"{self.steward} checked in at {clock.hhmm(self.checked_in_at)}"


class MatchCheck(models.Model):
    """One item of the ground's checklist at one place (a zone the match uses, a gate or a
    concourse) for one match; whoever is posted there does it. Made from the checklist file,
    never edited (the results say how it went)."""

    class Area(models.TextChoices):
        GATES = "gates", _("Gates and turnstiles")
        EXITS = "exits", _("Exits and gangways")
        BARRIERS = "barriers", _("Barriers and rails")
        FIRE = "fire", _("Fire equipment")
        PA = "pa", _("Public address")
        CCTV = "cctv", _("CCTV")
        FIRST_AID = "first_aid", _("First aid")
        OTHER = "other", _("Other")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="match_checks")
    item = models.SlugField(max_length=40)  # the checklist item's code
    name = models.CharField(max_length=200)
    area = models.CharField(max_length=20, choices=Area.choices)
    critical = models.BooleanField()
    zone = models.ForeignKey(Zone, null=True, blank=True, on_delete=models.PROTECT)
    gate = models.ForeignKey(Gate, null=True, blank=True, on_delete=models.PROTECT)
    concourse = models.ForeignKey(Concourse, null=True, blank=True, on_delete=models.PROTECT)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["fixture", "-critical", "area", "item", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=ONE_PLACE,
                name="check_one_place",
            ),
            # Each item once per place (three partial indexes: SQLite has no NULLS NOT DISTINCT).
            *(
                models.UniqueConstraint(
                    fields=["fixture", "item", place],
                    condition=models.Q(**{f"{place}__isnull": False}),
                    name=f"check_once_per_{place}",
                )
                for place in ("zone", "gate", "concourse")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.place})"

    @property
    def place(self) -> Zone | Gate | Concourse:
        place = self.zone or self.gate or self.concourse
        assert place is not None  # the check constraint
        return place


class CheckResult(AppendOnlyModel):
    """How a check went, or that it was sent back to be done again. The latest result is the
    check's state; earlier ones stay as they were. Retention may delete the photo's file (it can
    show people); its SHA-256 stays, with the time it was erased."""

    erasable = ("photo", "photo_erased_at")

    class Outcome(models.TextChoices):
        PASS = "pass", _("Passed")
        FAIL = "fail", _("Failed")
        RECHECK = "recheck", _("Sent back to check again")

    match_check = models.ForeignKey(MatchCheck, on_delete=models.PROTECT, related_name="results")
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    note = models.TextField(blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    photo = models.FileField(upload_to="check-photos/%Y/%m/", blank=True)
    photo_sha256 = models.CharField(max_length=64, blank=True)
    photo_type = models.CharField(max_length=50, blank=True)
    photo_erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["match_check", "at", "pk"]

    def __str__(self) -> str:
        return f"{self.match_check}: {self.get_outcome_display()}"


class PlanReady(AppendOnlyModel):
    """The safety officer marks a signed-off version of the plan ready. With a critical check
    failed or not done, only with an override and its reason; the checks open at that moment
    are kept with it."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="ready_marks")
    version = models.ForeignKey(PlanVersion, on_delete=models.PROTECT, related_name="+")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    override_reason = models.TextField(blank=True)
    # [{check, name, place, state}] of the critical checks not passed when it was marked ready
    open_critical = models.JSONField(default=list)

    class Meta:
        ordering = ["fixture", "-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.fixture}: plan version {self.version.number} ready"


class CommsCheck(AppendOnlyModel):
    """The communications check before the match: a test alert (a broadcast) to the stewards
    checked in at that moment, each of whom acknowledges it on their phone. The plan is not
    ready until every one of them has (or the safety officer overrides, with a reason)."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="comms_checks")
    broadcast = models.OneToOneField(
        "incidents.Broadcast", on_delete=models.PROTECT, related_name="+"
    )
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    expected_ids = models.JSONField(default=list)  # the stewards checked in when it was sent

    class Meta:
        ordering = ["fixture", "-at", "-pk"]

    def __str__(self) -> str:
        return f"communications check of {self.fixture_id} at {clock.hhmm(self.at)}"
