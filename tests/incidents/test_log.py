"""Appending, acting on and reading the log: services, API errors, idempotency and events."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from safeground.accounts.models import User
from safeground.incidents.models import LogEntry
from safeground.incidents.selectors import incident_state
from safeground.incidents.services import (
    LogEntryError,
    Place,
    log_entry_append,
    log_entry_assign,
    log_entry_escalate,
    log_entry_set_status,
)
from safeground.live.events import capture_events

pytestmark = pytest.mark.django_db


def user(name: str) -> User:
    return User.objects.get(username=name)


def report(fixture, **kwargs) -> LogEntry:
    fields = {"category": "missile", "text": "Bottle thrown", "place": Place(block="S-L1")}
    return log_entry_append(fixture=fixture, author=user("loggist"), **(fields | kwargs))


def test_an_incident_state_follows_its_entries(match_day) -> None:
    cup_tie = match_day.cup_tie
    entry = report(cup_tie, severity=4)
    assert incident_state(entry).status == "open"
    log_entry_assign(entry=entry, author=user("loggist"), assignee=user("steward"))
    state = incident_state(entry)
    assert (state.status, state.assignee) == ("assigned", "steward")
    log_entry_escalate(entry=entry, author=user("supervisor"), to="police", note="Missiles rising")
    assert incident_state(entry).escalated_to == "police"
    log_entry_set_status(entry=entry, author=user("police"), status="resolved")
    log_entry_set_status(entry=entry, author=user("safety"), status="closed")
    assert incident_state(entry).status == "closed"
    with pytest.raises(LogEntryError, match="is closed; it cannot become escalated"):
        log_entry_escalate(entry=entry, author=user("loggist"), to="police")
    assert LogEntry.objects.filter(concerns=entry).count() == 4
    assert LogEntry.objects.get(pk=entry.pk).text == "Bottle thrown"  # the report is untouched


def test_the_same_idempotency_key_stores_one_entry(match_day) -> None:
    cup_tie = match_day.cup_tie
    first = report(cup_tie, idempotency_key="phone-7f3a")
    again = report(cup_tie, idempotency_key="phone-7f3a")
    assert again.pk == first.pk
    assert LogEntry.objects.filter(fixture=cup_tie).count() == 1


def test_events_go_out_after_commit_with_their_shape(match_day, django_capture_on_commit_callbacks):
    cup_tie = match_day.cup_tie
    with capture_events() as events, django_capture_on_commit_callbacks(execute=False) as pending:
        entry = report(cup_tie, severity=3)
        assert events == []  # nothing before commit
    assert len(pending) == 1
    with capture_events() as events:
        for callback in pending:
            callback()
    assert len(events) == 1
    event = events[0]
    assert (event.type, event.seq, event.fixture_id) == ("log.entry", entry.seq, cup_tie.pk)
    assert set(event.data) == {"entry", "incident"}
    assert event.data["entry"]["category"] == "missile"
    assert event.data["incident"]["status"] == "open"
    assert event.audience.zone_ids  # tied to the zone of block S-L1
    assert json.loads(event.frame)["data"]["entry"]["seq"] == entry.seq


def test_each_action_emits_one_event_addressed_where_it_should(
    match_day, django_capture_on_commit_callbacks
) -> None:
    cup_tie = match_day.cup_tie
    entry = report(cup_tie)
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        log_entry_assign(entry=entry, author=user("loggist"), assignee=user("steward"))
        log_entry_escalate(entry=entry, author=user("loggist"), to="supervisor")
        log_entry_set_status(entry=entry, author=user("loggist"), status="resolved")
    assert [e.data["incident"]["status"] for e in events] == ["assigned", "escalated", "resolved"]
    # the assignee, and the report's author (who wrote this action too)
    assert events[0].audience.user_ids == {user("steward").pk, user("loggist").pk}
    assert events[2].audience.user_ids == {user("steward").pk, user("loggist").pk}
    assert [e.data["entry"]["kind"] for e in events] == ["assignment", "escalation", "status"]


def test_a_refused_append_publishes_nothing(match_day, django_capture_on_commit_callbacks) -> None:
    cup_tie = match_day.cup_tie
    with (
        capture_events() as events,
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(LogEntryError),
    ):
        report(cup_tie, place=Place(block="NOPE"))
    assert events == []
    assert not LogEntry.objects.exists()


# The API: every bad input is a 4xx naming the field, and nothing is written.


@pytest.fixture
def loggist(client_for, no_second_factor):
    return client_for("loggist")


def post(client, url, body):
    return client.post(url, body, content_type="application/json")


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"category": "missile", "block": "Z-9"}, 404, "block"),  # well formed; no such block
        ({"category": "juggling", "block": "S-L1"}, 404, "category"),
        ({"category": "missile"}, 400, "place"),
        ({"category": "missile", "block": "S-L1", "first_row": "ZZ"}, 400, "first_row"),
        ({"category": "missile", "block": "S-L1", "severity": 9}, 422, "severity"),
        ({"category": "missile", "block": "S-L1", "text": "x" * 2001}, 422, "text"),
        ({"category": "missile", "block": "S-L1", "links": [99]}, 404, "links"),
        ({"block": "S-L1"}, 422, "category"),
    ],
)
def test_bad_appends_are_refused_naming_the_field(match_day, loggist, body, status, field) -> None:
    cup_tie = match_day.cup_tie
    response = post(loggist, f"/api/fixtures/{cup_tie.pk}/log", body)
    assert response.status_code == status
    payload = response.json()
    named = payload.get("field") or json.dumps(payload["detail"])
    assert field in named
    assert not LogEntry.objects.exists()


def test_a_last_row_alone_is_that_one_row(match_day, loggist) -> None:
    cup_tie = match_day.cup_tie
    body = {"category": "missile", "block": "S-L1", "last_row": "C"}
    response = post(loggist, f"/api/fixtures/{cup_tie.pk}/log", body)
    assert response.status_code == 201, response.json()
    entry = LogEntry.objects.get()
    assert (entry.first_row, entry.last_row) == ("C", "C")
    rows_alone = post(loggist, f"/api/fixtures/{cup_tie.pk}/log", {"category": "missile",
                      "zone": "away-south-cup", "last_row": "C"})  # fmt: skip
    assert rows_alone.status_code == 400 and rows_alone.json()["field"] == "first_row"


def test_a_time_observed_in_the_future_is_refused(match_day, loggist) -> None:
    cup_tie = match_day.cup_tie
    future = (timezone.now() + timedelta(minutes=10)).isoformat()
    body = {"category": "missile", "block": "S-L1", "observed_at": future}
    response = post(loggist, f"/api/fixtures/{cup_tie.pk}/log", body)
    assert response.status_code == 400
    assert response.json()["field"] == "observed_at"
    ok = (timezone.now() + timedelta(seconds=30)).isoformat()  # within the allowed clock skew
    body["observed_at"] = ok
    assert post(loggist, f"/api/fixtures/{cup_tie.pk}/log", body).status_code == 201


def test_append_twice_with_one_key_answers_with_the_one_entry(match_day, loggist) -> None:
    cup_tie = match_day.cup_tie
    body = {"category": "missile", "block": "S-L1", "idempotency_key": "retry-1"}
    first = post(loggist, f"/api/fixtures/{cup_tie.pk}/log", body)
    second = post(loggist, f"/api/fixtures/{cup_tie.pk}/log", body)
    assert first.status_code == second.status_code == 201
    assert first.json()["id"] == second.json()["id"]
    assert LogEntry.objects.count() == 1


def test_acting_on_an_entry_of_another_match_is_refused(match_day, loggist) -> None:
    cup_tie = match_day.cup_tie
    league_match = match_day.league_match
    entry = report(league_match)
    url = f"/api/fixtures/{cup_tie.pk}/log/{entry.pk}/escalate"
    response = post(loggist, url, {"to": "police"})
    assert response.status_code == 404
    assert response.json() == {
        "code": "log_entry_refused",
        "field": "entry_id",
        "detail": f"entry {entry.pk} belongs to another match",
    }
    assert LogEntry.objects.count() == 1


def test_correcting_an_entry_that_does_not_exist_is_refused(match_day, loggist) -> None:
    cup_tie = match_day.cup_tie
    response = post(loggist, f"/api/fixtures/{cup_tie.pk}/log/424242/correct", {"note": "typo"})
    assert response.status_code == 404
    assert response.json()["field"] == "entry_id"


def test_a_correction_is_a_new_entry_and_the_incident_shows_it(match_day, loggist) -> None:
    cup_tie = match_day.cup_tie
    entry = report(cup_tie)
    url = f"/api/fixtures/{cup_tie.pk}/log/{entry.pk}/correct"
    assert post(loggist, url, {"note": "only said"}).status_code == 400  # nothing corrected
    response = post(loggist, url, {"note": "was a seat", "text": "Plastic seat thrown"})
    assert response.status_code == 200
    assert response.json()["kind"] == "correction"
    assert incident_state(entry).text == "Plastic seat thrown"
    assert LogEntry.objects.get(pk=entry.pk).text == "Bottle thrown"


def test_the_log_lists_by_cursor_and_filters(match_day, loggist) -> None:
    cup_tie = match_day.cup_tie
    first = report(cup_tie, severity=2)
    report(cup_tie, category="disorder", place=Place(block="N-L1"), severity=4)
    third = report(cup_tie, severity=5)
    log_entry_escalate(entry=third, author=user("loggist"), to="police")
    url = f"/api/fixtures/{cup_tie.pk}/log"
    page = loggist.get(url, {"limit": 2}).json()
    assert [e["seq"] for e in page["entries"]] == [1, 2]
    assert page["next_after"] == 2
    rest = loggist.get(url, {"after": 2}).json()
    assert [e["seq"] for e in rest["entries"]] == [3, 4] and rest["next_after"] is None
    assert [e["seq"] for e in loggist.get(url, {"category": "disorder"}).json()["entries"]] == [2]
    assert [e["seq"] for e in loggist.get(url, {"min_severity": 5}).json()["entries"]] == [3, 4]
    assert [e["seq"] for e in loggist.get(url, {"status": "open"}).json()["entries"]] == [
        first.seq,
        2,
    ]
    assert [e["seq"] for e in loggist.get(url, {"zone": "away-south-cup"}).json()["entries"]] == [
        1,
        3,
        4,
    ]
    assert loggist.get(url, {"limit": 0}).status_code == 422


def test_the_log_read_follows_the_log_as_it_grows_and_filters_on_the_state_now(
    match_day, loggist
) -> None:
    """The API reads the process's fold of the log: a read after more entries has them, and an
    incident resolved since no longer passes status=open, its earlier entries included."""
    cup_tie = match_day.cup_tie
    url = f"/api/fixtures/{cup_tie.pk}/log"
    first = report(cup_tie)
    second = report(cup_tie, text="Coins thrown")
    assert [e["seq"] for e in loggist.get(url, {"status": "open"}).json()["entries"]] == [1, 2]
    closing = log_entry_set_status(entry=first, author=user("loggist"), status="resolved")
    third = report(cup_tie, text="Seat thrown")
    assert [e["seq"] for e in loggist.get(url, {"status": "open"}).json()["entries"]] == [
        second.seq,
        third.seq,
    ]
    page = loggist.get(url, {"after": second.seq}).json()["entries"]
    assert [(e["seq"], e["incident_status"]) for e in page] == [
        (closing.seq, "resolved"),
        (third.seq, "open"),
    ]


def test_an_append_stays_within_its_query_budget(match_day, django_assert_max_num_queries) -> None:
    cup_tie = match_day.cup_tie
    for n in range(30):  # a busy log: the budget must not grow with it
        report(cup_tie, text=f"wave {n}")
    # 16 on PostgreSQL; 14 on SQLite, which needs no row lock (one for the report, one for its
    # flashpoint check)
    with django_assert_max_num_queries(16):
        report(cup_tie, text="one more")


def test_reading_the_log_costs_the_same_queries_however_many_gate_and_concourse_reports(
    match_day, loggist, django_assert_max_num_queries
) -> None:
    cup_tie = match_day.cup_tie
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from safeground.incidents.catch_up import folds_forget

    url = f"/api/fixtures/{cup_tie.pk}/log"
    report(cup_tie, place=Place(gate="F"))
    loggist.get(url)  # the process's fold of the log is made; later reads add what is new
    report(cup_tie, place=Place(concourse="N-L"))
    with CaptureQueriesContext(connection) as few:
        assert len(loggist.get(url).json()["entries"]) == 2
    for n in range(20):
        report(cup_tie, place=Place(gate="A"), text=f"queue {n}")
        report(cup_tie, place=Place(concourse="S-L"), text=f"surge {n}")
    with django_assert_max_num_queries(len(few.captured_queries)):
        entries = loggist.get(url).json()["entries"]
    assert len([e for e in entries if e["kind"] == "report"]) == 42
    folds_forget()  # another process, or this one restarted: the whole log in one read
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert loggist.get(url).json()["entries"] == entries
    # The shared map still places them: Gate F and the south lower concourse serve the away end.
    away = loggist.get(url, {"zone": "away-south-cup"}).json()["entries"]
    places = [e["place"] for e in away if e["kind"] == "report"]
    assert places == ["Gate F (away)"] + ["South lower concourse"] * 20
