"""The PostgreSQL pool's check before a request gets a connection (safeground.connection_checks):
one given back less than a second ago is handed out as it is, without a round trip; one idle
longer is checked, and replaced when it died in the pool (a restart, a cut)."""

import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from safeground import connection_checks

pytestmark = pytest.mark.django_db


@pytest.fixture
def pool() -> Iterator[ConnectionPool]:
    if connection.vendor != "postgresql":
        pytest.skip("the pool is PostgreSQL's: set DATABASE_URL=postgres://... to run it")
    made = ConnectionPool(
        kwargs={**connection.get_connection_params(), "autocommit": True},
        min_size=1,
        max_size=1,
        check=connection_checks.checked,
        reset=connection_checks.given_back,
        open=True,
    )
    made.wait()
    yield made
    made.close()


def backend_ended(pid: int) -> None:
    """The server ends one connection's backend, as a restart or a cut does."""
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_connection_idle_past_a_second_is_checked_and_a_dead_one_replaced(pool, monkeypatch):
    monkeypatch.setattr(connection_checks, "FRESH_SECONDS", 0.05)
    with pool.connection() as first:
        pid = first.info.backend_pid
    backend_ended(pid)
    time.sleep(0.1)
    with pool.connection() as second:
        assert second.execute("SELECT 1").fetchone() == (1,)
        assert second.info.backend_pid != pid


def test_a_connection_given_back_just_now_is_handed_out_unchecked(pool):
    """What the saved round trip costs: a connection whose backend ended inside the second fails
    the one request that gets it (the API answers 503 with Retry-After, nothing stored)."""
    with pool.connection() as first:
        pid = first.info.backend_pid
    backend_ended(pid)
    with pytest.raises(psycopg.OperationalError), pool.connection() as second:
        assert second.info.backend_pid == pid
        second.execute("SELECT 1")
    with pool.connection() as third:  # the pool replaced the broken one
        assert third.execute("SELECT 1").fetchone() == (1,)
