"""A report to the log reads the match it is for from the process's kept copy (matches/kept.py):
no fixture or share query per report at crisis load, and a withdrawn share still refused once
the bound has passed, by the same visibility rule."""

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from safeground.matches.kept import fixtures_forget
from safeground.matches.models import FixtureShare

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = 0.5  # seconds the fixture is kept in these tests


@pytest.fixture
def kept(settings, no_second_factor):
    settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = BOUND
    fixtures_forget()
    yield
    fixtures_forget()


def report(client, fixture, text="Coins thrown"):
    body = {"category": "missile", "text": text, "block": "S-L2"}
    return client.post(f"/api/fixtures/{fixture.pk}/log", body, content_type="application/json")


def test_a_second_report_reads_neither_the_fixture_nor_its_shares(match_day, client_for, kept):
    loggist = client_for("loggist")
    assert report(loggist, match_day.cup_tie).status_code == 201
    with CaptureQueriesContext(connection) as queries:
        assert report(loggist, match_day.cup_tie, "Seat thrown").status_code == 201
    read = " ".join(query["sql"] for query in queries.captured_queries)
    assert '"matches_fixtureshare"' not in read
    assert 'FROM "matches_fixture"' not in read


def test_a_withdrawn_share_refuses_reports_once_the_bound_has_passed(match_day, client_for, kept):
    cup_tie = match_day.cup_tie
    police = client_for("police")  # the force's commander, through the fixture's share
    assert report(police, cup_tie).status_code == 201

    FixtureShare.objects.filter(fixture=cup_tie, purpose=FixtureShare.Purpose.POLICE).delete()
    withdrawn = time.monotonic()
    answers = []
    while (elapsed := time.monotonic() - withdrawn) < BOUND + 0.3:
        answers.append((elapsed, report(police, cup_tie, f"at {elapsed:.2f}").status_code))
        time.sleep(0.05)
    assert all(status == 403 for elapsed, status in answers if elapsed > BOUND)
    assert answers[-1][1] == 403


def test_no_such_match_is_a_404_and_nothing_is_kept_of_it(match_day, client_for, kept):
    loggist = client_for("loggist")
    missing = type("Missing", (), {"pk": 999_999})()
    assert report(loggist, missing).status_code == 404
