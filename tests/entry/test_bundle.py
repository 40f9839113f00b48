"""Offline bundles: signed, no personal data, every ticket state, the match now or next, expiry,
and only for a live device key (docs/adr/0006-offline-scanners.md)."""

import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.utils import timezone

from safeground.accounts.models import Device
from safeground.accounts.services import device_revoke
from safeground.entry import bundle
from safeground.entry.runtime import lookups
from safeground.matches.models import Fixture
from safeground.venues.models import Gate

pytestmark = pytest.mark.django_db


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def get(gates, path: str = "/api/entry/bundle?turnstile=F03", key: str | None = None):
    return Client().get(path, headers={"X-Device-Key": key or gates.key})


def kickoff_in(gates, delta: timedelta) -> datetime:
    """Move the cup tie so that its kick-off is `delta` from now (bundles are for now)."""
    kickoff = timezone.now() + delta
    Fixture.objects.filter(pk=gates.fixture.pk).update(kickoff=kickoff)
    lookups.caches_clear()
    return kickoff


def payload_of(response) -> dict:
    assert response.status_code == 200, response.content
    return json.loads(unb64(response.json()["payload"]))


def ticket_hash(payload: dict, barcode: str) -> str:
    """The hash as the bundle defines it (and the scanner page computes it)."""
    mac = hmac.digest(unb64(payload["hash"]["key"]), barcode.encode(), "sha256")
    return base64.urlsafe_b64encode(mac[: payload["hash"]["bytes"]]).rstrip(b"=").decode()


def states(payload: dict, *barcodes: str) -> dict[str, str | None]:
    by_hash = {row[0]: row[2] for row in payload["tickets"]}
    return {barcode: by_hash.get(ticket_hash(payload, barcode)) for barcode in barcodes}


def test_the_signature_verifies_with_the_public_key_and_the_payload_has_no_personal_data(
    gates,
) -> None:
    kickoff = kickoff_in(gates, timedelta(hours=1))
    answer = get(gates).json()
    key = get(gates, "/api/entry/bundle-key").json()
    public = Ed25519PublicKey.from_public_bytes(unb64(key["public_key"]))
    data = unb64(answer["payload"])
    public.verify(unb64(answer["signature"]), data)  # raises if it does not verify
    assert (
        answer["key_id"]
        == key["key_id"]
        == hashlib.sha256(unb64(key["public_key"])).hexdigest()[:16]
    )
    with pytest.raises(InvalidSignature):
        public.verify(unb64(answer["signature"]), data.replace(b'"valid"', b'"inside"', 1))

    payload = json.loads(data)
    assert data == json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    assert payload["version"] == 1
    assert payload["fixture"] == {
        "id": gates.fixture.pk,
        "title": "West Ham United v Chelsea",
        "kickoff": kickoff.isoformat(),
    }
    gate = Gate.objects.get(ground=gates.fixture.ground, code="F")
    assert payload["turnstile"] == {"code": "F03", "gate": "Gate F (away)", "gate_id": gate.pk}
    assert payload["ends"] == {"home": False, "away": True}
    assert payload["reentry"] is False
    assert payload["hash"]["alg"] == "HMAC-SHA256" and payload["hash"]["bytes"] == 12
    assert len(unb64(payload["hash"]["key"])) == 32
    assert "Gate F (away)" in payload["gates_for_block"]["S-L2"]
    # The six tickets of this match (not the league match's), each [hash, end, state, seat...].
    assert len(payload["tickets"]) == 6
    assert {row[1] for row in payload["tickets"]} == {"h", "a"}
    assert all(len(unb64(row[0])) == 12 for row in payload["tickets"])
    assert sorted(row[3:] for row in payload["tickets"])[0] == ["N-L1", "C", "12"]
    for secret in ("Holder", "AWAY-1", "BANNED-1", "1990-01-01"):
        assert secret.encode() not in data
    # Re-entry is the match's own rule (a new bundle is read after the cache time).
    Fixture.objects.filter(pk=gates.fixture.pk).update(reentry=True)
    lookups.caches_clear()
    assert payload_of(get(gates))["reentry"] is True


def test_every_ticket_state_and_a_fresh_hash_key_per_bundle(gates) -> None:
    kickoff_in(gates, timedelta(hours=1))
    assert gates.scan("AWAY-2", at=timezone.now()).json()["decision"] == "admit"
    payload = payload_of(get(gates))
    assert states(payload, "AWAY-1", "AWAY-2", "CANCELLED-1", "BANNED-1", "FLAGGED-1") == {
        "AWAY-1": "valid",
        "AWAY-2": "inside",
        "CANCELLED-1": "cancelled",
        "BANNED-1": "banned",  # confirmed flag (and cancelled): the deny list
        "FLAGGED-1": "flagged",
    }
    assert states(payload, "LEAGUE-1", "NOT-A-TICKET") == {"LEAGUE-1": None, "NOT-A-TICKET": None}
    again = payload_of(get(gates))
    assert again["hash"]["key"] != payload["hash"]["key"]
    assert {row[0] for row in again["tickets"]}.isdisjoint(row[0] for row in payload["tickets"])


def test_a_ban_not_in_force_on_the_match_day_is_not_on_the_deny_list(gates) -> None:
    from safeground.bans.models import Ban

    kickoff = kickoff_in(gates, timedelta(hours=1))
    Ban.objects.filter(flags__ticket__barcode="BANNED-1").update(
        is_life=False, ends_on=kickoff.date() - timedelta(days=1)
    )
    assert states(payload_of(get(gates)), "BANNED-1") == {"BANNED-1": "cancelled"}


