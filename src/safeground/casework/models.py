"""Cases, their subjects and outcomes, the evidence locker and its chain of custody.

A case is opened from one or more log entries of a match and belongs to the home club. Its
history (CaseEvent), its outcomes, its evidence and every touch of a file (CustodyRecord) are
append-only: nothing is edited, a correction is a new record. A file is never replaced: a new
file is a new Evidence row, with its own SHA-256.
"""

from django.conf import settings
from django.core.files.storage import Storage, storages
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground import clock
from safeground.accounts.models import Organisation
from safeground.append_only import AppendOnlyModel
from safeground.bans.models import Ban, Person
from safeground.entry.models import Ticket
from safeground.incidents.models import LogEntry, Photo
from safeground.matches.models import Fixture


def evidence_storage() -> Storage:
    """The "evidence" storage of settings.STORAGES (a folder, or S3-compatible: README)."""
    return storages["evidence"]


class Case(models.Model):
    """A case: opened from log entries of one match. Its state changes only through services,
    each change with a CaseEvent."""

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    organisation = models.ForeignKey(Organisation, on_delete=models.PROTECT, related_name="+")
    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="cases")
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    entries = models.ManyToManyField(LogEntry, related_name="cases")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    opened_at = models.DateTimeField()

    class Meta:
        ordering = ["-opened_at", "-pk"]

    def __str__(self) -> str:
        return f"Case #{self.pk}: {self.title}"


