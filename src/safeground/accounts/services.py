"""Every write about organisations, people and devices."""

import hashlib
import secrets

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from safeground.hooks import Kind, Timing, ignored

from .models import Device, Membership, Organisation, Role, User


def organisation_create(*, name: str, kind: str, slug: str = "") -> Organisation:
    return Organisation.objects.create(name=name, kind=kind, slug=slug or slugify(name))


@transaction.atomic
def user_create(
    *,
    username: str,
    password: str,
    organisation: Organisation,
    role: str,
    first_name: str = "",
    last_name: str = "",
    email: str = "",
) -> User:
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}; one of: {', '.join(Role.values)}")
    user = User.objects.create_user(
        username=username,
        password=password,
        first_name=first_name,
        last_name=last_name,
        email=email,
    )
    Membership.objects.create(user=user, organisation=organisation, role=role)
    return user


def device_key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def device_create(*, organisation: Organisation, name: str, profile: str) -> tuple[Device, str]:
    """Make a device credential. The key is returned once and never stored in clear."""
    key = f"sgd_{secrets.token_urlsafe(32)}"
    device = Device.objects.create(
        organisation=organisation, name=name, profile=profile, key_hash=device_key_hash(key)
    )
    return device, key


# Called with a revoked key's hash once the revocation is committed: entry registers its cache
# of device keys (EntryConfig.ready), so this process refuses the key at once; other processes
# refuse it when their cache entry expires (SAFEGROUND_ENTRY_CACHE_SECONDS).
device_revoked: Kind[[str], None, None] = Kind(
    "accounts.device_revoked", Timing.AFTER_COMMIT, ignored
)


@transaction.atomic
def device_revoke(*, device: Device, by: User | None = None) -> Device:
    """Revoke a key for good, recording when and by whom (None: the command line)."""
    Device.objects.filter(pk=device.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now(), revoked_by=by
    )
    device.refresh_from_db()
    device_revoked(device.key_hash)
    return device
