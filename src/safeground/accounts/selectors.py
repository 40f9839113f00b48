from typing import Any

from django.http import Http404
from django.utils.translation import gettext as _

from .models import Device
from .permissions import can_manage_devices, device_organisation_ids, require
from .services import device_key_hash


def device_by_key(key: str) -> Device | None:
    """The live (not revoked) device holding this key, or None."""
    return (
        Device.objects.select_related("organisation")
        .filter(key_hash=device_key_hash(key), revoked_at__isnull=True)
        .first()
    )


def devices_for(user: Any) -> list[Device]:
    """The devices of the organisations whose devices the user keeps: live ones first."""
    return list(
        Device.objects.filter(organisation_id__in=device_organisation_ids(user))
        .select_related("organisation", "revoked_by")
        .order_by("organisation__name", "-revoked_at", "name")
    )


def device_for(user: Any, device_id: int) -> Device:
    """One device, for someone who may revoke it (403 otherwise)."""
    device = Device.objects.select_related("organisation").filter(pk=device_id).first()
    if device is None:
        raise Http404(_("No such device."))
    require(can_manage_devices(user, device.organisation_id))
    return device
