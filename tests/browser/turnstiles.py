"""Turnstiles for the browser tests: scans through the real turnstile API (`/api/entry/scan`),
with a device key of the home club's own, as the gates send them while a page watches."""

import json
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from safeground.accounts.models import Organisation
from safeground.accounts.services import device_create
from safeground.entry.runtime import lookups

Scan = Callable[..., dict[str, Any]]


def turnstile_scanner(site: str, name: str) -> Scan:
    """`scan(barcode, turnstile, direction="in")`: the server's answer (decision, reason...)."""
    _, key = device_create(
        organisation=Organisation.objects.get(name="West Ham United"),
        name=name,
        profile="turnstile",
    )
    lookups.caches_clear()  # the server runs in this process: it sees the new key at once

    def scan(barcode: str, turnstile: str, direction: str = "in") -> dict[str, Any]:
        body = {
            "barcode": barcode,
            "turnstile": turnstile,
            "scanned_at": timezone.now().isoformat(),
            "nonce": str(uuid.uuid4()),
            "direction": direction,
        }
        request = urllib.request.Request(
            f"{site}/api/entry/scan",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-Device-Key": key},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    return scan
