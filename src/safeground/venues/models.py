"""A ground as the control room sees it: stands, tiers, blocks, gates, concourses, zones.

Shapes are SVG polygon points in the ground's plan coordinates, so the plan is drawn from the
model and incidents can be placed on it.
"""

import re

from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.accounts.models import Organisation
from safeground.languages import in_language


def natural_key(code: str) -> tuple[str | int, ...]:
    """The one order of blocks, exits and anything else numbered by name: Lower 1, Lower 2 ...
    Lower 10 (the digits compared as numbers), not Lower 1, Lower 10, Lower 2. The database
    orders codes as text, so every list of them is sorted with this key in Python."""
    parts = re.split(r"(\d+)", code)
    return tuple(int(part) if n % 2 else part.casefold() for n, part in enumerate(parts))


class Named(models.Model):
    """A place named in the venue file, with its name in other languages beside the English
    (`names: {cy: "..."}`); pages show `local_name`, the reader's language."""

    names = models.JSONField(default=dict, blank=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.local_name

    @property
    def local_name(self) -> str:
        return in_language(self.name, self.names)  # type: ignore[attr-defined]


class Ground(models.Model):
    organisation = models.ForeignKey(Organisation, on_delete=models.PROTECT, related_name="grounds")
    code = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=200)
    # Shown on every plan of a ground whose drawing is not surveyed (the demo's).
    layout_note = models.CharField(max_length=200, blank=True)
    plan_width = models.PositiveIntegerField(default=1000)
    plan_height = models.PositiveIntegerField(default=1000)
    pitch_shape = models.TextField(blank=True)
    # The Green Guide's rates of passage (people per metre of exit width per minute), the normal
    # egress time and the emergency evacuation time from the fire risk assessment (2.5 to 8).
    level_rate = models.PositiveIntegerField(default=82)
    stair_rate = models.PositiveIntegerField(default=66)
    egress_minutes = models.FloatField(default=8.0)
    evacuation_minutes = models.FloatField(default=8.0)
    # The format of the tickets the ground's issuing system prints (venues/ticket_format.py): a
    # barcode that fits it but was never issued is refused as forged.
    ticket_prefix = models.CharField(max_length=20, blank=True)
    ticket_length = models.PositiveSmallIntegerField(default=0)  # 0: any length
    ticket_check = models.CharField(
        max_length=10,
        choices=[
            ("none", _("No check")),
            ("luhn", _("Luhn mod-10 check digit")),
            ("hmac", _("HMAC signature")),
        ],
        default="none",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Stand(Named):
    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="stands")
    code = models.CharField(max_length=20)
    name = models.CharField(max_length=100)
    # The Green Guide's (P) factor (physical condition) and (S) factor (safety management), 0-1.
    p_factor = models.FloatField(default=1.0)
    s_factor = models.FloatField(default=1.0)

    class Meta:
        ordering = ["ground", "code"]
        constraints = [models.UniqueConstraint(fields=["ground", "code"], name="stand_unique_code")]


class Tier(Named):
    stand = models.ForeignKey(Stand, on_delete=models.CASCADE, related_name="tiers")
    code = models.CharField(max_length=20)
    name = models.CharField(max_length=100)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["stand", "code"], name="tier_unique_code")]

    def __str__(self) -> str:
        return f"{self.stand.local_name}, {self.local_name}"


class Block(Named):
    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="blocks")
    tier = models.ForeignKey(Tier, on_delete=models.CASCADE, related_name="blocks")
    code = models.CharField(max_length=20)
    name = models.CharField(max_length=100)
    capacity = models.PositiveIntegerField()
    # Row labels front to back, e.g. ["A", "B", ...]; seats numbered first_seat.. in each row.
    rows = models.JSONField(default=list)
    seats_per_row = models.PositiveIntegerField(default=0)
    first_seat = models.PositiveIntegerField(default=1)
    shape = models.TextField(help_text="SVG polygon points in plan coordinates")

    class Meta:
        ordering = ["ground", "code"]
        constraints = [models.UniqueConstraint(fields=["ground", "code"], name="block_unique_code")]

    def __str__(self) -> str:
        return self.local_name or self.code


class BlockAdjacency(models.Model):
    """Two blocks that touch (stored once, lower id first): where trouble spreads."""

    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="adjacencies")
    block = models.ForeignKey(Block, on_delete=models.CASCADE, related_name="+")
    neighbour = models.ForeignKey(Block, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["block", "neighbour"], name="adjacency_unique"),
            models.CheckConstraint(
                condition=models.Q(block__lt=models.F("neighbour")), name="adjacency_ordered"
            ),
        ]


