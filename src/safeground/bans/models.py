"""The banned-supporter register: people, their bans, each ban's history, flags and access records.

Criminal-offence data (UK GDPR Art. 10): a person holds no more than matching and identification
need. Every read of a person and every change leaves an AccessRecord
(docs/adr/0004-ban-register.md).
A ban's history (BanStep) and the access records are append-only: the query sets refuse update and
delete, and only retention blanks what must be erased.
"""

from datetime import date

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from safeground import clock
from safeground.accounts.models import Organisation
from safeground.append_only import AppendOnlyModel
from safeground.venues.models import Ground


class Person(models.Model):
    """Someone on a club's register: names, date of birth, optional photo and supporter number."""

    organisation = models.ForeignKey(Organisation, on_delete=models.PROTECT, related_name="+")
    first_names = models.CharField(max_length=100)
    last_name = models.CharField(max_length=100)
    date_of_birth = models.DateField(null=True, blank=True)  # null only once erased
    supporter_number = models.CharField(max_length=40, blank=True)
    photo = models.FileField(upload_to="register/photos/", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by retention: names, date of birth, number and photo are gone; the bans stay as counts.
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["organisation", "last_name"])]

    def __str__(self) -> str:
        if self.erased_at:
            return f"Erased person #{self.pk}"
        return f"{self.first_names} {self.last_name}"

    @property
    def full_name(self) -> str:
        return f"{self.first_names} {self.last_name}".strip()


class BanQuerySet(models.QuerySet["Ban"]):
    def in_force_on(self, day: date) -> "BanQuerySet":
        """The bans in force on the day (today's, or a past match day's for the season)."""
        return self.filter(in_force_q(day))


class Ban(models.Model):
    class Type(models.TextChoices):
        CLUB_BAN = "club_ban", _("Club ban")
        BANNING_ORDER = "banning_order", _("Football banning order (Football Spectators Act 1989)")
        GROUND_EXCLUSION = "ground_exclusion", _("Ground exclusion")

    class Scope(models.TextChoices):
        GROUND = "ground", _("This ground")
        CLUB = "club", _("The club's matches, home and away")
        REGISTER = "register", _("Every ground sharing the register")

    class Status(models.TextChoices):
        PROPOSED = "proposed", _("Proposed")
        REJECTED = "rejected", _("Rejected")
        APPROVED = "approved", _("Approved (not yet started)")
        ACTIVE = "active", _("Active")
        APPEALED = "appealed", _("Under appeal (in force)")
        UPHELD = "upheld", _("Upheld on appeal")
        REVOKED = "revoked", _("Revoked on appeal")
        EXPIRED = "expired", _("Expired")

    person = models.ForeignKey(Person, on_delete=models.PROTECT, related_name="bans")
    organisation = models.ForeignKey(Organisation, on_delete=models.PROTECT, related_name="+")
    type = models.CharField(max_length=20, choices=Type.choices)
    issued_by = models.CharField(max_length=200, help_text="the club, or the court for an order")
    scope = models.CharField(max_length=10, choices=Scope.choices)
    ground = models.ForeignKey(
        Ground, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    starts_on = models.DateField()
    ends_on = models.DateField(null=True, blank=True)
    is_life = models.BooleanField(default=False)
    grounds = models.TextField(help_text="why the ban was proposed")
    # Banning orders only: what the court ordered.
    reporting_conditions = models.TextField(blank=True)
    control_periods = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PROPOSED)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    appeal_decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The day the ban stopped having effect (expired, revoked, rejected): retention counts from it.
    ended_on = models.DateField(null=True, blank=True)

    objects = BanQuerySet.as_manager()

    class Meta:
        ordering = ["-starts_on", "-pk"]
        indexes = [models.Index(fields=["status"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(is_life=True, ends_on__isnull=True)
                | models.Q(is_life=False, ends_on__isnull=False),
                name="ban_end_or_life",
            ),
            models.CheckConstraint(
                condition=models.Q(ends_on__isnull=True)
                | models.Q(ends_on__gte=models.F("starts_on")),
                name="ban_ends_after_start",
            ),
            models.CheckConstraint(
                condition=~models.Q(scope="ground") | models.Q(ground__isnull=False),
                name="ban_ground_scope_names_ground",
            ),
        ]

    def __str__(self) -> str:
        return f"Ban #{self.pk} ({self.get_type_display()}, {self.get_status_display()})"


IN_FORCE = frozenset({Ban.Status.ACTIVE, Ban.Status.APPEALED, Ban.Status.UPHELD})
ENDED = frozenset({Ban.Status.REJECTED, Ban.Status.REVOKED, Ban.Status.EXPIRED})
# A ban in one of these is in force over its whole term (approved: from its start date, before
# the daily roll-forward marks it active; expired: its term has passed); a revoked one was in force
# until the day it was revoked. So a past day reads the same now as it did then.
OVER_ITS_TERM = frozenset({*IN_FORCE, Ban.Status.APPROVED, Ban.Status.EXPIRED})


def in_force_q(day: date | None, *, via: str = "") -> Q:
    """The rule, once: a ban is in force on a day when it was approved, the day lies in its
    term, and it was not revoked by then. `via` reaches a ban through a relation ("ban__").
    The turnstile's statement reads the same rule in SQL: `in_force_sql`."""
    return (
        (
            Q(**{f"{via}status__in": OVER_ITS_TERM})
            | Q(**{f"{via}status": Ban.Status.REVOKED, f"{via}ended_on__gt": day})
        )
        & Q(**{f"{via}starts_on__lte": day})
        & (Q(**{f"{via}ends_on__isnull": True}) | Q(**{f"{via}ends_on__gte": day}))
    )


def in_force_sql(ban: str, day: str) -> str:
    """`in_force_q` as an SQL condition on the bans_ban row `ban` and the date expression `day`
    (tests/bans/test_in_force.py holds the two to the same answers)."""
    statuses = ", ".join(f"'{status}'" for status in sorted(OVER_ITS_TERM))
    return (
        f"({ban}.status IN ({statuses})"
        f" OR ({ban}.status = '{Ban.Status.REVOKED}' AND {ban}.ended_on > {day}))"
        f" AND {ban}.starts_on <= {day} AND ({ban}.ends_on IS NULL OR {ban}.ends_on >= {day})"
    )


class BanStep(AppendOnlyModel):
    """One step of a ban's life: who did it, when, why. Append-only; retention may erase the
    reason (it can name the person)."""

    erasable = ("reason",)

    ban = models.ForeignKey(Ban, on_delete=models.PROTECT, related_name="steps")
    action = models.CharField(max_length=20)
    from_status = models.CharField(max_length=10, blank=True)
    to_status = models.CharField(max_length=10)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    by_name = models.CharField(max_length=150, help_text="the user, or 'scheduled task'")
    at = models.DateTimeField()
    reason = models.TextField()

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.ban_id}: {self.action} by {self.by_name}"


