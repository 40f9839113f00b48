"""Tickets for a match, as the ticketing system exported them (see entry/ticket_file.py)."""

from django.db import models

from safeground.matches.models import Fixture
from safeground.venues.models import Block


class Ticket(models.Model):
    class End(models.TextChoices):
        HOME = "home", "Home"
        AWAY = "away", "Away"

    class Status(models.TextChoices):
        VALID = "valid", "Valid"
        CANCELLED = "cancelled", "Cancelled"

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="tickets")
    barcode = models.CharField(max_length=64)
    holder_name = models.CharField(max_length=200)
    holder_dob = models.DateField()
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

    class Meta:
        ordering = ["fixture", "barcode"]
        constraints = [
            models.UniqueConstraint(fields=["fixture", "barcode"], name="ticket_unique_barcode"),
            models.CheckConstraint(
                condition=models.Q(block__isnull=False) | ~models.Q(area=""),
                name="ticket_seat_or_area",
            ),
        ]
        indexes = [models.Index(fields=["fixture", "holder_dob"])]

    def __str__(self) -> str:
        return f"{self.barcode} ({self.place})"

    @property
    def place(self) -> str:
        if self.block_id is None:
            return self.area
        code = self.block.code if self.block else str(self.block_id)
        return f"{code} row {self.row} seat {self.seat}"
