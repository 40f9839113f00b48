from .models import Device
from .services import device_key_hash


def device_by_key(key: str) -> Device | None:
    """The live (not revoked) device holding this key, or None."""
    return (
        Device.objects.select_related("organisation")
        .filter(key_hash=device_key_hash(key), revoked_at__isnull=True)
        .first()
    )
