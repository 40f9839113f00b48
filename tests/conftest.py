"""Shared test data: the factories' cast and match day (tests/factories.py), a logged-in client
per member of the cast; and the demo ground and season, for browser tests, for tests of the
demo's own story and for the suites not yet moved to the factories."""

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import uvicorn
from django.test import Client

from safeground.accounts.models import User
from safeground.demo.season import demo_load
from safeground.matches.models import Fixture
from tests import factories


@pytest.fixture
def cast(db) -> factories.Cast:
    return factories.cast()


@pytest.fixture
def match_day(cast) -> factories.MatchDay:
    return factories.match_day(cast)


@pytest.fixture
def client_for(cast) -> Callable[[str], Client]:
    """A test client logged in as one of the cast, by username (the second factor not yet)."""

    def login(username: str) -> Client:
        return factories.logged_in(cast[username])

    return login


@pytest.fixture
def demo(db):
    return demo_load()


@pytest.fixture
def cup_tie(demo) -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea")


@pytest.fixture
def league_match(demo) -> Fixture:
    return Fixture.objects.get(away_club__name="Middlesbrough")


@pytest.fixture
def login_as(demo):
    """A test client logged in as a demo user (password checked; second factor not yet)."""

    def login(username: str) -> Client:
        client = Client()
        client.force_login(User.objects.get(username=username))
        return client

    return login


@pytest.fixture
def no_second_factor(settings):
    settings.SAFEGROUND_REQUIRE_2FA = False


@pytest.fixture(autouse=True)
def _no_counts_timers(request, settings):
    """Unit tests start no live-counts timer threads: one firing as the test database is dropped
    holds a connection to it. Browser tests keep them (the control room's counts go live)."""
    if request.node.get_closest_marker("browser") is None:
        settings.SAFEGROUND_ENTRY_COUNTS_EVERY = 0
        settings.SAFEGROUND_GATE_PRESSURE_EVERY = 0


@pytest.fixture(autouse=True)
def _source_language_afresh() -> Iterator[None]:
    """Each test starts in the source language: the test client's request runs LocaleMiddleware
    in this thread, which leaves the asker's language (Welsh, say) active after it."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _api_calls_counted_afresh() -> Iterator[None]:
    """Each test starts with no API calls counted against anyone (safeground.limits counts in
    the process's cache, and ids come round again from test to test)."""
    from django.core.cache import caches

    caches["limits"].clear()
    yield


@pytest.fixture(autouse=True)
def _log_scored_and_forgotten() -> Iterator[None]:
    """Nothing the log keeps in the process (scores, zone maps) outlives the test: ids come
    round again. (The background work has finished by then: _log_scored_before_flush.)"""
    from safeground.incidents import places, services

    yield
    services.flashpoint_watcher.forget()
    places.forget()


@pytest.fixture(autouse=True)
def _log_triggers_around_flush(request):
    """SQLite only: after a transactional test Django empties every table with DELETE, which the
    append-only triggers (safeground.append_only) refuse. Lift them just for that flush; put
    them back before the next test. (PostgreSQL empties tables with TRUNCATE, which row triggers
    do not see.)"""
    marker = request.node.get_closest_marker("django_db")
    transactional = "transactional_db" in request.fixturenames or (
        marker is not None and marker.kwargs.get("transaction")
    )
    if not transactional and "db" not in request.fixturenames and marker is None:
        yield
        return
    from django.db import connection

    from safeground.append_only import AppendOnlyTriggers

    if transactional:
        request.getfixturevalue("transactional_db")
    else:
        request.getfixturevalue("db")
    if connection.vendor != "sqlite":
        yield
        _log_scored_before_flush()
        return
    tables = AppendOnlyTriggers.every()
    for triggers in tables:
        triggers.install(connection)
    yield
    _log_scored_before_flush()
    if transactional:
        for triggers in tables:
            triggers.drop(connection)


def _log_scored_before_flush() -> None:
    """Here, torn down before the test's database fixture: the background work's reads and
    writes (the flashpoint scoring of the log and zones, a server's in browser tests; push
    alerts' outcomes, the group commit's writer threads) would otherwise race the flush's
    TRUNCATE, which deadlocks on PostgreSQL and leaves the rows for the next test. (An autouse
    fixture without the database would settle only after the flush: it is set up before the
    database.) 30 s bounds it; it returns as soon as the work is done."""
    from safeground import background, group_commit

    assert background.settle(30), "the background work did not finish"
    assert group_commit.settle_all(30), "a group commit's writer did not finish"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker) -> Iterator[str]:
    """host:port of safeground.asgi.application served by uvicorn in a thread (HTTP and ws)."""
    from safeground.asgi import application

    port = _free_port()
    config = uvicorn.Config(
        application,
        host="127.0.0.1",
        port=port,
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        lifespan="on",  # its shutdown closes the pools before the test database is dropped
        log_level="warning",
    )
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    with django_db_blocker.unblock():
        thread.start()
        deadline = time.monotonic() + 15
        while not instance.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
        instance.should_exit = True
        thread.join(timeout=10)
