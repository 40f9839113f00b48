from datetime import UTC, datetime

import pytest

from safeground.accounts.models import Organisation
from safeground.matches.models import Club, Competition, Fixture, FixtureZone
from safeground.matches.selectors import fixtures_visible_to
from safeground.matches.services import FixtureError, fixture_create

pytestmark = pytest.mark.django_db


def test_the_demo_season_runs_to_the_cup_tie(demo) -> None:
    fixtures = list(Fixture.objects.order_by("kickoff"))
    assert len(fixtures) == 9
    last = fixtures[-1]
    assert (last.home_club.name, last.away_club.name) == ("West Ham United", "Chelsea")
    assert last.competition.name == "EFL Cup" and last.stage == "Fourth round"
    assert last.kickoff == datetime(2016, 10, 26, 18, 45, tzinfo=UTC)  # 19:45 BST
    assert last.away_allocation == 5000


def test_each_fixture_uses_a_layout_where_every_block_has_one_zone(demo) -> None:
    for fixture in Fixture.objects.all():
        block_ids = [
            member.block_id
            for fz in fixture.zones.select_related("zone")
            for member in fz.zone.members.all()
        ]
        assert len(block_ids) == len(set(block_ids)), f"{fixture}: a block in two zones"
        assert set(block_ids) == set(fixture.ground.blocks.values_list("id", flat=True))
        uses = set(fixture.zones.values_list("use", flat=True))
        assert uses == {"home", "away", "buffer"}


def test_organisations_see_the_fixtures_they_work(demo, login_as) -> None:
    from safeground.accounts.models import User

    def visible(username: str) -> set[str]:
        user = User.objects.get(username=username)
        return {f.away_club.name for f in fixtures_visible_to(user)}

    assert len(visible("steward")) == 9
    assert len(visible("spotter")) == 9
    assert visible("liaison") == {"Chelsea"}


def test_a_fixture_with_an_unknown_zone_is_refused_and_nothing_written(demo) -> None:
    home = Club.objects.get(name="West Ham United")
    before = Fixture.objects.count()
    with pytest.raises(FixtureError, match="zones: nowhere not at"):
        fixture_create(
            ground=demo,
            home_club=home,
            away_club=Club.objects.get(name="Watford"),
            competition=Competition.objects.get(name="Premier League"),
            kickoff=datetime(2017, 1, 1, 15, tzinfo=UTC),
            zones={"home-north": FixtureZone.Use.HOME, "nowhere": FixtureZone.Use.AWAY},
            shares={Organisation.objects.get(name="Metropolitan Police Service"): "police"},
        )
    with pytest.raises(FixtureError, match="cannot play itself"):
        fixture_create(
            ground=demo,
            home_club=home,
            away_club=home,
            competition=Competition.objects.get(name="Premier League"),
            kickoff=datetime(2017, 1, 1, 15, tzinfo=UTC),
            zones={},
            shares={},
        )
    assert Fixture.objects.count() == before
