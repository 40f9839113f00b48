"""A revoked device key is refused on every device route of the serving process (uvicorn, the
lean scan route and the ninja routes) within SAFEGROUND_ENTRY_CACHE_SECONDS, even while the
process holds the key in its cache (entry/runtime/lookups.py); `device_whoami`, which reads
the database each time, refuses it at once."""

import http.client
import json
import time
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from safeground.accounts.services import device_key_hash
from safeground.entry.runtime import lookups
from safeground.matches.models import Fixture

LIFETIME = 2.0  # SAFEGROUND_ENTRY_CACHE_SECONDS for this test (default 5): the bound scales


def call(server: str, method: str, path: str, key: str, body: dict | None = None) -> int:
    host, port = server.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    headers = {"X-Device-Key": key, "Content-Type": "application/json"}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status


@pytest.mark.django_db(transaction=True)
def test_a_revoked_key_is_refused_on_every_device_route_within_the_cache_time(
    gates, asgi_server, settings
) -> None:
    settings.SAFEGROUND_ENTRY_CACHE_SECONDS = LIFETIME
    # The cup tie kicks off within the hour: a bundle is for the match now or next.
    Fixture.objects.filter(pk=gates.fixture.pk).update(kickoff=timezone.now() + timedelta(hours=1))
    lookups.caches_clear()

    def scan() -> dict:
        return {"barcode": "AWAY-2", "turnstile": "F03", "nonce": str(uuid.uuid4()),
                "scanned_at": timezone.now().isoformat()}  # fmt: skip

    routes = {
        "scan": lambda: call(asgi_server, "POST", "/api/entry/scan", gates.key, scan()),
        "bundle": lambda: call(asgi_server, "GET", "/api/entry/bundle?turnstile=F03", gates.key),
        "bundle key": lambda: call(asgi_server, "GET", "/api/entry/bundle-key", gates.key),
        "offline": lambda: call(
            asgi_server,
            "POST",
            "/api/entry/offline-scans",
            gates.key,
            {"scans": [scan() | {"decision": "admit", "reason": None}]},
        ),
        "whoami": lambda: call(asgi_server, "GET", "/api/devices/me", gates.key),
    }

    # Every route works, and the process now holds the key in its cache. A 503 is "send it
    # again" (the lean route's first database connection may miss its deadline on a loaded
    # machine, as it did once in CI): sent again, as a scanner does, before it counts.
    def answered(route):  # type: ignore[no-untyped-def]
        for _ in range(3):
            status = route()
            if status != 503:
                return status
            time.sleep(0.5)
        return status

    assert {name: answered(route) for name, route in routes.items()} == dict.fromkeys(routes, 200)
    assert device_key_hash(gates.key) in lookups._devices._data  # expired or not: still held

    call_command("revokedevice", str(gates.device_id))
    revoked = time.monotonic()
    assert routes["whoami"]() == 401  # no cache on this one

    refused_after: dict[str, float] = {}
    while len(refused_after) < len(routes) and time.monotonic() - revoked < LIFETIME + 3:
        for name, route in routes.items():
            if name not in refused_after and route() == 401:
                refused_after[name] = time.monotonic() - revoked
        time.sleep(0.05)
    assert set(refused_after) == set(routes), f"still accepted: {set(routes) - set(refused_after)}"
    # Within the cache's time and one reload (a slow shared machine: a second more).
    assert max(refused_after.values()) <= LIFETIME + 1.0, refused_after
    # And it stays refused (a 503 sent again, as above: "later" is not an acceptance).
    assert {name: answered(route) for name, route in routes.items()} == dict.fromkeys(routes, 401)


@pytest.mark.django_db(transaction=True)
def test_the_command_names_a_missing_device(db) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no device with id 999999"):
        call_command("revokedevice", "999999")
