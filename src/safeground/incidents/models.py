"""The control-room log: append-only entries per match, each chained to the one before by hash.

Nothing here is ever updated or deleted (the database refuses it too: safeground/append_only.py).
Assignment, escalation, status and corrections are new entries that point at the entry they
concern; an incident's current state is derived from them (selectors.incident_state).
"""

from typing import Any, ClassVar

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.append_only import AppendOnlyModel, ErasableQuerySet
from safeground.matches.models import Fixture
from safeground.venues.models import ONE_PLACE, Block, Concourse, Gate, Zone


class Category(models.Model):
    """An editable list; each says which offence it may point to, for casework later."""

    code = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=100)
    offence = models.CharField(max_length=200, blank=True)
    default_severity = models.PositiveSmallIntegerField(default=2)
    position = models.PositiveSmallIntegerField(default=0)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["position", "name"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.name


class LogEntry(AppendOnlyModel):
    class Kind(models.TextChoices):
        REPORT = "report", _("Report")
        ASSIGNMENT = "assignment", _("Assignment")
        ESCALATION = "escalation", _("Escalation")
        STATUS = "status", _("Status change")
        CORRECTION = "correction", _("Correction")
        TASK = "task", _("Task update")  # the assignee accepts or finishes the task
        WARNING = "warning", _("Flashpoint warning")  # written by the flashpoint service
        # Chained records: what else the control room did, kept in the chain so it is anchored
        # too, but never shown as log entries (each has its own page and audience).
        BROADCAST = "broadcast", _("Broadcast sent")
        POST = "post", _("Steward posted")
        PHOTO = "photo", _("Photo kept")
        # A commander's decision (or its amendment) and its review: the decisions app's record.
        DECISION = "decision", _("Decision logged")
        DECISION_REVIEW = "decision_review", _("Decision reviewed")
        # A major incident declared, or its M/ETHANE report corrected (the decisions app's).
        MAJOR_INCIDENT = "major_incident", _("Major incident (M/ETHANE)")

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        ASSIGNED = "assigned", _("Assigned")
        ESCALATED = "escalated", _("Escalated")
        RESOLVED = "resolved", _("Resolved")
        CLOSED = "closed", _("Closed")

    class Task(models.TextChoices):
        ACCEPTED = "accepted", _("Accepted")
        DONE = "done", _("Done")

    class Level(models.TextChoices):
        SUPERVISOR = "supervisor", _("Steward supervisor")
        CONTROL_ROOM = "control_room", _("Control room")
        POLICE = "police", _("Police")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="log_entries")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=Kind.choices)
    concerns = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="actions"
    )
    # When it happened, on the server's clock: the reporting device's own time corrected by how
    # far its clock was off when it sent the report (ADR 0026). logged_at: when it reached us.
    observed_at = models.DateTimeField()
    logged_at = models.DateTimeField()
    # The device's own clock, as it read when the report was made and when it was sent (a
    # retry from an offline outbox reads it again): kept when the device said when it sent.
    device_observed_at = models.DateTimeField(null=True, blank=True)
    device_sent_at = models.DateTimeField(null=True, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    author_name = models.CharField(max_length=150)
    author_role = models.CharField(max_length=30, blank=True)
    # Place: a block (optionally rows), a zone, a gate, a concourse, or outside the ground.
    block = models.ForeignKey(Block, null=True, blank=True, on_delete=models.PROTECT)
    first_row = models.CharField(max_length=10, blank=True)
    last_row = models.CharField(max_length=10, blank=True)
    zone = models.ForeignKey(Zone, null=True, blank=True, on_delete=models.PROTECT)
    gate = models.ForeignKey(Gate, null=True, blank=True, on_delete=models.PROTECT)
    concourse = models.ForeignKey(Concourse, null=True, blank=True, on_delete=models.PROTECT)
    outside = models.CharField(max_length=200, blank=True)
    category = models.ForeignKey(Category, null=True, blank=True, on_delete=models.PROTECT)
    severity = models.PositiveSmallIntegerField(null=True, blank=True)
    text = models.TextField(blank=True)  # a report's text, or a correction's corrected text
    note = models.TextField(blank=True)  # an action's remark, or why a correction was made
    status = models.CharField(max_length=20, choices=Status.choices, blank=True)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    escalated_to = models.CharField(max_length=20, choices=Level.choices, blank=True)
    task = models.CharField(max_length=10, choices=Task.choices, blank=True)
    links = models.JSONField(default=list, blank=True)
    home_only = models.BooleanField(default=False)
    idempotency_key = models.CharField(max_length=80, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["fixture", "seq"]
        verbose_name_plural = "log entries"
        constraints = [
            models.UniqueConstraint(fields=["fixture", "seq"], name="logentry_one_chain"),
            # A key is its author's own: another user's report with the same key is stored.
            models.UniqueConstraint(
                fields=["fixture", "author", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="logentry_idempotent_per_author",
            ),
            models.CheckConstraint(
                condition=models.Q(severity__isnull=True) | models.Q(severity__range=(1, 5)),
                name="logentry_severity_1_5",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.get_kind_display()}"


# An incident dealt with: resolved, or closed after it. Its reporters hear so (hooks), the
# reports count it resolved.
DEALT_WITH_STATUSES = (LogEntry.Status.RESOLVED, LogEntry.Status.CLOSED)


class StewardPost(models.Model):
    """Where the control room has put a steward for a match: a zone, a gate or a concourse.

    Reassigning writes a new post; the latest one is the steward's post (a history of moves).
    """

    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="steward_posts")
    steward = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="steward_posts"
    )
    zone = models.ForeignKey(Zone, null=True, blank=True, on_delete=models.PROTECT)
    gate = models.ForeignKey(Gate, null=True, blank=True, on_delete=models.PROTECT)
    concourse = models.ForeignKey(Concourse, null=True, blank=True, on_delete=models.PROTECT)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    assigned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["fixture", "steward", "-assigned_at"]
        constraints = [
            models.CheckConstraint(
                condition=ONE_PLACE,
                name="stewardpost_one_place",
            )
        ]

    def __str__(self) -> str:
        return f"{self.steward}: {self.zone or self.gate or self.concourse}"


class Broadcast(models.Model):
    """An urgent message from the control room to every device of the match, or to one zone."""

    # English on purpose: a broadcast without words of its own stores its script's label as its
    # text, and each reader's page and phone says it in theirs (steward_words.SCRIPT_NAMES).
    class Script(models.TextChoices):
        HOLD = "hold", "Hold at the gates"
        EVACUATE = "evacuate", "Evacuate block"
        LOCKDOWN = "lockdown", "Lockdown"
        ALL_CLEAR = "all_clear", "All clear"
        FREE = "free", "Message"

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="broadcasts")
    script = models.CharField(max_length=20, choices=Script.choices)
    text = models.CharField(max_length=500)
    zone = models.ForeignKey(Zone, null=True, blank=True, on_delete=models.PROTECT)
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    sent_at = models.DateTimeField(auto_now_add=True)
    # Who it was addressed to when sent (user ids), so "not yet acknowledged" is a fixed list.
    recipient_ids = models.JSONField(default=list)

    class Meta:
        ordering = ["-sent_at"]

    def __str__(self) -> str:
        return self.text


class BroadcastAck(models.Model):
    broadcast = models.ForeignKey(Broadcast, on_delete=models.CASCADE, related_name="acks")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    acked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["broadcast", "user"], name="broadcast_ack_once")
        ]


