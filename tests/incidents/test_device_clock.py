"""Phones with the wrong time (issue 40 item 5, ADR 0026): a report keeps the server's received
time and the phone's own readings; the time observed is corrected by how far the phone's clock
was off when it sent (its `sent_at`), so a clock ten minutes off is neither misplaced nor
refused, and a report held in an offline outbox keeps the time it was seen."""

from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from safeground.incidents.chain import canonical, entry_hash
from safeground.incidents.models import LogEntry
from tests import factories

pytestmark = pytest.mark.django_db

CLOSE = timedelta(seconds=5)  # the test's own run between reading the clock and the server's


@pytest.fixture
def day():
    return factories.match_day()


@pytest.fixture
def steward(day):
    return factories.logged_in(day.cast["loggist"])


def report(client, fixture, *, observed, sent=None, key="phone-1", **change):
    body = {"category": "missile", "text": "Coins thrown", "block": "S-L2",
            "idempotency_key": key, "observed_at": observed.isoformat()} | change  # fmt: skip
    if sent is not None:
        body["sent_at"] = sent.isoformat()
    return client.post(f"/api/fixtures/{fixture.pk}/log", body, content_type="application/json")


def test_a_phone_ten_minutes_behind_is_corrected_and_both_times_are_kept(day, steward) -> None:
    now = timezone.now()
    phone_now = now - timedelta(minutes=10)
    seen = phone_now - timedelta(seconds=30)  # pressed half a minute before it went
    answer = report(steward, day.cup_tie, observed=seen, sent=phone_now)
    assert answer.status_code == 201
    entry = LogEntry.objects.get()
    assert abs(entry.observed_at - (now - timedelta(seconds=30))) < CLOSE  # its place in time
    assert abs(entry.logged_at - now) < CLOSE  # received
    assert entry.device_observed_at == seen and entry.device_sent_at == phone_now
    assert 595 <= answer.json()["device_offset_s"] <= 605  # behind: positive


def test_a_phone_ten_minutes_ahead_is_taken_and_corrected_not_refused(day, steward) -> None:
    now = timezone.now()
    phone_now = now + timedelta(minutes=10)
    answer = report(steward, day.cup_tie, observed=phone_now, sent=phone_now)
    assert answer.status_code == 201
    entry = LogEntry.objects.get()
    assert abs(entry.observed_at - now) < CLOSE and entry.observed_at <= entry.logged_at
    assert -605 <= answer.json()["device_offset_s"] <= -595
    # Without its time at sending, the same phone's report cannot be corrected: refused as in
    # the future, naming the clock, and nothing written.
    refused = report(steward, day.cup_tie, observed=phone_now, key="phone-2")
    assert refused.status_code == 400 and refused.json()["field"] == "observed_at"
    assert LogEntry.objects.count() == 1


def test_a_report_sent_late_from_the_outbox_keeps_the_time_it_was_seen(day, steward) -> None:
    """The phone's clock is right; the report waited fourteen minutes for a network. The offset
    is nothing, so the time seen stands, fourteen minutes before it was received."""
    now = timezone.now()
    seen = now - timedelta(minutes=14)
    answer = report(steward, day.cup_tie, observed=seen, sent=now)
    entry = LogEntry.objects.get()
    assert entry.observed_at == seen  # within the network's transit: not corrected at all
    assert abs(answer.json()["device_offset_s"]) <= 5
    assert entry.logged_at - entry.observed_at >= timedelta(minutes=14)


def test_a_wrong_clock_and_a_late_send_together_are_told_apart(day, steward) -> None:
    """Ten minutes behind, and held fourteen minutes offline: corrected by the ten only."""
    now = timezone.now()
    phone_now = now - timedelta(minutes=10)
    seen = phone_now - timedelta(minutes=14)
    answer = report(steward, day.cup_tie, observed=seen, sent=phone_now)
    entry = LogEntry.objects.get()
    assert abs(entry.observed_at - (now - timedelta(minutes=14))) < CLOSE
    assert 595 <= answer.json()["device_offset_s"] <= 605


def test_an_outbox_retry_with_its_clock_read_again_is_the_same_report(day, steward) -> None:
    now = timezone.now()
    seen = now - timedelta(minutes=3)
    first = report(steward, day.cup_tie, observed=seen, sent=now - timedelta(minutes=2))
    again = report(steward, day.cup_tie, observed=seen, sent=now)
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"] and LogEntry.objects.count() == 1


@pytest.mark.parametrize(
    ("observed", "sent", "field"),
    [
        # Seen after it was sent, on one clock: no phone does that.
        (timedelta(minutes=1), timedelta(0), "observed_at"),
        # A time without its zone.
        (timedelta(0), "naive", "sent_at"),
        # A clock reading no phone can have had: corrected, it would leave the calendar.
        ("year one", timedelta(days=365 * 7000), "sent_at"),
    ],
)
def test_times_that_cannot_be_right_are_refused_naming_the_field(
    day, steward, observed, sent, field
) -> None:
    now = timezone.now()
    body_observed = (
        now.replace(year=1, month=1, day=1) if observed == "year one" else now + observed
    )
    sent_at = now.replace(tzinfo=None) if sent == "naive" else now + sent
    answer = steward.post(
        f"/api/fixtures/{day.cup_tie.pk}/log",
        {"category": "missile", "block": "S-L2", "observed_at": body_observed.isoformat(),
         "sent_at": sent_at.isoformat()},
        content_type="application/json",
    )  # fmt: skip
    assert answer.status_code == 400 and answer.json()["field"] == field
    assert not LogEntry.objects.exists()


def test_the_phones_readings_are_in_the_chain_and_older_entries_hash_as_before(
    day, steward
) -> None:
    now = timezone.now()
    phone_now = now - timedelta(minutes=10)
    assert report(steward, day.cup_tie, observed=phone_now, sent=phone_now).status_code == 201
    report(steward, day.cup_tie, observed=now, key="phone-2")  # no sent_at: no readings
    with_clock, without = LogEntry.objects.order_by("seq")
    assert with_clock.hash == entry_hash(with_clock.prev_hash, with_clock)
    assert b'"device_sent_at"' in canonical(with_clock)
    assert b"device_" not in canonical(without)  # the form entries before ADR 0026 had
    with_clock.device_sent_at = now  # a phone's reading altered: the chain no longer fits
    assert entry_hash(with_clock.prev_hash, with_clock) != with_clock.hash


def test_the_database_refuses_to_rewrite_a_phones_reading(day, steward) -> None:
    """The new columns are guarded like the rest (SQLite's triggers name their columns: the
    migration makes them again)."""
    now = timezone.now()
    report(steward, day.cup_tie, observed=now, sent=now)
    entry = LogEntry.objects.get()
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE incidents_logentry SET device_sent_at = NULL WHERE id = %s", [entry.pk]
        )
    assert LogEntry.objects.get().device_sent_at == now