class Gate(Named):
    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="gates")
    code = models.CharField(max_length=20)
    name = models.CharField(max_length=100)
    blocks = models.ManyToManyField(Block, related_name="gates", blank=True)
    position = models.CharField(max_length=40, blank=True, help_text="x,y on the plan")

    class Meta:
        ordering = ["ground", "code"]
        constraints = [models.UniqueConstraint(fields=["ground", "code"], name="gate_unique_code")]


class Turnstile(models.Model):
    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="turnstiles")
    code = models.CharField(max_length=20)

    class Meta:
        ordering = ["gate", "code"]
        constraints = [
            models.UniqueConstraint(fields=["gate", "code"], name="turnstile_unique_code")
        ]

    def __str__(self) -> str:
        return f"{self.gate.local_name} / {self.code}"


class Concourse(Named):
    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="concourses")
    code = models.CharField(max_length=20)
    name = models.CharField(max_length=100)
    blocks = models.ManyToManyField(Block, related_name="concourses", blank=True)

    class Meta:
        ordering = ["ground", "code"]
        constraints = [
            models.UniqueConstraint(fields=["ground", "code"], name="concourse_unique_code")
        ]


class Zone(Named):
    """A named set of blocks (or rows of blocks) that a fixture can use as home, away or buffer."""

    class Kind(models.TextChoices):
        HOME = "home", _("Home supporters")
        AWAY = "away", _("Away supporters")
        BUFFER = "buffer", _("Segregation buffer")
        OTHER = "other", _("Other")

    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="zones")
    code = models.CharField(max_length=40)
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # Part of the ground's usual layout (drawn on the ground page); a fixture picks its own.
    is_default = models.BooleanField(default=False)

    class Meta:
        ordering = ["ground", "code"]
        constraints = [models.UniqueConstraint(fields=["ground", "code"], name="zone_unique_code")]


class ZoneBlock(models.Model):
    """A block in a zone; with a row range, only those rows (e.g. a buffer of the front rows)."""

    zone = models.ForeignKey(Zone, on_delete=models.CASCADE, related_name="members")
    block = models.ForeignKey(Block, on_delete=models.CASCADE, related_name="zone_members")
    first_row = models.CharField(max_length=10, blank=True)
    last_row = models.CharField(max_length=10, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["zone", "block", "first_row"], name="zoneblock_unique")
        ]


class Layout(models.Model):
    """A named way of using the ground's zones for a match ("League", "Cup / large away end"): which
    zone holds home fans, which away fans, which is the segregation buffer. A fixture picks one."""

    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="layouts")
    code = models.CharField(max_length=40)
    name = models.CharField(max_length=100)

    class Meta:
        ordering = ["ground", "code"]
        constraints = [
            models.UniqueConstraint(fields=["ground", "code"], name="layout_unique_code")
        ]

    def __str__(self) -> str:
        return self.name


class LayoutZone(models.Model):
    class Use(models.TextChoices):
        HOME = "home", _("Home supporters")
        AWAY = "away", _("Away supporters")
        BUFFER = "buffer", _("Segregation buffer")

    layout = models.ForeignKey(Layout, on_delete=models.CASCADE, related_name="zones")
    zone = models.ForeignKey(Zone, on_delete=models.CASCADE, related_name="+")
    use = models.CharField(max_length=10, choices=Use.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["layout", "zone"], name="layoutzone_unique")]


class Exit(models.Model):
    """An exit route from blocks (a vomitory, a stairway, a gate onto the pitch) and its width."""

    class Kind(models.TextChoices):
        LEVEL = "level", _("Level or ramped")
        STAIRS = "stairs", _("Stairway")

    ground = models.ForeignKey(Ground, on_delete=models.CASCADE, related_name="exits")
    code = models.CharField(max_length=20)
    name = models.CharField(max_length=100)
    width = models.FloatField(help_text="clear width in metres")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # Used only to evacuate (e.g. onto the pitch): counts for evacuation, not for normal egress.
    emergency_only = models.BooleanField(default=False)
    blocks = models.ManyToManyField(Block, related_name="exits")

    class Meta:
        ordering = ["ground", "code"]
        constraints = [models.UniqueConstraint(fields=["ground", "code"], name="exit_unique_code")]

    def __str__(self) -> str:
        return self.name


# A post, a check or anything else placed at one spot of the ground: exactly one of a zone, a
# gate or a concourse (the condition of a CheckConstraint on its zone, gate and concourse fields).
ONE_PLACE = (
    models.Q(zone__isnull=False, gate__isnull=True, concourse__isnull=True)
    | models.Q(zone__isnull=True, gate__isnull=False, concourse__isnull=True)
    | models.Q(zone__isnull=True, gate__isnull=True, concourse__isnull=False)
)
