"""Tickets for a match, as the ticketing system exported them (see entry/ticket_file.py), and
every scan at the turnstiles (docs/adr/0005-turnstile-decisions.md)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.accounts.models import Device
from safeground.append_only import AppendOnlyModel
from safeground.bans.models import Ban, LeagueBan
from safeground.matches.models import Fixture
from safeground.venues.models import Block, Gate, Turnstile

from . import rules


class Ticket(models.Model):
    class End(models.TextChoices):
        HOME = "home", _("Home")
        AWAY = "away", _("Away")

    class Status(models.TextChoices):
        VALID = "valid", _("Valid")
        CANCELLED = "cancelled", _("Cancelled")

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="tickets")
    barcode = models.CharField(max_length=64)
    holder_name = models.CharField(max_length=200)
    holder_dob = models.DateField(null=True)  # null only once erased
    # Set by retention: the holder's name and date of birth are gone; the ticket and its scans
    # stay (a scan is evidence of who came in where), as do flags and case subjects naming it.
    holder_erased_at = models.DateTimeField(null=True, blank=True)
    # A reserved seat (block, row, seat) or an unreserved area.
    block = models.ForeignKey(
        Block, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    row = models.CharField(max_length=10, blank=True)
    seat = models.CharField(max_length=10, blank=True)
    area = models.CharField(max_length=100, blank=True)
    end = models.CharField(max_length=4, choices=End.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.VALID)
    imported_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    cancelled_reason = models.CharField(max_length=200, blank=True)
    # Set by an admitting scan only, with a conditional UPDATE (one admission per ticket; ADR 0005).
    inside = models.BooleanField(default=False, db_default=False)  # raw imports leave it out
    entered_at = models.DateTimeField(null=True, blank=True)
    # Not indexed, so an admission is a heap-only (HOT) update on PostgreSQL.
    entered_gate = models.ForeignKey(
        Gate, null=True, blank=True, on_delete=models.PROTECT, related_name="+", db_index=False
    )

    class Meta:
        ordering = ["fixture", "barcode"]
        constraints = [
            models.UniqueConstraint(fields=["fixture", "barcode"], name="ticket_unique_barcode"),
            models.CheckConstraint(
                condition=models.Q(block__isnull=False) | ~models.Q(area=""),
                name="ticket_seat_or_area",
            ),
        ]
        indexes = [
            models.Index(fields=["fixture", "holder_dob"]),
            # A barcode not of this match: another match's ticket (wrong_match) or unknown.
            models.Index(fields=["barcode"], name="ticket_barcode"),
        ]

    def __str__(self) -> str:
        return f"{self.barcode} ({self.place})"

    @property
    def place(self) -> str:
        if self.block_id is None:
            return self.area
        code = self.block.code if self.block else str(self.block_id)
        return f"{code} row {self.row} seat {self.seat}"


class Scan(AppendOnlyModel):
    """One scan at a turnstile, admitted or refused: stored with its reason, device, turnstile,
    the time it happened and the time the server stored it. Written by entry.scans only."""

    class Direction(models.TextChoices):
        IN = "in", _("Entry")
        OUT = "out", _("Exit")

    class Decision(models.TextChoices):
        ADMIT = "admit", _("Admit")
        DENY = "deny", _("Deny")

    class Reason(models.TextChoices):
        # The codes a scan may store, in the reason table's order; their words are the table's
        # (entry/rules.py), never written here. tests/entry/test_reasons.py checks both.
        WRONG_MATCH = "wrong_match", rules.label("wrong_match")
        FORGED = "forged", rules.label("forged")
        UNKNOWN_TICKET = "unknown_ticket", rules.label("unknown_ticket")
        BANNED = "banned", rules.label("banned")
        CANCELLED = "cancelled", rules.label("cancelled")
        FLAGGED = "flagged", rules.label("flagged")
        WRONG_END = "wrong_end", rules.label("wrong_end")
        ALREADY_INSIDE = "already_inside", rules.label("already_inside")

    # No index of its own for device or fixture: (device, nonce) and (fixture, decision) lead with
    # them; none for turnstile or gate, which nothing looks scans up by (the counts are the
    # tickets'). Every index is one more write for each of thousands of scans a minute.
    device = models.ForeignKey(Device, on_delete=models.PROTECT, related_name="+", db_index=False)
    nonce = models.UUIDField()
    # The ticket of this match the barcode belongs to; null for wrong_match and unknown_ticket.
    ticket = models.ForeignKey(
        Ticket, null=True, blank=True, on_delete=models.PROTECT, related_name="scans"
    )
    barcode = models.CharField(max_length=64)
    # The match the scan was for (null: no match at the ground around that time).
    fixture = models.ForeignKey(
        Fixture,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="scans",
        db_index=False,
    )
    turnstile = models.ForeignKey(
        Turnstile, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    gate = models.ForeignKey(Gate, on_delete=models.PROTECT, related_name="+", db_index=False)
    direction = models.CharField(max_length=3, choices=Direction.choices)
    decision = models.CharField(max_length=5, choices=Decision.choices)
    reason = models.CharField(max_length=20, choices=Reason.choices, blank=True)
    scanned_at = models.DateTimeField()
    stored_at = models.DateTimeField()
    # Decided by a scanner from its offline bundle and uploaded later: the decision and reason
    # are the scanner's, as the steward saw them (docs/adr/0006-offline-scanners.md).
    offline = models.BooleanField(default=False, db_default=False)  # the online statement omits it

    class Meta:
        ordering = ["stored_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["device", "nonce"], name="scan_unique_nonce"),
            models.CheckConstraint(
                condition=models.Q(decision="admit", reason="")
                | (models.Q(decision="deny") & ~models.Q(reason="")),
                name="scan_deny_has_reason",
            ),
        ]
        indexes = [models.Index(fields=["fixture", "decision"], name="scan_fixture_decision")]

    def __str__(self) -> str:
        return f"{self.barcode} {self.direction} {self.decision} {self.reason}".strip()


class EntryConflict(AppendOnlyModel):
    """A ticket admitted twice: two scanners, at least one offline, each let it in. The admission
    scanned first stands (the ticket's entered_at and gate are its); the later one is the
    conflict the control room must look at. Append-only: written by entry.scans only."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="entry_conflicts")
    ticket = models.ForeignKey(Ticket, on_delete=models.PROTECT, related_name="conflicts")
    first_scan = models.ForeignKey(Scan, on_delete=models.PROTECT, related_name="+")
    second_scan = models.ForeignKey(Scan, on_delete=models.PROTECT, related_name="+")
    raised_at = models.DateTimeField()

    class Meta:
        ordering = ["raised_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["second_scan", "first_scan"], name="conflict_once"),
            models.CheckConstraint(
                condition=~models.Q(first_scan=models.F("second_scan")), name="conflict_two_scans"
            ),
        ]

    def __str__(self) -> str:
        return f"ticket {self.ticket_id}: scan {self.first_scan_id}, then {self.second_scan_id}"


class TicketFlag(models.Model):
    """A ticket whose holder looks like someone with a ban in force: the ban officer decides.
    Raised by entry.flagging; its table keeps the name it was created with in the register.

    Confirmed: the ticket is cancelled and the gates deny the holder (the entry decision reads
    confirmed flags). Cleared: not the same person; recorded, and not flagged again.
    """

    class Status(models.TextChoices):
        OPEN = "open", _("Awaiting review")
        CONFIRMED = "confirmed", _("Confirmed: deny entry")
        CLEARED = "cleared", _("Cleared: not the banned person")

    ticket = models.ForeignKey(Ticket, on_delete=models.PROTECT, related_name="flags")
    # A ban on this club's register, or one another club published to the league's exchange
    # (safeground.exchange): exactly one of the two.
    ban = models.ForeignKey(
        Ban, null=True, blank=True, on_delete=models.PROTECT, related_name="flags"
    )
    league_ban = models.ForeignKey(
        LeagueBan, null=True, blank=True, on_delete=models.PROTECT, related_name="flags"
    )
    score = models.FloatField()
    reasons = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    flagged_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)

    class Meta:
        db_table = "bans_ticketflag"
        ordering = ["-score", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["ticket", "ban"], name="ticketflag_unique"),
            models.UniqueConstraint(
                fields=["ticket", "league_ban"], name="ticketflag_unique_league"
            ),
            models.CheckConstraint(
                condition=models.Q(ban__isnull=False, league_ban__isnull=True)
                | models.Q(ban__isnull=True, league_ban__isnull=False),
                name="ticketflag_one_ban",
            ),
        ]
        indexes = [models.Index(fields=["status"], name="bans_ticket_status_9208ac_idx")]

    def __str__(self) -> str:
        return f"Flag #{self.pk}: ticket {self.ticket_id} ~ ban {self.ban_id} ({self.status})"


