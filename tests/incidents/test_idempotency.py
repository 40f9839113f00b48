"""Idempotency keys are their author's own: a retry by the same author stores one entry, a
different report under a key the author already used is a 409, and another user's report with
the same key is stored as theirs (never answered with someone else's entry)."""

import pytest

from safeground.incidents.models import LogEntry
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def day():
    return factories.match_day()


def append(client, fixture, **change):
    body = {"category": "missile", "text": "Coins thrown", "block": "S-L2",
            "idempotency_key": "phone-7f3a"} | change  # fmt: skip
    return client.post(f"/api/fixtures/{fixture.pk}/log", body, content_type="application/json")


def test_a_key_another_user_used_stores_the_report_as_theirs(day) -> None:
    loggist = factories.logged_in(day.cast["loggist"])
    supervisor = factories.logged_in(day.cast["supervisor"])
    theirs = append(loggist, day.cup_tie)
    mine = append(supervisor, day.cup_tie, text="Seats ripped out in S-L2")
    assert theirs.status_code == mine.status_code == 201
    assert mine.json()["id"] != theirs.json()["id"]
    assert mine.json()["text"] == "Seats ripped out in S-L2"
    stored = LogEntry.objects.order_by("seq")
    assert [(e.author.username, e.text) for e in stored] == [
        ("loggist", "Coins thrown"),
        ("supervisor", "Seats ripped out in S-L2"),
    ]


def test_a_retry_by_the_same_author_stores_one_entry(day) -> None:
    loggist = factories.logged_in(day.cast["loggist"])
    first, again = append(loggist, day.cup_tie), append(loggist, day.cup_tie)
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"] and LogEntry.objects.count() == 1


def test_the_same_author_reusing_a_key_for_another_report_gets_a_409(day) -> None:
    loggist = factories.logged_in(day.cast["loggist"])
    first = append(loggist, day.cup_tie)
    other = append(loggist, day.cup_tie, text="Flare lit in S-L2")
    assert other.status_code == 409
    assert other.json() == {
        "code": "idempotency_conflict",
        "field": "idempotency_key",
        "detail": f"already used by you for #{first.json()['seq']} with a different text: "
        "send a new key for a new report",
    }
    assert append(loggist, day.cup_tie, block="S-L3").status_code == 409
    assert LogEntry.objects.count() == 1
    loggist.cookies["django_language"] = "cy"  # the steward's phone, in Welsh
    welsh = append(loggist, day.cup_tie, text="Flare lit in S-L2")
    assert welsh.json() == other.json() | {
        "detail": f"defnyddiwyd gennych eisoes ar gyfer #{first.json()['seq']} gyda text "
        "gwahanol: anfonwch allwedd newydd ar gyfer adroddiad newydd"
    }
