"""Production settings pass Django's deployment checks: HTTPS only, HSTS, secure cookies."""

import base64
import os
import secrets
import subprocess
import sys

import pytest


def _check_deploy(**extra: str) -> subprocess.CompletedProcess[str]:
    # Only what a deployment would have: not the test run's database, nor its async escape hatch.
    leave_out = ("DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in leave_out}
    env |= {
        "DJANGO_SETTINGS_MODULE": "safeground.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(60),
        "SAFEGROUND_BUNDLE_SIGNING_KEY": base64.b64encode(bytes(32)).decode(),
        "ALLOWED_HOSTS": "safeground.example",
        "SAFEGROUND_VAPID_PRIVATE_KEY": base64.urlsafe_b64encode(bytes(31) + b"\x07").decode(),
        **extra,
    }
    return subprocess.run(
        [sys.executable, "-m", "safeground.cli", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_passes_the_deployment_checks_with_hsts_for_subdomains() -> None:
    passed = _check_deploy(HSTS_INCLUDE_SUBDOMAINS="true")
    assert passed.returncode == 0, passed.stderr
    assert "no issues" in passed.stdout


@pytest.mark.parametrize(
    ("setting", "value", "check"),
    [
        ("HSTS_SECONDS", "0", "security.W004"),
        ("SECURE_SSL_REDIRECT", "false", "security.W008"),
        ("SECURE_COOKIES", "false", "security.W012"),
    ],
)
def test_turning_a_protection_off_is_reported(setting: str, value: str, check: str) -> None:
    found = _check_deploy(HSTS_INCLUDE_SUBDOMAINS="true", **{setting: value})
    assert found.returncode != 0
    assert check in found.stderr


def test_production_refuses_to_start_without_its_own_vapid_key() -> None:
    refused = _check_deploy(HSTS_INCLUDE_SUBDOMAINS="true", SAFEGROUND_VAPID_PRIVATE_KEY="")
    assert refused.returncode != 0
    assert "SAFEGROUND_VAPID_PRIVATE_KEY is not set" in refused.stderr
    assert "safeground vapidkey" in refused.stderr