class ScanCount(models.Model):
    """How many scans of a match went each way at each gate: per direction, decision and reason.
    Kept by the database as scans are stored, in the same statement (entry/counts.py, its
    triggers): never written by Python. The season dashboard reads these, not the scans."""

    # No index of their own: the unique key leads with the match.
    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="+", db_index=False)
    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="+", db_index=False)
    direction = models.CharField(max_length=3, choices=Scan.Direction.choices)
    decision = models.CharField(max_length=5, choices=Scan.Decision.choices)
    reason = models.CharField(max_length=20, choices=Scan.Reason.choices, blank=True)
    scans = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["fixture", "gate", "direction", "decision", "reason"],
                name="scancount_one_row",
            )
        ]

    def __str__(self) -> str:
        return f"match {self.fixture_id} gate {self.gate_id}: {self.scans} {self.decision}"


class PreventedCount(models.Model):
    """How many tickets of a match were prevented from attending (entry.selectors' definition:
    denied as banned, flagged or cancelled and never admitted), kept by the database as scans
    are stored and tickets admitted (entry/counts.py). Never written by Python."""

    fixture = models.OneToOneField(
        Fixture, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    tickets = models.BigIntegerField()

    def __str__(self) -> str:
        return f"match {self.fixture_id}: {self.tickets} prevented"


class GateWarned(models.Model):
    """A gate warning (gate_pressure's: per gate and cause) and whether it stands. Kept in the
    database, not in a process, so that its onset is told once (entry.hooks.gate_warned) however
    many server processes assess the gates in turn: the row goes from not standing (or no row) to
    standing by one conditional write, and only the writer that made it tells (ADR 0025)."""

    fixture = models.ForeignKey(Fixture, on_delete=models.CASCADE, related_name="+")
    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="+")
    # The kind and what tells one warning of a gate from another: "jump:forged,unknown_ticket",
    # "capacity", "silent:F03".
    cause = models.CharField(max_length=200)
    standing = models.BooleanField(default=True)
    since = models.DateTimeField()  # when it last started
    warning = models.JSONField()  # as assessed when it started: kind, gate, figures, ...

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["fixture", "gate", "cause"], name="gatewarned_one_row")
        ]

    def __str__(self) -> str:
        return f"match {self.fixture_id} gate {self.gate_id}: {self.cause}"
