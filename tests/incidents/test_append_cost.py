"""What an append costs: the chain's statements and nothing else once the match is known
(incidents/places.py keeps the rest a few seconds), and what that keeping means for an edit."""

import time
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from safeground.accounts.models import User
from safeground.accounts.permissions import can_write_log
from safeground.incidents.models import Category
from safeground.incidents.services import LogEntryError, Place, log_entry_append
from safeground.matches.selectors import fixture_with_shares

pytestmark = pytest.mark.django_db(transaction=True)


def report(fixture, **fields):
    return log_entry_append(
        fixture=fixture_with_shares(fixture.pk),  # fresh, as a request reads it
        author=User.objects.get(username="loggist"),
        text=fields.pop("text", "Coins thrown"),
        place=Place(block="S-L1"),
        idempotency_key=str(uuid.uuid4()),
        **{"category": "missile"} | fields,
    )


def test_an_append_runs_the_chains_statements_only(match_day, settings) -> None:
    cup_tie = match_day.cup_tie
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    report(cup_tie)  # the categories, places and zone map are read once
    fixture = fixture_with_shares(cup_tie.pk)
    author = User.objects.get(username="loggist")
    assert can_write_log(author, fixture)  # the request's check, which reads the memberships
    with CaptureQueriesContext(connection) as queries:
        log_entry_append(
            fixture=fixture,
            author=author,
            category="missile",
            text="Coins again",
            place=Place(block="S-L1"),
            idempotency_key=str(uuid.uuid4()),
        )
    # A prepared statement is logged as "QUERY = '...' - PARAMS = ...": its first word counts.
    words = [
        q["sql"].removeprefix("QUERY = ").strip("'\"").split()[0].upper()
        for q in queries.captured_queries
    ]
    statements = [w for w in words if w not in ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE")]
    # Two round trips inside the transaction: the lock with the head and the author's idempotency
    # key (on PostgreSQL the lock statement, then the head's, sent together; SQLite's IMMEDIATE
    # transaction is its lock), then the insert.
    assert statements == ["SELECT", "INSERT"], queries.captured_queries
    head = next(q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT"))
    if connection.vendor == "postgresql":
        lock, read = head.split("; ")
        assert lock.endswith("FOR NO KEY UPDATE") and "ORDER BY seq DESC" in read


def test_a_category_withdrawn_is_refused_within_the_bound(match_day, settings) -> None:
    cup_tie = match_day.cup_tie
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 0.3
    report(cup_tie)
    Category.objects.filter(code="missile").update(is_active=False)
    report(cup_tie)  # kept: taken until the bound passes
    time.sleep(0.35)
    with pytest.raises(LogEntryError, match="no category 'missile'"):
        report(cup_tie)


def test_a_category_added_is_taken_at_once(match_day, settings) -> None:
    cup_tie = match_day.cup_tie
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    with pytest.raises(LogEntryError, match="no category 'kite'"):
        report(cup_tie, category="kite")
    Category.objects.create(code="kite", name="Kite flown over the pitch", default_severity=1)
    assert report(cup_tie, category="kite").category.code == "kite"


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite has no prepared statements to keep"
)
def test_the_insert_is_prepared_once_on_postgresql(match_day) -> None:
    """On PostgreSQL the append's INSERT is parsed and planned once per connection, then only
    executed (safeground.prepared)."""
    for n in range(3):
        report(match_day.cup_tie, text=f"Coins {n}")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements"
            " WHERE statement LIKE 'INSERT INTO \"incidents_logentry\"%%'"
        )
        assert cursor.fetchone()[0] == 1
