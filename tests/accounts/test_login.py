import pytest
from django.test import Client
from django.urls import reverse
from django_otp.plugins.otp_totp.models import TOTPDevice

from safeground.accounts.models import User
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("username", ["safety", "police", "banofficer", "auditor"])
def test_privileged_roles_are_held_at_the_second_factor(username, client_for) -> None:
    client = client_for(username)
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/account/2fa/?next=%2F"
    api = client.get("/api/fixtures")
    assert api.status_code == 403
    assert api.json()["code"] == "second_factor_required"


@pytest.mark.parametrize("username", ["loggist", "supervisor", "steward", "spotter"])
def test_other_roles_need_no_second_factor(username, client_for) -> None:
    assert client_for(username).get("/").status_code == 200


def test_a_confirmed_totp_code_lets_the_safety_officer_in(client_for) -> None:
    client = client_for("safety")
    assert client.get("/account/2fa/").status_code == 200  # makes the unconfirmed device
    device = TOTPDevice.objects.get(user__username="safety")
    assert not device.confirmed
    wrong = client.post("/account/2fa/?next=/", {"token": "123456"})
    assert wrong.status_code == 200 and "not right" in wrong.content.decode()
    from django_otp.oath import TOTP

    token = f"{TOTP(device.bin_key).token():06d}"
    throttled = client.post("/account/2fa/?next=/", {"token": token})
    assert "Too many wrong codes" in throttled.content.decode()  # django-otp's back-off
    device.refresh_from_db()
    device.throttle_reset()
    token = f"{TOTP(device.bin_key).token():06d}"
    response = client.post("/account/2fa/?next=/", {"token": token})
    assert response.status_code == 302 and response["Location"] == "/"
    device.refresh_from_db()
    assert device.confirmed
    assert client.get("/").status_code == 200


def test_the_second_factor_page_never_redirects_off_site(client_for) -> None:
    client = client_for("safety")
    client.get("/account/2fa/")
    device = TOTPDevice.objects.get(user__username="safety")
    from django_otp.oath import TOTP

    token = f"{TOTP(device.bin_key).token():06d}"
    response = client.post("/account/2fa/?next=https://evil.example/", {"token": token})
    assert response["Location"] == "/"


def test_repeated_wrong_passwords_lock_the_login(cast, settings) -> None:
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = client.post(reverse("login"), {"username": "loggist", "password": "wrong"})
        assert response.status_code in {200, 429}
    locked = client.post(reverse("login"), {"username": "loggist", "password": PASSWORD})
    assert locked.status_code == 429
    assert "Too many failed log-ins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_right_password_logs_in(cast) -> None:
    client = Client()
    response = client.post(reverse("login"), {"username": "loggist", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(User.objects.get(username="loggist").pk)


def test_the_lockout_is_recorded_and_holds_only_that_username_from_that_address(
    cast, settings
) -> None:
    from axes.models import AccessAttempt

    client = Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(reverse("login"), {"username": "loggist", "password": "wrong"})
    locked = client.post(reverse("login"), {"username": "loggist", "password": PASSWORD})
    assert locked.status_code == 429
    assert b"data-locked-out" in locked.content
    attempt = AccessAttempt.objects.get(username="loggist")
    assert attempt.ip_address == "198.51.100.7"
    assert attempt.failures_since_start >= settings.AXES_FAILURE_LIMIT
    # Another user from the same address, and the same user from elsewhere, still log in.
    other = client.post(reverse("login"), {"username": "steward", "password": PASSWORD})
    assert other.status_code == 302
    elsewhere = Client(REMOTE_ADDR="203.0.113.9")
    assert (
        elsewhere.post(reverse("login"), {"username": "loggist", "password": PASSWORD}).status_code
        == 302
    )
