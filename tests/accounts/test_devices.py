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


def test_the_safety_officer_revokes_a_device_from_the_page_after_confirming(
    match_day, client_for, no_second_factor, django_capture_on_commit_callbacks
) -> None:
    from safeground.entry.runtime import lookups

    home = match_day.cast.home
    device, key = factories.device(home, name="Gate F turnstile 3")
    lookups.caches_clear()
    assert lookups.device_for_key(key) is not None  # this process holds the key in its cache
    client = client_for("safety")
    page = client.get("/account/devices/")
    assert b"Gate F turnstile 3" in page.content
    confirm = client.get(f"/account/devices/{device.pk}/revoke/")
    assert b"Revoke Gate F turnstile 3?" in confirm.content
    device.refresh_from_db()
    assert device.revoked_at is None  # asking is not revoking

    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(f"/account/devices/{device.pk}/revoke/", follow=True)
    assert b"Revoked Gate F turnstile 3" in done.content
    device.refresh_from_db()
    assert device.revoked_at is not None
    assert device.revoked_by == match_day.cast["safety"]  # who revoked it, kept
    listed = client.get("/account/devices/").content.decode()
    assert f"by {match_day.cast['safety']}" in listed
    # Refused by this process at once, not after SAFEGROUND_ENTRY_CACHE_SECONDS.
    assert lookups.device_for_key(key) is None
    assert whoami(key).status_code == 401
    lookups.caches_clear()


def test_another_clubs_safety_officer_may_not_revoke(match_day, client_for, no_second_factor):
    device, _ = factories.device(match_day.cast.home)
    liaison = client_for("liaison")  # the away club's safety officer
    assert liaison.post(f"/account/devices/{device.pk}/revoke/").status_code == 403
    assert b"data-device=" not in liaison.get("/account/devices/").content
    device.refresh_from_db()
    assert device.revoked_at is None