class AccessRecord(AppendOnlyModel):
    """The one access trail of personal data (docs/adr/0020-one-access-trail.md): who read,
    exported or changed what about a supporter, for which organisation, when, and the reason they
    gave; the register's, the gates', casework's and the supporters' reads alike. Written through
    bans.services.access_record_write only. Append-only."""

    class Action(models.TextChoices):
        READ = "read", _("Read a person's record")
        SEARCH = "search", _("Searched the register")
        REVIEW_FLAG = "review_flag", _("Reviewed a flagged ticket")
        PROPOSE = "propose", _("Proposed a ban")
        APPROVE = "approve", _("Approved a ban")
        REJECT = "reject", _("Rejected a proposed ban")
        APPEAL = "appeal", _("Recorded an appeal")
        DECIDE_APPEAL = "decide_appeal", _("Decided an appeal")
        ACTIVATE = "activate", _("Ban came into force")
        EXPIRE = "expire", _("Ban expired")
        CONFIRM_FLAG = "confirm_flag", _("Confirmed a flagged ticket")
        CLEAR_FLAG = "clear_flag", _("Cleared a flagged ticket")
        ERASE = "erase", _("Erased a person (retention)")
        IDENTIFY = "identify", _("Looked up who sat near an incident")
        IDENTIFY_LARGE = "identify_large", _("Looked up who sat near an incident: a large search")
        LIST_FLAGS = "list_flags", _("Listed flagged tickets (holders' names)")
        SUBJECT_ACCESS = "subject_access", _("Exported everything held about a person")
        LEAGUE_PUBLISH = (
            "league_publish",
            _("Published bans to the league's exchange (tokens only)"),
        )
        READ_CONTACT = "read_contact", _("Read a supporter's contact details")
        READ_PHOTO = "read_photo", _("Opened a supporter's photo")
        SUBJECT_ACCESS_PHONE = (
            "subject_access_phone",
            _("Exported everything held about a phone number"),
        )
        EXPORT_FORGED = "export_forged", _("Exported the forged tickets refused at a match")

    at = models.DateTimeField(db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    username = models.CharField(max_length=150, help_text="the user, or 'scheduled task'")
    # Required of every new record (the writer takes no None); empty only on rows written
    # before the trail was one.
    organisation = models.ForeignKey(
        Organisation, null=True, on_delete=models.PROTECT, related_name="+"
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    # What was read, in words an auditor can search ("report R-ABC12", "phone ending 1234"):
    # never a full phone number or a name, the trail itself holding no more than it must.
    subject = models.CharField(max_length=100, blank=True, default="", db_default="")
    person = models.ForeignKey(
        Person, null=True, blank=True, on_delete=models.PROTECT, related_name="access_records"
    )
    ban = models.ForeignKey(
        Ban, null=True, blank=True, on_delete=models.PROTECT, related_name="access_records"
    )
    reason = models.TextField()
    detail = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{clock.local(self.at):%Y-%m-%d %H:%M} {self.username} {self.action}"


class LeagueBan(models.Model):
    """A ban another club published to the league's exchange, known here because a check of this
    club's tickets matched it (safeground.exchange): what a match gives, the ban's kind, its end,
    the issuing club and its contact; never that club's register, evidence or the person's name.
    Withdrawn when the issuing club no longer publishes it (ended, or overturned on appeal)."""

    organisation = models.ForeignKey(Organisation, on_delete=models.PROTECT, related_name="+")
    reference = models.CharField(max_length=64, help_text="the exchange's opaque reference")
    kind = models.CharField(max_length=20, choices=Ban.Type.choices)
    is_life = models.BooleanField(default=False)
    ends_on = models.DateField(null=True, blank=True)
    issuing_club = models.CharField(max_length=200)
    contact = models.CharField(max_length=300)
    first_matched_at = models.DateTimeField()
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organisation", "reference"], name="leagueban_unique_reference"
            )
        ]

    def __str__(self) -> str:
        return f"League ban {self.reference[:8]} ({self.get_kind_display()}, {self.issuing_club})"
