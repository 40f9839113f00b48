"""The admin is where a match's own rules are set: re-entry at the gates."""

import pytest
from django.test import Client
from django.utils import timezone

from safeground.accounts.models import User
from safeground.matches.models import Fixture
from tests import factories

pytestmark = pytest.mark.django_db


def test_the_admin_shows_and_sets_a_matchs_reentry_rule() -> None:
    cup_tie = factories.fixture(stage="Fourth round", away_allocation=2000)
    admin = User.objects.create_superuser("root-admin", "a@example.org", "long-enough-pw")
    client = Client()
    client.force_login(admin)
    listing = client.get("/admin/matches/fixture/").content.decode()
    assert "re-entry" in listing.lower()
    url = f"/admin/matches/fixture/{cup_tie.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="reentry"' in page and "An exit scan lets the ticket in again." in page
    kickoff = timezone.localtime(cup_tie.kickoff)
    form = {
        "ground": cup_tie.ground_id,
        "home_club": cup_tie.home_club_id,
        "away_club": cup_tie.away_club_id,
        "competition": cup_tie.competition_id,
        "stage": cup_tie.stage,
        "kickoff_0": kickoff.date().isoformat(),
        "kickoff_1": kickoff.time().isoformat(),
        "away_allocation": cup_tie.away_allocation,
        "reentry": "on",
    }
    assert client.post(url, form).status_code == 302
    saved = Fixture.objects.get(pk=cup_tie.pk)
    assert saved.reentry and saved.kickoff == cup_tie.kickoff
    del form["reentry"]
    client.post(url, form)
    assert not Fixture.objects.get(pk=cup_tie.pk).reentry