def test_it_expires_when_entry_closes_or_after_the_bundle_hours(gates, settings) -> None:
    kickoff = kickoff_in(gates, timedelta(hours=1))
    payload = payload_of(get(gates))
    issued = datetime.fromisoformat(payload["issued_at"])
    assert abs(issued - timezone.now()) < timedelta(seconds=30)
    assert datetime.fromisoformat(payload["expires_at"]) == kickoff + timedelta(hours=3)
    settings.SAFEGROUND_BUNDLE_HOURS = 1.5
    payload = payload_of(get(gates))
    assert datetime.fromisoformat(payload["expires_at"]) == datetime.fromisoformat(
        payload["issued_at"]
    ) + timedelta(hours=1.5)


def test_the_next_match_when_its_entry_opens_within_the_opening_hours(gates) -> None:
    kickoff_in(gates, timedelta(hours=11))  # entry opens in 5 hours
    assert payload_of(get(gates))["fixture"]["id"] == gates.fixture.pk
    kickoff_in(gates, timedelta(hours=13))  # entry opens in 7 hours: too early for a bundle
    response = get(gates)
    assert response.status_code == 404
    assert (
        "no match at this ground now or with entry opening in the next 6 hours"
        in (response.json()["detail"])
    )


def test_no_match_is_a_404_naming_why(gates) -> None:
    response = get(gates)  # the demo's matches were in 2016
    assert response.status_code == 404 and "no match" in response.json()["detail"]


@pytest.mark.parametrize(
    ("path", "status", "detail"),
    [
        ("/api/entry/bundle", 422, "turnstile: is required"),  # the schema says it is
        ("/api/entry/bundle?turnstile=Z99", 404, "no turnstile 'Z99'"),  # well formed; not there
    ],
)
def test_a_missing_or_unknown_turnstile_is_refused_naming_it(gates, path, status, detail) -> None:
    kickoff_in(gates, timedelta(hours=1))
    response = get(gates, path)
    assert response.status_code == status
    assert response.json()["field"] == "turnstile" and detail in response.json()["detail"]


def test_a_revoked_device_gets_401_on_the_bundle_and_its_key(gates) -> None:
    kickoff_in(gates, timedelta(hours=1))
    assert get(gates).status_code == 200
    device_revoke(device=Device.objects.get(pk=gates.device_id))
    lookups.caches_clear()  # i.e. SAFEGROUND_ENTRY_CACHE_SECONDS later
    assert get(gates).status_code == 401
    assert get(gates, "/api/entry/bundle-key").status_code == 401
    assert get(gates, key="sgd_unknown").status_code == 401


def test_a_profile_without_entry_bundle_is_forbidden_both(gates, monkeypatch) -> None:
    from safeground.accounts import devices

    kickoff_in(gates, timedelta(hours=1))
    monkeypatch.setitem(devices.PROFILES, "turnstile", frozenset({"entry_scan"}))
    for path in ("/api/entry/bundle?turnstile=F03", "/api/entry/bundle-key"):
        response = get(gates, path)
        assert response.status_code == 403
        assert "may not call entry_bundle" in response.json()["detail"]


def test_the_bundle_is_built_in_a_few_queries(gates, django_assert_max_num_queries) -> None:
    kickoff_in(gates, timedelta(hours=1))
    get(gates)  # warms the device, turnstile, ground and gate caches
    with django_assert_max_num_queries(4):  # the match, the flags, the tickets (+ a savepoint)
        assert get(gates).status_code == 200


def test_the_signing_key_comes_from_the_setting_or_else_from_the_secret_key(settings) -> None:
    seed = bytes(range(32))
    settings.SAFEGROUND_BUNDLE_SIGNING_KEY = base64.b64encode(seed).decode()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    expected = (
        Ed25519PrivateKey.from_private_bytes(seed)
        .public_key()
        .public_bytes(Encoding.Raw, PublicFormat.Raw)
    )
    assert bundle.public_key_raw() == expected
    settings.SAFEGROUND_BUNDLE_SIGNING_KEY = ""
    derived = bundle.public_key_raw()
    assert derived != expected and bundle.public_key_raw() == derived  # stable across calls
    settings.SECRET_KEY = "another-secret"
    assert bundle.public_key_raw() != derived
    settings.SAFEGROUND_BUNDLE_SIGNING_KEY = base64.b64encode(b"too short").decode()
    with pytest.raises(ImproperlyConfigured, match="32 random bytes"):
        bundle.signing_key()


def test_production_refuses_to_start_without_a_signing_key() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SAFEGROUND_BUNDLE_SIGNING_KEY"}
    vapid_key = base64.urlsafe_b64encode(bytes(31) + b"\x07").decode()  # production needs it too
    env |= {"DJANGO_SETTINGS_MODULE": "safeground.settings.production", "SECRET_KEY": "x" * 50,
            "ALLOWED_HOSTS": "example.org", "SAFEGROUND_VAPID_PRIVATE_KEY": vapid_key}  # fmt: skip
    code = "import django; django.setup()"
    refused = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert refused.returncode != 0
    assert "SAFEGROUND_BUNDLE_SIGNING_KEY" in refused.stderr
    env["SAFEGROUND_BUNDLE_SIGNING_KEY"] = base64.b64encode(bytes(32)).decode()
    started = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert started.returncode == 0, started.stderr
