import pytest
from django.test import Client

from safeground.accounts import devices
from safeground.accounts.models import Device
from safeground.accounts.services import device_create, device_revoke
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def turnstile(db) -> tuple[Device, str]:
    club = factories.organisation(name="Riverside Athletic")
    return device_create(organisation=club, name="Gate F turnstile 3", profile="turnstile")


def whoami(key: str | None):
    headers = {"X-Device-Key": key} if key else {}
    return Client().get("/api/devices/me", headers=headers)


def test_a_device_key_identifies_its_device(turnstile) -> None:
    _device, key = turnstile
    response = whoami(key)
    assert response.status_code == 200
    assert response.json() == {
        "name": "Gate F turnstile 3",
        "organisation": "Riverside Athletic",
        "profile": "turnstile",
    }


def test_only_the_hash_of_the_key_is_stored(turnstile) -> None:
    device, key = turnstile
    assert key.startswith("sgd_")
    assert key not in device.key_hash
    assert len(device.key_hash) == 64


def test_a_revoked_or_unknown_key_is_refused(turnstile) -> None:
    device, key = turnstile
    assert whoami("sgd_not-a-real-key").status_code == 401
    assert whoami(None).status_code == 401
    device_revoke(device=device)
    assert device.revoked_at is not None
    assert whoami(key).status_code == 401


def test_a_device_may_call_only_the_routes_of_its_profile(turnstile, monkeypatch) -> None:
    _device, key = turnstile
    monkeypatch.setitem(devices.PROFILES, "turnstile", frozenset({"entry_scan"}))
    response = whoami(key)
    assert response.status_code == 403
    assert "may not call device_whoami" in response.json()["detail"]


def test_a_device_key_does_not_open_user_routes(turnstile) -> None:
    _, key = turnstile
    assert Client().get("/api/fixtures", headers={"X-Device-Key": key}).status_code == 401
