"""One limits mechanism (safeground.limits, ADR 0021): one rate format, every limit named in
SAFEGROUND_LIMITS, and every 429, from the API, a page or the exchange, with Retry-After."""

import contextvars
import importlib
import json
import os
import uuid

import pytest
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from redis import Redis

import safeground.api  # noqa: F401  (every app's limits declared)
from safeground import signing
from safeground.errors import TooManyRequests
from safeground.exchange import signed
from safeground.exchange.services import club_enrol
from safeground.limits import DECLARED, Limit, Rate


def test_every_limit_the_code_keeps_is_set_in_the_settings_and_listed(settings) -> None:
    listing = {name: str(limit.rate) for name, limit in sorted(DECLARED.items())}
    print("\nlimits:", ", ".join(f"{name} {rate}" for name, rate in listing.items()))
    assert set(DECLARED) == set(settings.SAFEGROUND_LIMITS)
    assert listing == {
        "api.person": "1800/m",
        "exchange.club": "30/h",
        "exchange.fixture": "12/d",
        "exchange.sale": "3000/h",
        "supporters.network": "200/10m",
        "supporters.network_urgent": "2000/10m",
        "supporters.reporter": "5/10m",
        "supporters.reporter_urgent": "30/10m",
    }


@pytest.mark.parametrize(
    ("text", "count", "seconds", "words"),
    [
        ("1800/m", 1800, 60, "a minute"),
        ("5/10m", 5, 600, "in 10 minutes"),
        ("30/h", 30, 3600, "an hour"),
        ("12/d", 12, 86400, "a day"),
        ("2/90s", 2, 90, "in 90 seconds"),
    ],
)
def test_one_rate_format(text: str, count: int, seconds: int, words: str) -> None:
    rate = Rate.parse(text)
    assert (rate.count, rate.seconds, rate.per(), str(rate)) == (count, seconds, words, text)


@pytest.mark.parametrize("text", ["lots", "0/m", "5/10", "5/m/h", "5/0m", "5/w", " 5/m"])
def test_a_rate_in_another_form_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="such as 1800/m"):
        Rate.parse(text)


def test_a_wrong_rate_in_the_environment_refuses_the_settings_naming_the_variable(
    monkeypatch,
) -> None:
    import safeground.settings.base as base

    monkeypatch.setenv("SAFEGROUND_SUPPORTERS_REPORTER_RATE", "5 a minute")
    with pytest.raises(ImproperlyConfigured, match="SAFEGROUND_SUPPORTERS_REPORTER_RATE='5 a"):
        importlib.reload(base)
    monkeypatch.setenv("SAFEGROUND_SUPPORTERS_REPORTER_RATE", "2/5m")
    importlib.reload(base)
    assert base.SAFEGROUND_LIMITS["supporters.reporter"] == "2/5m"
    monkeypatch.delenv("SAFEGROUND_SUPPORTERS_REPORTER_RATE")
    importlib.reload(base)


def _count_until_refused(limit: Limit, key: str) -> TooManyRequests:
    for _ in range(limit.rate.count):
        limit.count(key, field="", message="over")
    with pytest.raises(TooManyRequests) as refused:
        limit.count(key, field="", message="over")
    return refused.value


def test_a_limit_counts_each_key_apart_and_says_when_to_try_again(settings) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "api.person": "3/h"}
    limit = DECLARED["api.person"]
    refused = _count_until_refused(limit, "one")
    assert refused.status == 429 and 1 <= refused.retry_after <= 3600
    limit.count("two", field="", message="over")  # another key is counted on its own


@pytest.fixture
def counted_in_redis(settings) -> None:
    """The limits count in Redis, as a server with REDIS_URL does (the tests' count in memory)."""
    if not os.environ.get("REDIS_URL"):
        pytest.skip("needs REDIS_URL")
    settings.CACHES = {
        **settings.CACHES,
        "limits": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
        },
    }


@pytest.mark.usefixtures("counted_in_redis")
def test_with_redis_every_process_counts_in_one_place(settings) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "api.person": "2/m"}
    key = f"test-{uuid.uuid4()}"  # nothing of another run's; the keys expire with the window
    _count_until_refused(DECLARED["api.person"], key)
    # What another process would read: the count is in Redis, not this process's memory.
    stored = [k for k in caches["limits"]._cache.get_client().keys(f"*{key}*")]
    assert len(stored) == 1


@pytest.mark.usefixtures("counted_in_redis")
def test_requests_each_in_a_context_of_their_own_count_over_one_redis_connection() -> None:
    """The server runs each request in a context of its own (a2wsgi), and Django keeps a cache's
    client per context: counting each API call opened a Redis connection of its own."""
    key = f"test-{uuid.uuid4()}"
    redis = Redis.from_url(os.environ["REDIS_URL"])
    before = redis.info("stats")["total_connections_received"]
    for _ in range(50):
        # The context a2wsgi copies each request's from is the event loop's, which never held
        # a cache client: as an empty one.
        contextvars.Context().run(DECLARED["api.person"].count, key, field="", message="over")
    opened = redis.info("stats")["total_connections_received"] - before
    assert opened < 25  # one here; tests of other files may connect meanwhile, never 50


@pytest.mark.django_db
def test_the_exchanges_bound_is_answered_429_with_retry_after(settings) -> None:
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "exchange.club": "1/h"}
    club_enrol(name="Riverside Athletic", contact="security@riverside.example",
               public_key=signing.public_key_json()["public_key"])  # fmt: skip
    answers = []
    for fixture in ("fixture 1", "fixture 2"):
        path, body = (
            "/api/exchange/checks",
            json.dumps({"fixture": fixture, "holders": 3, "tickets": 3, "coming": 3}),
        )
        headers = signed.headers("POST", path, body.encode())
        answers.append(Client().post(path, body, content_type="application/json", headers=headers))
    assert [a.status_code for a in answers] == [201, 429]
    refused = answers[1]
    assert refused.json()["code"] == "too_many_requests"
    assert refused.json()["detail"] == "more than 1 checks an hour from Riverside Athletic: wait"
    assert 3590 <= int(refused["Retry-After"]) <= 3600
