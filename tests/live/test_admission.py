"""A socket's admission keeps the fixture (its ground and shares) for a few seconds per process
(live/admission.py): a withdrawn share is honoured within that bound; a membership removed, a
user deactivated or a session logged out, at once."""

import time

import pytest
from django.contrib.sessions.models import Session

from safeground.accounts.models import Membership, User
from safeground.live.admission import (
    CLOSE_FORBIDDEN,
    CLOSE_NOT_LOGGED_IN,
    admit,
)
from safeground.live.events import Viewer
from safeground.matches.kept import fixtures_forget
from safeground.matches.models import FixtureShare

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = 0.5  # seconds a fixture is kept in these tests


@pytest.fixture
def kept(settings):
    settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = BOUND
    fixtures_forget()
    yield
    fixtures_forget()


def test_a_withdrawn_share_refuses_new_sockets_within_the_bound(match_day, session_of, kept):
    cup_tie = match_day.cup_tie
    session = session_of("spotter")  # the police force's, through the fixture's share
    assert isinstance(admit(session_key=session, fixture_id=cup_tie.pk), Viewer)

    FixtureShare.objects.filter(fixture=cup_tie, purpose=FixtureShare.Purpose.POLICE).delete()
    withdrawn = time.monotonic()
    # Kept: a socket admitted now still counts the share (this is the bound, stated).
    answers = []
    while (elapsed := time.monotonic() - withdrawn) < BOUND + 0.3:
        answers.append((elapsed, admit(session_key=session, fixture_id=cup_tie.pk)))
        time.sleep(0.05)
    assert all(code == CLOSE_FORBIDDEN for elapsed, code in answers if elapsed > BOUND)
    assert answers[-1][1] == CLOSE_FORBIDDEN


def test_a_removed_membership_refuses_at_once_while_the_fixture_is_kept(
    match_day, session_of, kept
):
    cup_tie = match_day.cup_tie
    session = session_of("loggist")
    assert isinstance(admit(session_key=session, fixture_id=cup_tie.pk), Viewer)
    Membership.objects.filter(user__username="loggist").delete()
    assert admit(session_key=session, fixture_id=cup_tie.pk) == CLOSE_FORBIDDEN


def test_a_deactivated_user_refuses_at_once_while_the_fixture_is_kept(match_day, session_of, kept):
    cup_tie = match_day.cup_tie
    session = session_of("loggist")
    assert isinstance(admit(session_key=session, fixture_id=cup_tie.pk), Viewer)
    User.objects.filter(username="loggist").update(is_active=False)
    assert admit(session_key=session, fixture_id=cup_tie.pk) == CLOSE_NOT_LOGGED_IN


def test_a_logged_out_session_refuses_at_once_while_the_fixture_is_kept(
    match_day, client_for, kept
):
    cup_tie = match_day.cup_tie
    client = client_for("loggist")
    session = str(client.cookies["sessionid"].value)
    assert isinstance(admit(session_key=session, fixture_id=cup_tie.pk), Viewer)
    client.logout()
    assert not Session.objects.filter(session_key=session).exists()
    assert admit(session_key=session, fixture_id=cup_tie.pk) == CLOSE_NOT_LOGGED_IN


def test_a_steward_moved_to_another_post_is_admitted_with_the_new_zones_at_once(
    match_day, session_of, kept
):
    cup_tie = match_day.cup_tie
    from safeground.incidents.posts import steward_post_assign

    steward, safety = User.objects.get(username="steward"), User.objects.get(username="safety")
    session = session_of("steward")
    steward_post_assign(fixture=cup_tie, steward=steward, assigned_by=safety, zone="away-south-cup")
    first = admit(session_key=session, fixture_id=cup_tie.pk)
    steward_post_assign(fixture=cup_tie, steward=steward, assigned_by=safety, zone="home-north")
    moved = admit(session_key=session, fixture_id=cup_tie.pk)
    assert isinstance(first, Viewer) and isinstance(moved, Viewer)
    assert first.zone_ids and moved.zone_ids and first.zone_ids != moved.zone_ids
