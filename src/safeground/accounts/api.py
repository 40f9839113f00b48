from django.http import HttpRequest
from ninja import Router, Schema

from .devices import DeviceKey

router = Router(tags=["devices"])


class DeviceOut(Schema):
    name: str
    organisation: str
    profile: str


@router.get("/devices/me", response=DeviceOut, auth=DeviceKey(), url_name="device_whoami")
def device_whoami(request: HttpRequest) -> DeviceOut:
    """The calling device, as its key identifies it (a turnstile's first check after set-up)."""
    device = request.auth  # type: ignore[attr-defined]
    return DeviceOut(
        name=device.name, organisation=device.organisation.name, profile=device.profile
    )
