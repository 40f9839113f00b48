"""Clubs, competitions and fixtures: who plays where, which zones each end uses, who works it."""

from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.accounts.models import Organisation, User
from safeground.append_only import AppendOnlyModel
from safeground.languages import in_language
from safeground.venues.models import Ground, Layout, Zone


class Club(models.Model):
    name = models.CharField(max_length=100, unique=True)
    short_name = models.CharField(max_length=40)
    # The club's own organisation, when it uses Safeground.
    organisation = models.OneToOneField(
        Organisation, null=True, blank=True, on_delete=models.SET_NULL, related_name="club"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Competition(models.Model):
    name = models.CharField(max_length=100, unique=True)

    def __str__(self) -> str:
        return self.name


# A match's scheduled length, kick-off to full time (45 + 15 + 45 minutes). Stoppage and extra time
# are not recorded anywhere, so the post-match record's timeline and the log's full-time
# checkpoint (incidents/checkpoints.py) count from this, each with its own allowance.
FULL_TIME_MINUTES = 105


class Fixture(models.Model):
    ground = models.ForeignKey(Ground, on_delete=models.PROTECT, related_name="fixtures")
    home_club = models.ForeignKey(Club, on_delete=models.PROTECT, related_name="home_fixtures")
    away_club = models.ForeignKey(Club, on_delete=models.PROTECT, related_name="away_fixtures")
    competition = models.ForeignKey(Competition, on_delete=models.PROTECT)
    stage = models.CharField(max_length=100, blank=True)
    kickoff = models.DateTimeField()
    # Minutes a commander's decision put the kick-off back (decisions: the log keeps why).
    kickoff_delay = models.PositiveSmallIntegerField(default=0)
    away_allocation = models.PositiveIntegerField(default=0)
    # The ground's layout the zones were set from (none: set zone by zone, as the demo's 2016 were).
    layout = models.ForeignKey(
        Layout, null=True, blank=True, on_delete=models.PROTECT, related_name="fixtures"
    )
    # Off: an exit scan is recorded and the ticket admits no one again (a ticket passed back over
    # the wall is caught). On: an exit re-opens entry for that ticket.
    reentry = models.BooleanField(
        "re-entry", default=False, help_text="An exit scan lets the ticket in again."
    )
    shared_with = models.ManyToManyField(
        Organisation, through="FixtureShare", related_name="shared_fixtures", blank=True
    )

    class Meta:
        ordering = ["kickoff"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(home_club=models.F("away_club")), name="fixture_two_clubs"
            )
        ]

    def __str__(self) -> str:
        return f"{self.home_club.short_name} v {self.away_club.short_name}"

    @property
    def title(self) -> str:
        """The match as a list names it: the clubs, and the stage when it has one. The same clubs
        can meet twice in a season's list (a cup replay; the demo's rerun of its cup tie): the
        stage tells them apart where the clubs alone would not."""
        clubs = f"{self.home_club.name} v {self.away_club.name}"
        return f"{clubs}, {self.stage}" if self.stage else clubs

    @property
    def kickoff_now(self) -> datetime:
        """The kick-off as it stands: the planned one, put back by any delay decided."""
        return self.kickoff + timedelta(minutes=self.kickoff_delay)

    @property
    def scheduled_full_time(self) -> datetime:
        return self.kickoff + timedelta(minutes=FULL_TIME_MINUTES)

    def shared_organisation_ids(self) -> list[int]:
        # Uses prefetched shares when the selector prefetched them.
        return [share.organisation_id for share in self.shares.all()]


class FixtureShare(models.Model):
    """An organisation working the fixture (the police force, the away club's liaison)."""

    class Purpose(models.TextChoices):
        POLICE = "police", _("Policing the match")
        AWAY_CLUB = "away_club", _("Away club liaison")
        OTHER = "other", _("Other")

    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="shares")
    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    purpose = models.CharField(max_length=20, choices=Purpose.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["fixture", "organisation"], name="share_unique")
        ]


