"""Supporters' reports from their seats and the club's text line, and the control room's triage.

A report never goes into the chained log by itself: it waits in the match's queue as part of a
`TriageItem` (the reports of one block and category within a few minutes, counted together)
until the loggist accepts the item (a log entry made from it), merges it into an incident already
logged, or dismisses it with a reason. Reporters are anonymous by default: a device's cookie or a
phone number is kept only as a keyed hash; a phone number to answer by text, or a way to be
contacted the supporter chose to give, is personal data, erased by retention (retention.py).
"""

from typing import Any, ClassVar

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.append_only import ErasableQuerySet
from safeground.incidents.models import LogEntry
from safeground.matches.models import Fixture
from safeground.venues.models import Block, Ground

from .categories import BY_CODE, CATEGORY_CHOICES


class Reporter(models.Model):
    """One device (its cookie) or one phone, by a keyed hash; its trust grows with accepted
    reports and falls with dismissed ones."""

    class Channel(models.TextChoices):
        WEB = "web", _("Seat page")
        SMS = "sms", _("Text line")

    erasable: ClassVar[tuple[str, ...]] = ("phone", "awaiting_text", "erased_at")
    objects: ClassVar[Any] = ErasableQuerySet.as_manager()

    channel = models.CharField(max_length=3, choices=Channel.choices)
    key = models.CharField(max_length=64, unique=True)  # HMAC-SHA256 of the cookie or the phone
    phone = models.CharField(max_length=20, blank=True)  # the text line's number, to answer it
    trust = models.IntegerField(default=0)
    first_seen = models.DateTimeField(auto_now_add=True)
    erased_at = models.DateTimeField(null=True, blank=True)
    # The text line's message that named no place, kept for the next text to give the place
    # (sms.MAX_AGE at most): "Where are you?" is answered with a place alone.
    awaiting_text = models.CharField(max_length=1000, blank=True)
    awaiting_category = models.CharField(max_length=30, blank=True)
    awaiting_since = models.DateTimeField(null=True, blank=True)
    # The ground whose line it was sent to: the message is that ground's club's data, exported
    # to that organisation only (privacy: subject access for a phone).
    awaiting_ground = models.ForeignKey(
        Ground, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # When the phone texted STOP: no texts to it (not even a decision's) until it texts START.
    texts_stopped_at = models.DateTimeField(null=True, blank=True)
    # The language the text line last read from the phone ("cy" or "en-gb"): its texts are in it.
    language = models.CharField(max_length=8, blank=True)

    def __str__(self) -> str:
        return f"{self.get_channel_display()} reporter {self.pk}"


class TriageItem(models.Model):
    """One line of the control room's queue: the reports of one block and category."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Waiting in the queue")
        ACCEPTED = "accepted", _("Accepted into the log")
        MERGED = "merged", _("Merged into an incident")
        DISMISSED = "dismissed", _("Dismissed")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="+")
    block = models.ForeignKey(Block, null=True, blank=True, on_delete=models.PROTECT)
    category = models.CharField(max_length=30, choices=CATEGORY_CHOICES)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # Open: later reports of the same block and category join it (until it goes quiet for
    # SAFEGROUND_SUPPORTERS_GROUP_MINUTES, is dismissed or its incident is dealt with: a report
    # after that is news, a new item). One open item per block and category.
    is_open = models.BooleanField(default=True)
    count = models.PositiveIntegerField(default=0)
    trust = models.IntegerField(default=0)  # the most trusted reporter's: trusted items first
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=500, blank=True)  # why it was dismissed
    log_entry = models.ForeignKey(
        LogEntry, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    tasked_at = models.DateTimeField(null=True, blank=True)
    # When its reporters on the text line were told its incident was dealt with (resolved or
    # closed): told once, however often the incident is resolved again.
    dealt_with_told_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["fixture", "-trust", "-last_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["fixture", "block", "category"],
                condition=models.Q(is_open=True),
                name="triageitem_one_open_per_block_category",
            )
        ]
        indexes = [models.Index(fields=["fixture", "status"], name="triageitem_queue")]

    def __str__(self) -> str:
        return f"{self.category_label} ×{self.count}"

    @property
    def category_label(self) -> Any:
        """get_category_display's words, looked up by code: the display hashes every choice's
        lazy label (a translation each) on each call, and the queue shows fifty items."""
        return BY_CODE[self.category].label


class SupporterReport(models.Model):
    """What one supporter sent: the seat, the category, what they saw, and how to answer."""

    erasable: ClassVar[tuple[str, ...]] = ("contact", "photo", "network", "erased_at")
    objects: ClassVar[Any] = ErasableQuerySet.as_manager()

    reference = models.CharField(max_length=12, unique=True)
    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="+")
    reporter = models.ForeignKey(Reporter, on_delete=models.PROTECT, related_name="reports")
    item = models.ForeignKey(TriageItem, on_delete=models.PROTECT, related_name="reports")
    channel = models.CharField(max_length=3, choices=Reporter.Channel.choices)
    block = models.ForeignKey(Block, null=True, blank=True, on_delete=models.PROTECT)
    row = models.CharField(max_length=10, blank=True)
    seat = models.CharField(max_length=10, blank=True)
    category = models.CharField(max_length=30, choices=CATEGORY_CHOICES)
    text = models.TextField(blank=True)
    contact = models.CharField(max_length=200, blank=True)  # only if the supporter gave one
    photo = models.FileField(upload_to="supporter-photos/%Y/%m/", blank=True)
    photo_sha256 = models.CharField(max_length=64, blank=True)  # of the file as kept
    photo_type = models.CharField(max_length=50, blank=True)
    network = models.CharField(max_length=64, blank=True)  # a keyed hash of the address
    received_at = models.DateTimeField(db_index=True)
    # When the text line's provider says the text was sent (a congested network delivers late).
    sent_at = models.DateTimeField(null=True, blank=True)
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        indexes = [
            models.Index(fields=["reporter", "received_at"], name="supporterreport_by_reporter"),
            models.Index(fields=["network", "received_at"], name="supporterreport_by_network"),
        ]

    def __str__(self) -> str:
        return self.reference


class TextMessage(models.Model):
    """A text sent to a reporter's phone (through the configured provider)."""

    erasable: ClassVar[tuple[str, ...]] = ("to", "erased_at")
    objects: ClassVar[Any] = ErasableQuerySet.as_manager()

    reporter = models.ForeignKey(Reporter, on_delete=models.PROTECT, related_name="texts")
    # The ground whose line sent it: whose data the text is (a phone may report at two clubs'
    # grounds; each club's subject-access export holds its own texts only). Empty on texts sent
    # before it was kept and not traced to one ground.
    ground = models.ForeignKey(
        Ground, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    to = models.CharField(max_length=20, blank=True)
    body = models.CharField(max_length=480)
    sent_at = models.DateTimeField()
    erased_at = models.DateTimeField(null=True, blank=True)


class BlockSeatCodes(models.Model):
    """The random start of a block's seat codes (seats.py), kept by the ground's and the block's
    codes, not the block's id: a venue file imported again (new ids) keeps every code printed on
    a seat back, and no code can be found from another by counting."""

    ground_code = models.CharField(max_length=60)
    block_code = models.CharField(max_length=20)
    code = models.CharField(max_length=6, unique=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["ground_code", "block_code"], name="blockseatcodes_one_per_block"
            )
        ]

    def __str__(self) -> str:
        return f"{self.ground_code} {self.block_code}: {self.code}"


class SeatLabelsJob(models.Model):
    """The whole ground's seat labels, asked for once and made in the background
    (seat_sheets.py): a zip of every block's sheet, and how far it has got."""

    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="+")
    asked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    asked_at = models.DateTimeField()
    # The site's address as the asker reached it (https://host): what the QR codes point at.
    site = models.CharField(max_length=200)
    blocks_total = models.PositiveIntegerField()
    blocks_done = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    failed = models.CharField(max_length=200, blank=True)
    file = models.FileField(upload_to="seat-labels/", blank=True)

    def __str__(self) -> str:
        return f"seat labels of {self.ground_id}, {self.blocks_done}/{self.blocks_total}"