class Photo(models.Model):
    """A photo attached to a log entry (a steward's phone camera), kept with its SHA-256."""

    erasable: ClassVar[tuple[str, ...]] = ("image", "erased_at")  # retention's, through erase()
    objects: ClassVar[Any] = ErasableQuerySet.as_manager()

    entry = models.ForeignKey(LogEntry, on_delete=models.PROTECT, related_name="photos")
    image = models.FileField(upload_to="log-photos/%Y/%m/")
    sha256 = models.CharField(max_length=64)
    content_type = models.CharField(max_length=50)
    size = models.PositiveIntegerField()
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)
    # Set by retention: the file is gone; its SHA-256 stays (the log's chain holds it).
    erased_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Photo {self.sha256[:12]} of {self.entry}"


class LogCheckpoint(AppendOnlyModel):
    """The chain's head, signed with the server's key: "this match's log had N entries ending
    in this hash at this time". Copies go outside the database (a checkpoint folder, the sharing
    organisations' downloads), so a rewritten, cut short or emptied log no longer verifies
    against them (docs/adr/0008-anchored-log.md)."""

    class Reason(models.TextChoices):
        INTERVAL = "interval", _("During the match")
        FULL_TIME = "full_time", _("Full time")
        ON_REQUEST = "on_request", _("On request")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="log_checkpoints")
    entries = models.PositiveIntegerField()  # the chain's length: the head's seq
    head = models.CharField(max_length=64)  # the hash of entry #entries
    made_at = models.DateTimeField()
    reason = models.CharField(max_length=20, choices=Reason.choices)
    key_id = models.CharField(max_length=16)
    # The signed bytes as they were signed (canonical JSON), and the signature (base64url).
    statement = models.TextField()
    signature = models.CharField(max_length=100)

    class Meta:
        ordering = ["fixture", "entries"]
        constraints = [
            models.UniqueConstraint(fields=["fixture", "entries"], name="logcheckpoint_once"),
        ]

    def __str__(self) -> str:
        return f"checkpoint of {self.fixture_id} at #{self.entries}"


# --- the log's counts, kept by the database as entries are appended (incidents/counts.py) -------


class ReportsByCategory(models.Model):
    """Reports of a match per category and home-only: kept by a trigger on the log's INSERT,
    never written by Python. `category_id` 0: a report without a category."""

    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="+", db_index=False)
    category_id = models.BigIntegerField()
    home_only = models.BooleanField()
    reports = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["fixture", "category_id", "home_only"], name="reportsbycategory_one_row"
            )
        ]

    def __str__(self) -> str:
        return f"match {self.fixture_id} category {self.category_id}: {self.reports}"


class IncidentsByBlock(models.Model):
    """Incidents (reports outside the categories that are not incidents) of a match per block
    and home-only: kept by a trigger on the log's INSERT, never written by Python."""

    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="+", db_index=False)
    block = models.ForeignKey(Block, on_delete=models.CASCADE, related_name="+", db_index=False)
    home_only = models.BooleanField()
    incidents = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["fixture", "block", "home_only"], name="incidentsbyblock_one_row"
            )
        ]

    def __str__(self) -> str:
        return f"match {self.fixture_id} block {self.block_id}: {self.incidents}"


class IncidentResponse(models.Model):
    """An incident acted on: when it was seen, and its first assignment, escalation and
    resolution, kept by a trigger on the log's INSERT of those actions (the earliest of each
    wins, whatever order they arrive in). Never written by Python."""

    report = models.OneToOneField(
        LogEntry, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="+")
    home_only = models.BooleanField()
    observed_at = models.DateTimeField()
    first_assigned = models.DateTimeField(null=True)
    first_escalated = models.DateTimeField(null=True)
    first_resolved = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"response to {self.report_id}"