class FixtureZone(models.Model):
    """Which of the ground's zones hold home fans, away fans and the buffer for this fixture."""

    class Use(models.TextChoices):
        HOME = "home", _("Home supporters")
        AWAY = "away", _("Away supporters")
        BUFFER = "buffer", _("Segregation buffer")

    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="zones")
    zone = models.ForeignKey(Zone, on_delete=models.PROTECT, related_name="+")
    use = models.CharField(max_length=10, choices=Use.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["fixture", "zone"], name="fixturezone_unique")
        ]


class ShareRecord(AppendOnlyModel):
    """Who shared a fixture with an organisation, or stopped sharing it, and when: the shares
    themselves change, this record of them never does."""

    class Action(models.TextChoices):
        SHARED = "shared", _("Shared")
        UNSHARED = "unshared", _("Unshared")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="share_records")
    organisation = models.ForeignKey(Organisation, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=10, choices=Action.choices)
    purpose = models.CharField(max_length=20, choices=FixtureShare.Purpose.choices)
    by = models.ForeignKey(User, null=True, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "pk"]


class RiskAssessment(AppendOnlyModel):
    """A fixture's category as assessed at a time under a policy, with every factor behind it.

    Kept, never changed: the category a plan was made from stays explainable. A fixture's
    current assessment is its latest one; an open fixture is assessed again when the policy
    changes (matches.services.risk_assessment_current, `safeground assess`)."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="assessments")
    category = models.CharField(max_length=20)
    meaning = models.CharField(max_length=100, blank=True)
    # The meaning in other languages, from the policy file's `meanings: {cy: "..."}`.
    meanings = models.JSONField(default=dict, blank=True)
    score = models.FloatField()
    summary = models.TextField()
    # [{key, name, value, weight, contribution, working, reasons: [...]}, ...] (matches.risk)
    factors = models.JSONField()
    policy_path = models.CharField(max_length=500)
    policy_sha256 = models.CharField(max_length=64)
    assessed_at = models.DateTimeField()
    assessed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["fixture", "-assessed_at", "-pk"]
        get_latest_by = ["assessed_at", "pk"]

    @property
    def local_meaning(self) -> str:
        """The category's meaning in the reader's language (safeground/languages.py)."""
        return in_language(self.meaning, self.meanings)

    @property
    def policy_file(self) -> str:
        """The policy's file name, without the server's folders (not for the page to show)."""
        return Path(self.policy_path).name

    def __str__(self) -> str:
        return f"{self.fixture}: category {self.category}"


class PlanVersion(AppendOnlyModel):
    """One saved version of a fixture's match plan. Every change is a new version; the latest
    is the plan, and it is signed off only when both the safety officer and the police
    commander have signed that version (PlanSignOff)."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="plan_versions")
    number = models.PositiveIntegerField()
    assessment = models.ForeignKey(RiskAssessment, on_delete=models.PROTECT, related_name="+")
    category = models.CharField(max_length=20)
    # {key: text} for each of matches.policy.MEASURES
    measures = models.JSONField()
    # [{zone, name, use, capacity, per, computed, stewards}]: computed = ceil(capacity / per);
    # stewards is the number planned (the computed one unless the safety officer changed it)
    stewards = models.JSONField()
    # {spectators, computed, first_aiders, crowd_doctor, working}
    first_aid = models.JSONField()
    communications = models.JSONField()  # {primary, fallback}
    note = models.TextField(blank=True)  # what changed and why
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["fixture", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["fixture", "number"], name="planversion_unique")
        ]

    def __str__(self) -> str:
        return f"{self.fixture}: plan version {self.number}"


class PlanSignOff(AppendOnlyModel):
    """A signature on one version of the plan, in one role (safety officer, police commander)."""

    version = models.ForeignKey(PlanVersion, on_delete=models.PROTECT, related_name="sign_offs")
    role = models.CharField(max_length=30)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    signed_at = models.DateTimeField()

    class Meta:
        ordering = ["version", "signed_at"]
        constraints = [
            models.UniqueConstraint(fields=["version", "role"], name="plansignoff_one_per_role")
        ]

    def __str__(self) -> str:
        return f"{self.version} signed by {self.user} ({self.role})"
