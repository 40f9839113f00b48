"""Device profiles: the API routes (by route name) each kind of device may call."""

from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext
from ninja.errors import AuthorizationError
from ninja.security import APIKeyHeader

from .models import Device
from .selectors import device_by_key

# The gates: scanning, and working offline from a signed bundle (docs/adr/0006-offline-scanners.md).
GATES = frozenset({"entry_scan", "entry_bundle", "entry_offline_scans"})
PROFILES: dict[str, frozenset[str]] = {
    Device.Profile.TURNSTILE: frozenset({"device_whoami"}) | GATES,
    Device.Profile.SCANNER: frozenset({"device_whoami"}) | GATES,
}


class DeviceKey(APIKeyHeader):
    """`X-Device-Key: sgd_...` — a device may call only the routes its profile lists."""

    param_name = "X-Device-Key"
    # The profile entry these routes need; None: each route's own name.
    route: str | None = None

    def find(self, key: str) -> Any:
        """The live device holding the key, or None (a hot route may look it up from a cache)."""
        return device_by_key(key)

    def profile_label(self, device: Any) -> str:
        return str(device.get_profile_display())

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        device = self.find(key) if key else None
        if device is None:
            return None  # 401: unknown or revoked key
        route = self.route or (request.resolver_match.url_name if request.resolver_match else None)
        if route not in PROFILES.get(device.profile, frozenset()):
            message = gettext("A %(profile)s device may not call %(route)s.") % {
                "profile": self.profile_label(device),
                "route": route,
            }
            raise AuthorizationError(message=message)
        request.device = device  # type: ignore[attr-defined]
        return device
