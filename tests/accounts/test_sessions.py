"""Who is signed in behind many session keys at once (accounts/sessions.py) answers as Django's
`get_user` and django-otp's middleware answer for each key alone, in a few queries for all."""

from datetime import timedelta
from importlib import import_module
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY, get_user
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db import connection
from django.http import HttpRequest
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.models import Device
from django_otp.plugins.otp_totp.models import TOTPDevice

from safeground.accounts.permissions import needs_second_factor
from safeground.accounts.sessions import signed_in_users
from tests import factories

pytestmark = pytest.mark.django_db


def session_of(user: Any, **data: Any) -> str:
    store = factories.logged_in(user).session
    store.update(data)
    store.save()
    return str(store.session_key)


def as_get_user(key: str) -> Any:
    """One key the long way: Django's get_user, then the second factor as the pages check it."""
    request = HttpRequest()
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(key)
    try:
        user = get_user(request)
    except ValidationError:  # a user id that is not one: get_user raises, a socket is refused
        return None
    if not user.is_authenticated:
        return None
    if settings.SAFEGROUND_REQUIRE_2FA and needs_second_factor(user):
        persistent_id = request.session.get(DEVICE_ID_SESSION_KEY)
        device = Device.from_persistent_id(persistent_id) if persistent_id else None
        if device is None or device.user_id != user.pk or not device.confirmed:
            return None
    return user


@pytest.fixture
def sessions(cast) -> dict[str, str]:
    """A session key for each case, named for what it shows."""
    police_phone = TOTPDevice.objects.create(user=cast["police"], name="phone", confirmed=True)
    unconfirmed = TOTPDevice.objects.create(user=cast["banofficer"], name="new", confirmed=False)
    keys = {
        "signed in": session_of(cast["loggist"]),
        "signed in again elsewhere": session_of(cast["loggist"]),
        "deactivated": session_of(cast["steward"]),
        "password changed": session_of(cast["supervisor"]),
        "logged out": session_of(cast["spotter"]),
        "expired": session_of(cast["liaison"]),
        "privileged, no second factor": session_of(cast["safety"]),
        "privileged, second factor passed": session_of(
            cast["police"], **{DEVICE_ID_SESSION_KEY: police_phone.persistent_id}
        ),
        "device not confirmed": session_of(
            cast["banofficer"], **{DEVICE_ID_SESSION_KEY: unconfirmed.persistent_id}
        ),
        "someone else's device": session_of(
            cast["auditor"], **{DEVICE_ID_SESSION_KEY: police_phone.persistent_id}
        ),
        "a device id that means nothing": session_of(
            cast["auditor"], **{DEVICE_ID_SESSION_KEY: "otp_totp.nosuchdevice/x"}
        ),
        "a backend no longer configured": session_of(
            cast["loggist"],
            **{BACKEND_SESSION_KEY: "django.contrib.auth.backends.RemoteUserBackend"},
        ),
        "a user id that is not one": session_of(cast["loggist"], **{SESSION_KEY: "abc"}),
        "tampered": session_of(cast["loggist"]),
        "no such key": "k" * 32,
    }
    cast["steward"].__class__.objects.filter(pk=cast["steward"].pk).update(is_active=False)
    supervisor = cast["supervisor"]
    supervisor.set_password("a new one, changed at the office")
    supervisor.save()
    Session.objects.filter(session_key=keys["logged out"]).delete()
    Session.objects.filter(session_key=keys["expired"]).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    Session.objects.filter(session_key=keys["tampered"]).update(session_data="bm90IHNpZ25lZA:x:y")
    return keys


@pytest.mark.parametrize("required", [True, False], ids=["2FA required", "2FA off"])
def test_every_case_answers_as_get_user_does(sessions, settings, required) -> None:
    settings.SAFEGROUND_REQUIRE_2FA = required
    found = signed_in_users(sessions.values())  # first: get_user flushes the sessions it refuses
    expected = {case: as_get_user(key) for case, key in sessions.items()}
    assert {case: found.get(key) for case, key in sessions.items()} == expected
    signed_in = {case for case, user in expected.items() if user is not None}
    privileged = {"privileged, no second factor", "device not confirmed", "someone else's device"}
    privileged.add("a device id that means nothing")
    assert signed_in == {
        "signed in",
        "signed in again elsewhere",
        "privileged, second factor passed",
        *(set() if required else privileged),
    }


def test_a_session_signed_with_a_retired_secret_key_still_counts(cast, settings) -> None:
    key = session_of(cast["loggist"])
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "the new secret key, rotated this morning"
    assert signed_in_users([key]) == {key: cast["loggist"]}
    assert as_get_user(key) == cast["loggist"]


def test_many_sessions_are_read_in_a_few_queries(cast, settings) -> None:
    settings.SAFEGROUND_REQUIRE_2FA = True
    devices = {
        name: TOTPDevice.objects.create(user=cast[name], name="phone", confirmed=True)
        for name in ("safety", "police")
    }
    keys = [session_of(cast[name]) for name in ("loggist", "steward", "spotter") for _ in range(20)]
    keys += [
        session_of(cast[name], **{DEVICE_ID_SESSION_KEY: device.persistent_id})
        for name, device in devices.items()
    ]
    with CaptureQueriesContext(connection) as queries:
        found = signed_in_users(keys)
    assert set(found) == set(keys)
    # Sessions, users, memberships, devices: one query each for the 62 keys.
    assert len(queries) == 4, [q["sql"] for q in queries]
