"""The API's bound on one person's calls (SAFEGROUND_API_RATE, api.PerPerson): past it a 429 in
the one error shape with Retry-After, for that person only; device keys are not counted."""

import pytest

from tests import factories


@pytest.fixture
def slow_rate(settings, no_second_factor) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "api.person": "3/m"}


def test_a_person_over_the_rate_gets_429_with_retry_after_and_nothing_else_changes(
    match_day, client_for, slow_rate
) -> None:
    loggist, police = client_for("loggist"), client_for("police")
    fixture = match_day.cup_tie
    for _ in range(3):
        assert loggist.get(f"/api/fixtures/{fixture.pk}").status_code == 200
    refused = loggist.post(
        f"/api/fixtures/{fixture.pk}/log",
        {"category": "missile", "text": "Coins from S-L1", "block": "S-L1"},
        content_type="application/json",
    )
    assert refused.status_code == 429
    assert refused.json() == {
        "code": "too_many_requests",
        "field": "",
        "detail": "more than 3/m API calls from you: wait, then send again",
    }
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert not fixture.log_entries.filter(text="Coins from S-L1").exists()  # nothing written
    # Another person is counted on their own.
    assert police.get(f"/api/fixtures/{fixture.pk}").status_code == 200


def test_a_devices_calls_are_not_counted(match_day, slow_rate) -> None:
    from django.test import Client

    _, key = factories.device(match_day.cast.home)
    device = Client(headers={"X-Device-Key": key})
    answers = [device.get("/api/devices/me").status_code for _ in range(6)]
    assert answers == [200] * 6


def test_the_rate_is_a_setting_checked_when_the_settings_load(monkeypatch) -> None:
    import importlib

    from django.core.exceptions import ImproperlyConfigured

    import safeground.settings.base as base

    monkeypatch.setenv("SAFEGROUND_API_RATE", "lots")
    with pytest.raises(ImproperlyConfigured, match="SAFEGROUND_API_RATE='lots': calls per"):
        importlib.reload(base)
    monkeypatch.setenv("SAFEGROUND_API_RATE", "600/m")
    importlib.reload(base)
    assert base.SAFEGROUND_LIMITS["api.person"] == "600/m"