class Subject(AppendOnlyModel):
    """Who or what a case is about: a person on the register, a ticket holder found by who was
    there, an unidentified person (a description, and images as evidence), or material (a
    leaflet, a banner)."""

    class Kind(models.TextChoices):
        PERSON = "person", _("Known person (register)")
        TICKET_HOLDER = "ticket_holder", _("Ticket holder")
        UNIDENTIFIED = "unidentified", _("Unidentified person")
        MATERIAL = "material", _("Material")

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="subjects")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    person = models.ForeignKey(
        Person, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    ticket = models.ForeignKey(
        Ticket, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    description = models.TextField(blank=True)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    added_at = models.DateTimeField()

    class Meta:
        ordering = ["added_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind="person", person__isnull=False, ticket__isnull=True)
                | models.Q(kind="ticket_holder", ticket__isnull=False, person__isnull=True)
                | models.Q(
                    kind__in=["unidentified", "material"], person__isnull=True, ticket__isnull=True
                ),
                name="subject_kind_fits",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk}"

    @property
    def label(self) -> str:
        if self.kind == self.Kind.PERSON and self.person is not None:
            return str(self.person)
        if self.kind == self.Kind.TICKET_HOLDER and self.ticket is not None:
            return f"{self.ticket.holder_name} ({self.ticket.place})"
        return self.description[:80] or self.get_kind_display()


class Outcome(AppendOnlyModel):
    """An action taken or decided on a case: ejection, arrest, a club ban proposal (a ban in the
    register's approval flow), a referral for a court banning order, or no further action."""

    class HomeOfficeOffence(models.TextChoices):
        """The offence groups of the Home Office's football-related arrest statistics, which a
        club and its force return each season."""

        PUBLIC_DISORDER = "public_disorder", _("Public disorder")
        VIOLENT_DISORDER = "violent_disorder", _("Violent disorder")
        ALCOHOL = "alcohol", _("Alcohol offences")
        PITCH_INCURSION = "pitch_incursion", _("Pitch incursion")
        MISSILE = "missile", _("Missile throwing")
        TICKET_TOUTING = "ticket_touting", _("Ticket touting")
        CHANTING = "chanting", _("Racist or indecent chanting")
        CRIMINAL_DAMAGE = "criminal_damage", _("Criminal damage")
        PYROTECHNICS = "pyrotechnics", _("Possession of pyrotechnics")
        OTHER = "other", _("Other")

    class Club(models.TextChoices):
        """Whose supporter the arrested person is, for the season's arrests by club."""

        HOME = "home", _("Home club")
        AWAY = "away", _("Away club")
        OTHER = "other", _("Another club")
        NOT_KNOWN = "not_known", _("Not known")

    class Kind(models.TextChoices):
        EJECTION = "ejection", _("Ejected from the ground")
        ARREST = "arrest", _("Arrested")
        CLUB_BAN = "club_ban", _("Club ban proposed")
        COURT_REFERRAL = "court_referral", _("Referred for a court banning order")
        NO_FURTHER_ACTION = "nfa", _("No further action")

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="outcomes")
    subject = models.ForeignKey(
        Subject, null=True, blank=True, on_delete=models.PROTECT, related_name="outcomes"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    offence = models.CharField(max_length=200, blank=True)  # an arrest: the category's offence
    # An arrest: its group in the Home Office's statistics.
    home_office_offence = models.CharField(
        max_length=20, choices=HomeOfficeOffence.choices, blank=True, default=""
    )
    # An arrest: the arrested person's club ("not known" until it is; a ticket holder's ticket
    # says it too).
    club = models.CharField(max_length=10, choices=Club.choices, blank=True, default="")
    force = models.CharField(max_length=200, blank=True)  # an arrest: the arresting force
    reference = models.CharField(max_length=100, blank=True)  # custody or crime reference
    ban = models.ForeignKey(Ban, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    note = models.TextField(blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} (case {self.case_id})"


class CaseEvent(AppendOnlyModel):
    """One step of a case's history: who did what, when. Append-only."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="events")
    at = models.DateTimeField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    by_name = models.CharField(max_length=150)
    action = models.CharField(max_length=30)
    detail = models.TextField()

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"case {self.case_id}: {self.action} by {self.by_name}"


class Evidence(AppendOnlyModel):
    """A piece of evidence attached to a case and/or a log entry: a file kept with the SHA-256
    computed as it arrived, or a reference to CCTV footage (camera, start and end; no file).

    Retention (retention.evidence_retention_apply, ADR 0011) may delete the file: `file` is
    blanked and `erased_at` set; the row, its SHA-256 and its custody stay."""

    erasable = ("file", "erased_at")

    class Kind(models.TextChoices):
        PHOTO = "photo", _("Photo or CCTV still")
        VIDEO = "video", _("Video file")
        CCTV = "cctv", _("CCTV footage (reference)")
        DOCUMENT = "document", _("Document or material (a leaflet)")
        SCREENSHOT = "screenshot", _("Screenshot (social media)")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="evidence")
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.PROTECT, related_name="evidence"
    )
    entry = models.ForeignKey(
        LogEntry, null=True, blank=True, on_delete=models.PROTECT, related_name="evidence"
    )
    subject = models.ForeignKey(
        Subject, null=True, blank=True, on_delete=models.PROTECT, related_name="evidence"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    description = models.TextField(blank=True)
    file = models.FileField(upload_to="evidence/%Y/%m/", storage=evidence_storage, blank=True)
    original_name = models.CharField(max_length=200, blank=True)
    content_type = models.CharField(max_length=100, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    # CCTV footage: where it is kept, not the file.
    camera = models.CharField(max_length=100, blank=True)
    footage_from = models.DateTimeField(null=True, blank=True)
    footage_to = models.DateTimeField(null=True, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    uploaded_at = models.DateTimeField()
    # Set by retention: the file is gone; its SHA-256 and its chain of custody stay.
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["uploaded_at", "pk"]
        verbose_name_plural = "evidence"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(case__isnull=False) | models.Q(entry__isnull=False),
                name="evidence_attached",
            ),
            models.CheckConstraint(
                condition=models.Q(kind="cctv", file="", erased_at__isnull=True)
                | (
                    ~models.Q(kind="cctv")
                    & ~models.Q(sha256="")
                    # A file, until retention erases it (then its hash alone stays).
                    & (
                        (models.Q(erased_at__isnull=True) & ~models.Q(file=""))
                        | models.Q(erased_at__isnull=False, file="")
                    )
                ),
                name="evidence_file_or_reference",
            ),
        ]

    def __str__(self) -> str:
        return f"Evidence #{self.pk} ({self.get_kind_display()})"


class CustodyRecord(AppendOnlyModel):
    """Chain of custody: every upload, view, download and export of a piece of evidence or of a
    steward's photo, by whom and when, and the destruction of an evidence file by retention (by
    the scheduled task: no user). Append-only."""

    class Action(models.TextChoices):
        UPLOAD = "upload", _("Uploaded")
        VIEW = "view", _("Viewed")
        DOWNLOAD = "download", _("Downloaded")
        EXPORT = "export", _("Exported in a case bundle")
        DESTROY = "destroy", _("File destroyed (retention)")

    at = models.DateTimeField(db_index=True)
    # None: the scheduled task (retention destroying a file); `username` says so.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    username = models.CharField(max_length=150, help_text="the user, or 'scheduled task'")
    action = models.CharField(max_length=10, choices=Action.choices)
    evidence = models.ForeignKey(
        Evidence, null=True, blank=True, on_delete=models.PROTECT, related_name="custody"
    )
    photo = models.ForeignKey(
        Photo, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    sha256 = models.CharField(max_length=64, blank=True)  # the file's hash at that moment
    detail = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(evidence__isnull=False, photo__isnull=True)
                | models.Q(evidence__isnull=True, photo__isnull=False),
                name="custody_one_item",
            )
        ]

    def __str__(self) -> str:
        return f"{clock.local(self.at):%Y-%m-%d %H:%M} {self.username} {self.action}"
