from datetime import UTC, datetime

import pytest

from safeground.matches.models import Fixture, FixtureZone
from safeground.matches.selectors import fixtures_visible_to
from safeground.matches.services import FixtureError, fixture_create
from tests import factories

pytestmark = pytest.mark.django_db


# The demo's own season: these two check the story `make run` and the browser tests show.
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


def test_organisations_see_the_fixtures_they_work(match_day) -> None:
    cast = match_day.cast
    # A match at another club's ground, worked by nobody of the cast.
    factories.fixture(factories.ground(factories.organisation(name="Millbrook Town")))

    def visible(username: str) -> set[str]:
        return {str(f) for f in fixtures_visible_to(cast[username])}

    league, cup = "Riverside Athletic v Harbour Town", "Riverside Athletic v Eastport Rovers"
    assert visible("steward") == {league, cup}  # all the home club's
    assert visible("spotter") == {league, cup}  # all shared with their force
    assert visible("liaison") == {cup}  # only the one shared with their club


def test_a_fixture_with_an_unknown_zone_is_refused_and_nothing_written(cast) -> None:
    ground = factories.ground(cast.home)
    home = factories.club(cast.home.name, organisation=cast.home)
    before = Fixture.objects.count()
    with pytest.raises(FixtureError, match="zones: nowhere not at"):
        fixture_create(
            ground=ground,
            home_club=home,
            away_club=factories.club("Harbour Town"),
            competition=factories.competition(),
            kickoff=datetime(2017, 1, 1, 15, tzinfo=UTC),
            zones={"home-north": FixtureZone.Use.HOME, "nowhere": FixtureZone.Use.AWAY},
            shares={cast.police: "police"},
        )
    with pytest.raises(FixtureError, match="cannot play itself"):
        fixture_create(
            ground=ground,
            home_club=home,
            away_club=home,
            competition=factories.competition(),
            kickoff=datetime(2017, 1, 1, 15, tzinfo=UTC),
            zones={},
            shares={},
        )
    assert Fixture.objects.count() == before
