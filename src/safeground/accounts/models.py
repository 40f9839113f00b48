"""Organisations, their members' roles, and devices (turnstiles, scanners) with API keys."""

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _


class Organisation(models.Model):
    class Kind(models.TextChoices):
        CLUB = "club", _("Club")
        POLICE_FORCE = "police_force", _("Police force")
        NATIONAL_UNIT = "national_unit", _("National unit")

    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=80, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    SAFETY_OFFICER = "safety_officer", _("Safety officer")
    CONTROL_OPERATOR = "control_operator", _("Control-room operator / loggist")
    STEWARD_SUPERVISOR = "steward_supervisor", _("Steward supervisor")
    STEWARD = "steward", _("Steward")
    POLICE_COMMANDER = "police_commander", _("Police commander")
    POLICE_SPOTTER = "police_spotter", _("Police spotter / football officer")
    BAN_OFFICER = "ban_officer", _("Club security / ban officer")
    AUDITOR = "auditor", _("Auditor")


class User(AbstractUser):
    """A person who logs in. What they may do comes from their memberships, not from flags."""

    def __str__(self) -> str:
        return self.get_full_name() or self.username


class Membership(models.Model):
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=30, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "organisation", "role"], name="membership_unique_role"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} — {self.get_role_display()}, {self.organisation}"


class Device(models.Model):
    """A machine credential (turnstile, scanner): an API key whose profile lists what it may call.

    Only the SHA-256 of the key is stored; the key itself is shown once, when it is made.
    """

    class Profile(models.TextChoices):
        TURNSTILE = "turnstile", _("Turnstile")
        SCANNER = "scanner", _("Handheld scanner")

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="devices")
    name = models.CharField(max_length=100)
    profile = models.CharField(max_length=20, choices=Profile.choices)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Who revoked the key (null: at the command line, by the server's operator).
    revoked_by = models.ForeignKey(
        "User", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    last_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organisation", "name"], name="device_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_profile_display()})"
